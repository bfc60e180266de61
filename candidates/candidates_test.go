package candidates

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// mixedDomain has two continuous coordinates, two discrete ones (a 5-level
// grid and a 4-level one), a 3-way categorical (group 0) and a 2-way one
// (group 5) with their coordinates interleaved with the others.
func mixedDomain() Domain {
	g0 := OneHot(0, 3)
	g5 := OneHot(5, 2)
	return Domain{Coords: []Coord{
		Continuous(),
		g0[0],
		Discrete(0, 0.25, 0.5, 0.75, 1),
		g0[1],
		g5[0],
		Continuous(),
		Discrete(0, 1.0/3, 2.0/3, 1),
		g0[2],
		g5[1],
	}}
}

func TestTrustRegionPointsAreValid(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	rng := rand.New(rand.NewPCG(1, 2))
	center := make([]float64, dom.Dim())
	dst := mat.NewDense(50, dom.Dim(), nil)
	weights := []float64{0.5, 1, 2, 1, 1, 1.5, 0.7, 1, 1}
	for trial := range 200 { // 10,000 points
		dom.Random(center, rng)
		radius := math.Exp(math.Log(1e-3) + rng.Float64()*math.Log(1e3))
		opt := TROptions{}
		if trial%2 == 1 {
			opt.Weights = weights
		}
		if err := TrustRegion(dst, dom, center, radius, rng, opt); err != nil {
			t.Fatal(err)
		}
		for r := range 50 {
			x := dst.RawRowView(r)
			if err := dom.Check(x); err != nil {
				t.Fatalf("trial %d row %d: %v (%v)", trial, r, err, x)
			}
			for _, i := range []int{0, 5} {
				if h := radius * weight(opt.Weights, i); math.Abs(x[i]-center[i]) > h {
					t.Fatalf("continuous coordinate %d moved %v > half-width %v", i, math.Abs(x[i]-center[i]), h)
				}
			}
		}
	}
}

// With FlipProb < 0 and a radius far below the level spacing the discrete
// and categorical coordinates never move; the continuous ones always stay
// within the radius, and with 2 continuous coordinates and PerturbProb 1
// both move in every row.
func TestTrustRegionSmallRadiusKeepsDiscrete(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	rng := rand.New(rand.NewPCG(3, 4))
	center := make([]float64, dom.Dim())
	dst := mat.NewDense(100, dom.Dim(), nil)
	for range 20 {
		dom.Random(center, rng)
		if err := TrustRegion(dst, dom, center, 0.01, rng, TROptions{FlipProb: -1}); err != nil {
			t.Fatal(err)
		}
		for r := range 100 {
			x := dst.RawRowView(r)
			for i, c := range dom.Coords {
				if c.Levels != nil || c.Group >= 0 {
					if x[i] != center[i] {
						t.Fatalf("coordinate %d moved from %v to %v", i, center[i], x[i])
					}
				} else if x[i] == center[i] || math.Abs(x[i]-center[i]) > 0.01 {
					t.Fatalf("continuous coordinate %d: %v from center %v", i, x[i], center[i])
				}
			}
		}
	}
}

// Flip and perturbation frequencies match their probabilities (binomial
// tolerances of 4 standard deviations).
func TestTrustRegionFrequencies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	// 40 continuous coordinates and one 4-way categorical.
	coords := make([]Coord, 40)
	for i := range coords {
		coords[i] = Continuous()
	}
	dom := Domain{Coords: append(coords, OneHot(2, 4)...)}
	center := make([]float64, dom.Dim())
	dom.Random(center, rng)
	const rows = 4000
	dst := mat.NewDense(rows, dom.Dim(), nil)
	if err := TrustRegion(dst, dom, center, 0.1, rng, TROptions{FlipProb: 0.2}); err != nil {
		t.Fatal(err)
	}
	var moved, flipped float64
	for r := range rows {
		x := dst.RawRowView(r)
		for i := range 40 {
			if x[i] != center[i] {
				moved++
			}
		}
		if !slices.Equal(x[40:], center[40:]) {
			flipped++
		}
	}
	// TuRBO's default: 20/40 = 0.5 per coordinate.
	if p, sd := moved/(40*rows), math.Sqrt(0.25/(40*rows)); math.Abs(p-0.5) > 4*sd {
		t.Errorf("perturbed fraction %v, want 0.5", p)
	}
	if p, sd := flipped/rows, math.Sqrt(0.16/rows); math.Abs(p-0.2) > 4*sd {
		t.Errorf("flip fraction %v, want 0.2", p)
	}
}

func TestTrustRegionErrors(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	rng := rand.New(rand.NewPCG(1, 1))
	good := make([]float64, dom.Dim())
	dom.Random(good, rng)
	bad := slices.Clone(good)
	bad[2] = 0.3 // not a level
	dst := mat.NewDense(2, dom.Dim(), nil)
	tests := []struct {
		name   string
		dst    *mat.Dense
		dom    Domain
		center []float64
		radius float64
		opt    TROptions
		want   string
	}{
		{"center level", dst, dom, bad, 0.1, TROptions{}, "not one of its levels"},
		{"center length", dst, dom, good[:3], 0.1, TROptions{}, "3 coordinates"},
		{"radius", dst, dom, good, 0, TROptions{}, "radius"},
		{"nan radius", dst, dom, good, math.NaN(), TROptions{}, "radius"},
		{"dst", mat.NewDense(2, 3, nil), dom, good, 0.1, TROptions{}, "3 columns"},
		{"nil dst", nil, dom, good, 0.1, TROptions{}, "nil destination"},
		{"weights", dst, dom, good, 0.1, TROptions{Weights: []float64{1}}, "1 weights"},
		{"weight value", dst, dom, good, 0.1, TROptions{Weights: make([]float64, 9)}, "weight 0"},
		{"perturb prob", dst, dom, good, 0.1, TROptions{PerturbProb: 2}, "PerturbProb"},
		{"domain", dst, Domain{}, good, 0.1, TROptions{}, "empty domain"},
	}
	for _, tc := range tests {
		err := TrustRegion(tc.dst, tc.dom, tc.center, tc.radius, rng, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestDomainValidateAndCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		dom  Domain
		want string
	}{
		{"ok", mixedDomain(), ""},
		{"empty", Domain{}, "empty"},
		{"group levels", Domain{Coords: []Coord{{Group: 1, Levels: []float64{0, 1}}, {Group: 1}}}, "must not have levels"},
		{"lone group", Domain{Coords: []Coord{{}, Continuous()}}, "at least 2"},
		{"bad group", Domain{Coords: []Coord{{Group: -2}}}, "use -1"},
		{"unsorted", Domain{Coords: []Coord{Discrete(0.5, 0.2)}}, "increasing"},
		{"duplicate", Domain{Coords: []Coord{Discrete(0.5, 0.5)}}, "increasing"},
		{"outside", Domain{Coords: []Coord{Discrete(0, 1.5)}}, "outside"},
		{"empty levels", Domain{Coords: []Coord{{Levels: []float64{}, Group: -1}}}, "empty level"},
	}
	for _, tc := range tests {
		err := tc.dom.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	dom := mixedDomain()
	points := []struct {
		x    []float64
		want string
	}{
		{[]float64{0.3, 1, 0.25, 0, 0, 1, 1, 0, 1}, ""},
		{[]float64{1.3, 1, 0.25, 0, 0, 1, 1, 0, 1}, "outside"},
		{[]float64{0.3, 1, 0.3, 0, 0, 1, 1, 0, 1}, "levels"},
		{[]float64{0.3, 1, 0.25, 1, 0, 1, 1, 0, 1}, "group 0 has 2"},
		{[]float64{0.3, 0, 0.25, 0, 0, 1, 1, 0, 0}, "has 0"},
		{[]float64{0.3, 0.5, 0.25, 0, 0, 1, 1, 0.5, 1}, "not 0 or 1"},
		{[]float64{0.3}, "1 coordinates"},
	}
	for _, p := range points {
		err := dom.Check(p.x)
		if (p.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), p.want)) {
			t.Errorf("%v: error %v, want %q", p.x, err, p.want)
		}
	}
}

// Snap turns arbitrary points into valid ones and leaves valid ones alone;
// Random draws valid points.
func TestSnapAndRandom(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, dom.Dim())
	for trial := range 2000 {
		for i := range x {
			x[i] = -1 + 3*rng.Float64()
		}
		if trial%10 == 0 {
			x[trial%dom.Dim()] = math.NaN()
		}
		dom.Snap(x)
		if err := dom.Check(x); err != nil {
			t.Fatalf("snapped point invalid: %v", err)
		}
		dom.Random(x, rng)
		if err := dom.Check(x); err != nil {
			t.Fatalf("random point invalid: %v", err)
		}
		y := slices.Clone(x)
		dom.Snap(y)
		if !slices.Equal(x, y) {
			t.Fatalf("Snap moved a valid point %v to %v", x, y)
		}
	}
	// Nearest level, lower on a tie; the group's largest entry wins.
	y := []float64{0.1, 0.2, 0.375, 0.9, 0.4, 0.5, 0.5, 0.3, 0.6}
	dom.Snap(y)
	want := []float64{0.1, 0, 0.25, 1, 0, 0.5, 2.0 / 3, 0, 1}
	if !slices.Equal(y, want) {
		t.Errorf("Snap = %v, want %v", y, want)
	}
}

func TestARDWeights(t *testing.T) {
	t.Parallel()
	w := ARDWeights([]float64{0.1, 0.4, 1.6})
	// geometric mean 0.4
	want := []float64{0.25, 1, 4}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-14 {
			t.Errorf("weights %v, want %v", w, want)
		}
	}
}

func TestRegionSchedule(t *testing.T) {
	t.Parallel()
	r := NewRegion(2)
	if r.Radius != 0.4 || r.FailureTol != 4 || r.SuccessTol != 3 || NewRegion(10).FailureTol != 10 {
		t.Fatalf("defaults %+v", r)
	}
	steps := []struct {
		improved  bool
		radius    float64
		restarted bool
	}{
		{true, 0.4, false}, {true, 0.4, false}, {true, 0.8, false}, // 3 successes: double
		{true, 0.8, false}, {true, 0.8, false}, {true, 0.8, false}, // capped at Max
		{false, 0.8, false}, {true, 0.8, false}, // a success resets the failure run
		{false, 0.8, false}, {false, 0.8, false}, {false, 0.8, false}, {false, 0.4, false}, // 4 failures: halve
	}
	for i, s := range steps {
		if got := r.Update(s.improved); got != s.restarted || r.Radius != s.radius {
			t.Fatalf("step %d: radius %v restarted %v, want %v %v", i, r.Radius, got, s.radius, s.restarted)
		}
	}
	// 0.4 halves 6 times to 0.4/64 = 0.00625 >= 0.5^8; the 7th halving
	// (0.003125 < 0.00390625) restarts at Init.
	for h := range 7 {
		var restarted bool
		for range 4 {
			restarted = r.Update(false)
		}
		if (h == 6) != restarted {
			t.Fatalf("halving %d: restarted %v, radius %v", h, restarted, r.Radius)
		}
	}
	if r.Radius != 0.4 || r.Restarts != 1 || r.Failures != 0 || r.Successes != 0 {
		t.Errorf("after restart %+v", r)
	}
}

// negBranin is minus the Branin function on the unit square (x1 = -5 + 15
// u1, x2 = 15 u2); its maxima, -0.397887, are at x1 = -pi, pi, 3 pi with
// x2 = 5.1/(4 pi^2) x1^2 - 5/pi x1 + 6, where both terms of the gradient
// vanish.
func negBranin(u []float64) float64 {
	x1, x2 := -5+15*u[0], 15*u[1]
	b, c := 5.1/(4*math.Pi*math.Pi), 5/math.Pi
	g := x2 - b*x1*x1 + c*x1 - 6
	return -(g*g + 10*(1-1/(8*math.Pi))*math.Cos(x1) + 10)
}

func TestPolishFindsKnownMaxima(t *testing.T) {
	t.Parallel()
	b, c := 5.1/(4*math.Pi*math.Pi), 5/math.Pi
	var maxima [][]float64
	for _, x1 := range []float64{-math.Pi, math.Pi, 3 * math.Pi} {
		maxima = append(maxima, []float64{(x1 + 5) / 15, (b*x1*x1 - c*x1 + 6) / 15})
	}
	dom := Domain{Coords: []Coord{Continuous(), Continuous()}}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, m := range maxima {
		for range 5 {
			x0 := []float64{m[0] + 0.06*(rng.Float64()-0.5), m[1] + 0.06*(rng.Float64()-0.5)}
			x, v, err := Polish(negBranin, x0, dom, PolishOptions{MaxEvals: 400})
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Hypot(x[0]-m[0], x[1]-m[1]); d > 1e-6 {
				t.Errorf("from %v: reached %v (f %v), maximum %v at distance %v", x0, x, v, m, d)
			}
			if math.Abs(v+0.39788735772973816) > 1e-9 {
				t.Errorf("maximum value %v", v)
			}
		}
	}
}

// A quadratic over a mixed domain: the continuous coordinates reach their
// maximizer (one of them on the face x = 1), the discrete and categorical
// ones never move, and the budget holds.
func TestPolishMixedQuadratic(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	// Maximum at x0 = 0.3, x5 = 1 (unconstrained 1.2, outside the box),
	// with a coupling to a discrete coordinate.
	calls := 0
	f := func(x []float64) float64 {
		calls++
		if err := dom.Check(x); err != nil {
			t.Fatalf("Polish evaluated an invalid point: %v", err)
		}
		a, b := x[0]-0.3+0.1*x[2], x[5]-1.2
		return -(3*a*a + a*b + 2*b*b) + x[6]
	}
	rng := rand.New(rand.NewPCG(2, 3))
	x0 := make([]float64, dom.Dim())
	for trial := range 20 {
		dom.Random(x0, rng)
		calls = 0
		opt := PolishOptions{MaxEvals: 300}
		if trial%2 == 1 {
			// Exact gradient.
			opt.Grad = func(g, x []float64) {
				a, b := x[0]-0.3+0.1*x[2], x[5]-1.2
				g[0] = -(6*a + b)
				g[5] = -(a + 4*b)
			}
		}
		x, v, err := Polish(f, x0, dom, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range dom.Coords {
			if (c.Levels != nil || c.Group >= 0) && x[i] != x0[i] {
				t.Fatalf("coordinate %d moved from %v to %v", i, x0[i], x[i])
			}
		}
		// With x5 = 1 (b = -0.2): maximize over a: 6a - 0.2 = 0.
		wantX0 := 0.2/6 + 0.3 - 0.1*x0[2]
		if math.Abs(x[0]-wantX0) > 1e-6 || x[5] != 1 {
			t.Errorf("trial %d: reached (%v, %v), want (%v, 1)", trial, x[0], x[5], wantX0)
		}
		if math.Abs(v-f(x)) > 0 {
			t.Errorf("returned value %v, f there %v", v, f(x))
		}
		// One L-BFGS iteration past the budget at most (a line search of a
		// few steps, each 1 + 2*2 calls).
		if calls > 300+40 {
			t.Errorf("trial %d: %d calls for a budget of 300", trial, calls)
		}
	}
}

func TestPolishEdgeCases(t *testing.T) {
	t.Parallel()
	// No continuous coordinate: x0 comes back.
	dom := Domain{Coords: []Coord{Discrete(0, 1), Discrete(0, 0.5, 1)}}
	x, v, err := Polish(func(x []float64) float64 { return x[0] + x[1] }, []float64{0, 0.5}, dom, PolishOptions{})
	if err != nil || !slices.Equal(x, []float64{0, 0.5}) || v != 0.5 {
		t.Errorf("discrete-only: %v %v %v", x, v, err)
	}
	// A tiny budget is respected and never returns a worse point.
	cont := Domain{Coords: []Coord{Continuous(), Continuous(), Continuous()}}
	calls := 0
	f := func(x []float64) float64 { calls++; return -(x[0]-0.5)*(x[0]-0.5) - x[1]*x[1] - x[2] }
	x, v, err = Polish(f, []float64{0.9, 0.9, 0.9}, cont, PolishOptions{MaxEvals: 10})
	if err != nil || v < f([]float64{0.9, 0.9, 0.9}) || calls > 10+30 {
		t.Errorf("budget: %v %v %v after %d calls", x, v, err, calls)
	}
	if _, _, err := Polish(nil, []float64{0.5}, Domain{Coords: []Coord{Continuous()}}, PolishOptions{}); err == nil {
		t.Error("nil f accepted")
	}
	if _, _, err := Polish(f, []float64{1.5, 0, 0}, cont, PolishOptions{}); err == nil || !strings.Contains(err.Error(), "start") {
		t.Errorf("invalid start: %v", err)
	}
	if _, _, err := Polish(f, []float64{0.5, 0, 0}, cont, PolishOptions{MaxEvals: -1}); err == nil {
		t.Error("negative budget accepted")
	}
}

func BenchmarkTrustRegion(b *testing.B) {
	dom := mixedDomain()
	rng := rand.New(rand.NewPCG(1, 1))
	center := make([]float64, dom.Dim())
	dom.Random(center, rng)
	dst := mat.NewDense(256, dom.Dim(), nil)
	b.ReportAllocs()
	for range b.N {
		if err := TrustRegion(dst, dom, center, 0.1, rng, TROptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUCB(t *testing.T) {
	t.Parallel()
	f := UCB(func(x []float64) (float64, float64, error) {
		if x[0] < 0 {
			return 0, 0, errors.New("bad point")
		}
		return x[0], 4, nil
	}, 1.5)
	if got := f([]float64{2}); got != 5 {
		t.Errorf("UCB = %v, want 2 + 1.5*2", got)
	}
	if got := f([]float64{-1}); !math.IsNaN(got) {
		t.Errorf("UCB on an error = %v, want NaN", got)
	}
}

// TestPolishBatchSameResult: with Batch, the finite-difference gradient's
// points are evaluated in one call, and Polish returns the same point and
// value, bit for bit, after the same number of evaluations, on a mixed
// domain (points at the box's faces included) and on Branin.
func TestPolishBatchSameResult(t *testing.T) {
	t.Parallel()
	dom := mixedDomain()
	quad := func(x []float64) float64 {
		a, b := x[0]-0.3+0.1*x[2], x[5]-1.2
		return -(3*a*a + a*b + 2*b*b) + x[6] + math.Sin(7*x[0])
	}
	for _, tc := range []struct {
		name string
		f    func([]float64) float64
		dom  Domain
	}{
		{"mixed", quad, dom},
		{"branin", negBranin, Domain{Coords: []Coord{Continuous(), Continuous()}}},
	} {
		rng := rand.New(rand.NewPCG(4, 5))
		x0 := make([]float64, tc.dom.Dim())
		for trial := range 10 {
			tc.dom.Random(x0, rng)
			if trial == 0 {
				for _, i := range tc.dom.ContinuousIndices() {
					x0[i] = 1 // every continuous coordinate on a face
				}
			}
			var one, batched, batches int
			f1 := func(x []float64) float64 { one++; return tc.f(x) }
			f2 := func(x []float64) float64 { batched++; return tc.f(x) }
			batch := func(xs [][]float64, out []float64) {
				batches++
				for i, x := range xs {
					out[i] = f2(x)
				}
			}
			x, v, err := Polish(f1, x0, tc.dom, PolishOptions{MaxEvals: 200})
			if err != nil {
				t.Fatal(err)
			}
			xb, vb, err := Polish(f2, x0, tc.dom, PolishOptions{MaxEvals: 200, Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(v) != math.Float64bits(vb) || !slices.Equal(x, xb) || one != batched {
				t.Fatalf("%s, start %v: %v at %v after %d evaluations, with Batch %v at %v after %d", tc.name, x0, v, x, one, vb, xb, batched)
			}
			if batches == 0 {
				t.Fatalf("%s: Batch was never called", tc.name)
			}
		}
	}
}
