package hyper

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

func unitPoints(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, rng.Float64())
		}
	}
	return x
}

// samplePrior draws y = f(x) + eps with f ~ GP(0, p.Kernel()) and
// eps ~ N(0, p.NoiseVariance).
func samplePrior(t testing.TB, rng *rand.Rand, x *mat.Dense, p Params) []float64 {
	n, _ := x.Dims()
	k := mat.NewDense(n, n, nil)
	kernel.Matrix(k, p.Kernel(), x, x)
	for i := range n {
		k.Set(i, i, k.At(i, i)+1e-8*p.SignalVariance)
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, k.RawMatrix().Data)) {
		t.Fatal("prior covariance not factorable")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := mat.NewVecDense(n, nil)
	for i := range n {
		z.SetVec(i, rng.NormFloat64())
	}
	f := mat.NewVecDense(n, nil)
	f.MulVec(&l, z)
	y := make([]float64, n)
	for i := range n {
		y[i] = f.AtVec(i) + math.Sqrt(p.NoiseVariance)*rng.NormFloat64()
	}
	return y
}

// denseLML is the reference: K built by kernel.Matrix, inverse and
// log-determinant by LU (mat.Dense.Inverse, mat.LogDet), no Cholesky.
func denseLML(t *testing.T, x *mat.Dense, y []float64, p Params) float64 {
	n, _ := x.Dims()
	k := mat.NewDense(n, n, nil)
	kernel.Matrix(k, p.Kernel(), x, x)
	for i := range n {
		k.Set(i, i, k.At(i, i)+p.NoiseVariance)
	}
	var inv mat.Dense
	if err := inv.Inverse(k); err != nil {
		t.Fatal(err)
	}
	yv := mat.NewVecDense(n, y)
	logDet, sign := mat.LogDet(k)
	if sign <= 0 {
		t.Fatal("non-positive determinant")
	}
	return -0.5*mat.Inner(yv, &inv, yv) - 0.5*logDet - 0.5*float64(n)*math.Log(2*math.Pi)
}

func TestLogMarginalAgainstDenseAndFiniteDifferences(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, fam := range []Family{RBF, Matern52} {
		for _, p := range []Params{
			{LengthScales: []float64{0.2, 0.5, 1.3}, SignalVariance: 1.2, NoiseVariance: 0.05},
			{LengthScales: []float64{0.08, 2, 0.4}, SignalVariance: 0.4, NoiseVariance: 1e-3},
		} {
			p.Family = fam
			x := unitPoints(rng, 40, 3)
			y := samplePrior(t, rng, x, Params{Family: fam, LengthScales: []float64{0.3, 0.3, 0.3}, SignalVariance: 1, NoiseVariance: 0.01})
			lml, g, err := LogMarginal(x, y, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := denseLML(t, x, y, p); math.Abs(lml-want) > 1e-8*math.Max(1, math.Abs(want)) {
				t.Errorf("%v: LML %v, dense reference %v", fam, lml, want)
			}
			s := logParams(p)
			for j := range s {
				const h = 1e-5
				f := func(dh float64) float64 {
					ss := slices.Clone(s)
					ss[j] += dh
					q := expParams(ss, fam)
					return denseLML(t, x, y, q)
				}
				fd := (f(h) - f(-h)) / (2 * h)
				if math.Abs(g[j]-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("%v param %d: gradient %v, finite difference %v", fam, j, g[j], fd)
				}
			}
		}
	}
}

// The LML agrees with the one gp.Exact keeps (kernel Params.Kernel(), noise
// lambda = NoiseVariance), built by incremental Cholesky updates: the wiring
// a caller uses to turn a fit into a posterior.
func TestLogMarginalMatchesExactGP(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	x := unitPoints(rng, 50, 4)
	p := Params{Family: Matern52, LengthScales: []float64{0.2, 0.4, 0.8, 1.6}, SignalVariance: 1.5, NoiseVariance: 0.02}
	y := samplePrior(t, rng, x, p)
	g, err := gp.NewExact(p.Kernel(), 4, p.NoiseVariance)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := g.Observe(x.RawRowView(i), y[i]); err != nil {
			t.Fatal(err)
		}
	}
	lml, _, err := LogMarginal(x, y, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := g.LogMarginalLikelihood(); math.Abs(lml-want) > 1e-9*math.Abs(want) {
		t.Errorf("LML %v, gp.Exact %v", lml, want)
	}
}

func TestPriorGradient(t *testing.T) {
	t.Parallel()
	o := &objective{d: 2, priors: &DefaultPriors}
	s := []float64{math.Log(0.3), math.Log(2), math.Log(0.5), math.Log(1e-3)}
	g := make([]float64, 4)
	o.logPrior(s, g)
	for j := range s {
		const h = 1e-6
		f := func(dh float64) float64 {
			ss := slices.Clone(s)
			ss[j] += dh
			return o.logPrior(ss, make([]float64, 4))
		}
		fd := (f(h) - f(-h)) / (2 * h)
		if math.Abs(g[j]-fd) > 1e-7 {
			t.Errorf("param %d: prior gradient %v, finite difference %v", j, g[j], fd)
		}
	}
}

// Fitted ARD length scales recover those of GP-prior samples: d = 3,
// length scales (0.1, 0.3, 1.0), n = 250, nearly noise-free, three seeds per
// family. Every fitted length scale is within a factor 1.3 of the truth (the
// long one, whose dimension varies little over the unit box, within 1.5),
// the long one is clearly the longest and the signal variance is within a
// factor 2 of 1 (one draw's sample variance varies).
func TestFitRecoversARDLengthScales(t *testing.T) {
	if testing.Short() {
		t.Skip("fits on 250 points")
	}
	t.Parallel()
	truth := []float64{0.1, 0.3, 1.0}
	for _, fam := range []Family{RBF, Matern52} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%v/seed%d", fam, seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(seed, 77))
				x := unitPoints(rng, 250, 3)
				p := Params{Family: fam, LengthScales: truth, SignalVariance: 1, NoiseVariance: 1e-4}
				y := samplePrior(t, rng, x, p)
				res, err := Fit(x, y, Options{Family: fam, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("seed %d: fitted %v, sf2 %.3g, sn2 %.3g, %d evaluations", seed, res.LengthScales, res.SignalVariance, res.NoiseVariance, res.Evaluations)
				for i, l := range res.LengthScales {
					factor := 1.3
					if i == 2 {
						factor = 1.5
					}
					if r := l / truth[i]; r > factor || r < 1/factor {
						t.Errorf("seed %d: length scale %d fitted %v, truth %v", seed, i, l, truth[i])
					}
				}
				if res.LengthScales[2] < 2*res.LengthScales[1] {
					t.Errorf("seed %d: long length scale %v not clearly above %v", seed, res.LengthScales[2], res.LengthScales[1])
				}
				if r := res.SignalVariance; r > 2 || r < 0.5 {
					t.Errorf("seed %d: signal variance %v, truth 1", seed, r)
				}
				if res.NoiseVariance > 1e-2 {
					t.Errorf("seed %d: noise variance %v on nearly noise-free data", seed, res.NoiseVariance)
				}
				if res.Points != 250 || res.Family != fam {
					t.Errorf("Points %d, Family %v", res.Points, res.Family)
				}
			})
		}
	}
}

// The noise variance of noisy GP-prior samples is recovered within a factor
// 1.3 (sd 0.1 and 0.3 of a unit-variance signal).
func TestFitRecoversNoiseVariance(t *testing.T) {
	if testing.Short() {
		t.Skip("fits on 250 points")
	}
	t.Parallel()
	for i, noise := range []float64{0.01, 0.09} {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		x := unitPoints(rng, 250, 2)
		p := Params{LengthScales: []float64{0.3, 0.5}, SignalVariance: 1, NoiseVariance: noise}
		y := samplePrior(t, rng, x, p)
		res, err := Fit(x, y, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("noise %v: fitted %v, length scales %v", noise, res.NoiseVariance, res.LengthScales)
		if r := res.NoiseVariance / noise; r > 1.3 || r < 1/1.3 {
			t.Errorf("noise variance fitted %v, truth %v", res.NoiseVariance, noise)
		}
	}
}

// A noise-free smooth function is fitted as nearly interpolating (the noise
// variance near its floor 1e-6), and repeated points (a bandit pulls an arm
// many times) with noise give the noise variance back.
func TestFitNoiseFreeAndRepeatedPoints(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	x := unitPoints(rng, 60, 2)
	y := make([]float64, 60)
	for i := range y {
		y[i] = math.Sin(3*x.At(i, 0)) * math.Cos(2*x.At(i, 1))
	}
	res, err := Fit(x, y, Options{Family: Matern52})
	if err != nil {
		t.Fatal(err)
	}
	if res.NoiseVariance > 1e-4 {
		t.Errorf("noise-free data: noise variance %v", res.NoiseVariance)
	}
	// 40 distinct points, each observed 5 times with noise variance 0.04.
	xd := unitPoints(rng, 40, 2)
	xr := mat.NewDense(200, 2, nil)
	yr := make([]float64, 200)
	for i := range 200 {
		xr.SetRow(i, xd.RawRowView(i%40))
		yr[i] = math.Sin(3*xd.At(i%40, 0)) + 0.2*rng.NormFloat64()
	}
	res, err = Fit(xr, yr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.NoiseVariance / 0.04; r > 1.3 || r < 1/1.3 {
		t.Errorf("repeated points: noise variance %v, truth 0.04", res.NoiseVariance)
	}
}

// The fit does not lose: its objective is at least that of every start,
// and the LML it reports is the LML of the parameters it returns.
func TestFitImprovesOnStartAndIsConsistent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	x := unitPoints(rng, 60, 4)
	y := samplePrior(t, rng, x, Params{LengthScales: []float64{0.2, 0.4, 0.6, 3}, SignalVariance: 1, NoiseVariance: 1e-3})
	init := Params{LengthScales: []float64{1, 1, 1, 1}, SignalVariance: 1, NoiseVariance: 0.1}
	for _, fam := range []Family{RBF, Matern52} {
		res, err := Fit(x, y, Options{Family: fam, Init: &init, Starts: 1, NoPrior: true})
		if err != nil {
			t.Fatal(err)
		}
		i := init
		i.Family = fam
		l0, _, _ := LogMarginal(x, y, i)
		l1, g, err := LogMarginal(x, y, res.Params)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l1-res.LogMarginal) > 1e-9*math.Abs(l1) || res.LogPosterior != res.LogMarginal {
			t.Errorf("%v: reported LML %v (posterior %v), recomputed %v", fam, res.LogMarginal, res.LogPosterior, l1)
		}
		if !(l1 > l0+1) {
			t.Errorf("%v: LML %v at the fit, %v at the start", fam, l1, l0)
		}
		// At an interior optimum the gradient vanishes (noise may sit on its
		// lower bound).
		for j, gj := range g[:5] {
			if math.Abs(gj) > 1e-2 {
				t.Errorf("%v: gradient %d = %v at the fitted point", fam, j, gj)
			}
		}
	}
}

func TestFitDeterministicAndSubset(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	x := unitPoints(rng, 400, 2)
	y := make([]float64, 400)
	for i := range y {
		y[i] = math.Sin(6*x.At(i, 0)) + 0.3*x.At(i, 1)
	}
	opt := Options{MaxPoints: 80, Seed: 3, MaxIter: 30}
	a, err := Fit(x, y, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Fit(x, y, opt)
	if !slices.Equal(a.LengthScales, b.LengthScales) || a.NoiseVariance != b.NoiseVariance ||
		a.SignalVariance != b.SignalVariance || a.LogMarginal != b.LogMarginal || a.Evaluations != b.Evaluations {
		t.Errorf("same seed, different results: %+v vs %+v", a, b)
	}
	if a.Points != 80 || a.Starts != 2 {
		t.Errorf("Points %d, Starts %d; want 80, 2", a.Points, a.Starts)
	}
	// The subset holds the MaxPoints/4 best values and is sorted.
	idx := subset(y, 80, rand.New(rand.NewPCG(3, 0x68797072)))
	order := make([]int, 400)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		switch {
		case y[i] > y[j]:
			return -1
		case y[i] < y[j]:
			return 1
		}
		return 0
	})
	for _, top := range order[:20] {
		if !slices.Contains(idx, top) {
			t.Errorf("best point %d not in the subset", top)
		}
	}
	if !slices.IsSorted(idx) || len(idx) != 80 {
		t.Errorf("subset not sorted or wrong size: %d", len(idx))
	}
	c, _ := Fit(x, y, Options{MaxPoints: 80, Seed: 4, MaxIter: 30})
	if c.LogMarginal == a.LogMarginal {
		t.Error("a different seed gave the same subset and fit")
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(3, 2, []float64{0, 0, 0.5, 0.5, 1, 1})
	y := []float64{0, 1, -1}
	nan := mat.NewDense(3, 2, []float64{0, 0, math.NaN(), 0.5, 1, 1})
	bad := Params{LengthScales: []float64{1}, SignalVariance: 1, NoiseVariance: 1}
	neg := Params{LengthScales: []float64{1, -1}, SignalVariance: 1, NoiseVariance: 1}
	tests := []struct {
		name string
		x    *mat.Dense
		y    []float64
		opt  Options
		want string
	}{
		{"nil x", nil, y, Options{}, "nil x"},
		{"one point", mat.NewDense(1, 2, nil), []float64{1}, Options{}, "at least 2 points"},
		{"length mismatch", x, []float64{1, 2}, Options{}, "3 rows but y has 2"},
		{"nan y", x, []float64{0, math.NaN(), 1}, Options{}, "y[1]"},
		{"inf y", x, []float64{0, math.Inf(1), 1}, Options{}, "y[1]"},
		{"nan x", nan, y, Options{}, "x[1][0]"},
		{"family", x, y, Options{Family: 7}, "family"},
		{"init dims", x, y, Options{Init: &bad}, "1 length scales for 2 dimensions"},
		{"init negative", x, y, Options{Init: &neg}, "length scale 1"},
		{"max points", x, y, Options{MaxPoints: 1}, "MaxPoints"},
		{"negative", x, y, Options{Starts: -1}, "negative"},
		{"prior", x, y, Options{Priors: &Priors{LengthScale: Gamma{0, 1}, SignalVariance: Gamma{1, 1}, NoiseVariance: Gamma{1, 1}}}, "Gamma prior"},
		{"bounds", x, y, Options{Bounds: Bounds{NoiseVariance: [2]float64{1, 0.5}}}, "noise-variance bounds"},
	}
	for _, tc := range tests {
		_, err := Fit(tc.x, tc.y, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, _, err := LogMarginal(x, y, bad); err == nil {
		t.Error("LogMarginal accepted wrong dimensions")
	}
}

func TestParamsKernel(t *testing.T) {
	t.Parallel()
	p := Params{Family: Matern52, LengthScales: []float64{0.5, 2}, SignalVariance: 3, NoiseVariance: 1}
	k := p.Kernel()
	p.LengthScales[0] = 100 // the kernel holds a copy
	a, b := []float64{0, 0}, []float64{0.5, 0}
	want := kernel.Matern{Nu: 2.5, LengthScale: 0.5, Variance: 3}.Eval(a, b)
	if got := k.Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Errorf("Matern52 kernel %v, want %v", got, want)
	}
	if _, ok := (Params{LengthScales: []float64{1}, SignalVariance: 1}).Kernel().(kernel.RBFARD); !ok {
		t.Error("RBF family did not give an RBFARD")
	}
}

func benchmarkFit(b *testing.B, n int) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := unitPoints(rng, n, 6)
	y := samplePrior(b, rng, x, Params{LengthScales: []float64{0.2, 0.3, 0.5, 0.7, 1, 2}, SignalVariance: 1, NoiseVariance: 1e-4})
	b.ResetTimer()
	var evals int
	for range b.N {
		res, err := Fit(x, y, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		evals = res.Evaluations
	}
	b.ReportMetric(float64(evals), "evals/op")
}

func BenchmarkFitN100D6(b *testing.B) { benchmarkFit(b, 100) }

// A refit warm-started from the previous fit (one start, Init = last
// result) after 10 more points, as a policy refitting on a schedule does.
func BenchmarkRefitWarmN300D6(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := unitPoints(rng, 310, 6)
	y := samplePrior(b, rng, x, Params{LengthScales: []float64{0.2, 0.3, 0.5, 0.7, 1, 2}, SignalVariance: 1, NoiseVariance: 1e-4})
	prev, err := Fit(mat.DenseCopyOf(x.Slice(0, 300, 0, 6)), y[:300], Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var evals int
	for range b.N {
		res, err := Fit(x, y, Options{Seed: 1, Init: &prev.Params, Starts: 1, Screen: -1, MaxPoints: 300})
		if err != nil {
			b.Fatal(err)
		}
		evals = res.Evaluations
	}
	b.ReportMetric(float64(evals), "evals/op")
}
func BenchmarkFitN300D6(b *testing.B) { benchmarkFit(b, 300) }

// One likelihood-and-gradient evaluation, the unit of a fit's cost.
func BenchmarkLogMarginalN300D6(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := unitPoints(rng, 300, 6)
	y := samplePrior(b, rng, x, Params{LengthScales: []float64{0.2, 0.3, 0.5, 0.7, 1, 2}, SignalVariance: 1, NoiseVariance: 1e-4})
	o := newObjective(x, y, RBF)
	s := logParams(Params{LengthScales: []float64{0.3, 0.3, 0.3, 0.3, 0.3, 0.3}, SignalVariance: 1, NoiseVariance: 1e-2})
	g := make([]float64, 8)
	b.ResetTimer()
	for range b.N {
		o.eval(s, g)
	}
}

// A fit does not depend on the number of threads (gonum's BLAS splits
// large products across goroutines): resume replays exactly on any machine
// configuration with the same floating-point arithmetic.
func TestFitIndependentOfGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	x := unitPoints(rng, 200, 3)
	y := samplePrior(t, rng, x, Params{LengthScales: []float64{0.2, 0.4, 0.8}, SignalVariance: 1, NoiseVariance: 1e-3})
	prev := runtime.GOMAXPROCS(1)
	a, err := Fit(x, y, Options{Seed: 5, MaxIter: 20})
	runtime.GOMAXPROCS(max(prev, 4))
	b, err2 := Fit(x, y, Options{Seed: 5, MaxIter: 20})
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if !slices.Equal(a.LengthScales, b.LengthScales) || a.LogMarginal != b.LogMarginal || a.NoiseVariance != b.NoiseVariance {
		t.Errorf("GOMAXPROCS changed the fit: %+v vs %+v", a, b)
	}
}

func TestStandardize(t *testing.T) {
	t.Parallel()
	z, m, s := Standardize([]float64{1, 2, 3, 4})
	if m != 2.5 || math.Abs(s-math.Sqrt(5.0/3)) > 1e-15 {
		t.Errorf("mean %v sd %v", m, s)
	}
	for i, v := range []float64{1, 2, 3, 4} {
		if math.Abs(z[i]*s+m-v) > 1e-15 {
			t.Errorf("z[%d] = %v does not map back to %v", i, z[i], v)
		}
	}
	z, m, s = Standardize([]float64{3, 3})
	if m != 3 || s != 1 || z[0] != 0 || z[1] != 0 {
		t.Errorf("constant: %v %v %v", z, m, s)
	}
}

// Degenerate but legal inputs give valid parameters inside the bounds, not
// errors or panics.
func TestFitDegenerateInputs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(30, 30))
	x10 := unitPoints(rng, 5, 10)
	x2 := unitPoints(rng, 40, 2)
	dup := mat.NewDense(6, 2, []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1, 0.9, 0.1, 0.9, 0.1, 0.9})
	noise, big, flat := make([]float64, 40), make([]float64, 40), make([]float64, 40)
	for i := range 40 {
		noise[i] = rng.NormFloat64()
		big[i] = 1e3 * math.Sin(5*x2.At(i, 0))
	}
	tests := []struct {
		name string
		x    *mat.Dense
		y    []float64
	}{
		{"d=10 n=5", x10, []float64{1, -1, 0.5, 0, -0.5}},
		{"constant y", x2, flat},
		{"pure noise", x2, noise},
		{"unstandardized", x2, big},
		{"duplicates", dup, []float64{1, 1.1, 0.9, -1, -1, -1.05}},
		{"two points", mat.NewDense(2, 1, []float64{0.2, 0.8}), []float64{-1, 1}},
	}
	for _, tc := range tests {
		for _, fam := range []Family{RBF, Matern52} {
			res, err := Fit(tc.x, tc.y, Options{Family: fam})
			if err != nil {
				t.Errorf("%s %v: %v", tc.name, fam, err)
				continue
			}
			_, d := tc.x.Dims()
			if err := res.Validate(d); err != nil || math.IsNaN(res.LogMarginal) {
				t.Errorf("%s %v: invalid result %+v: %v", tc.name, fam, res, err)
			}
			for _, l := range res.LengthScales {
				if l < 1e-3*(1-1e-9) || l > 1e2*(1+1e-9) {
					t.Errorf("%s %v: length scale %v outside the bounds", tc.name, fam, l)
				}
			}
			if res.NoiseVariance < 1e-6*(1-1e-9) || res.SignalVariance > 1e2*(1+1e-9) {
				t.Errorf("%s %v: variances %v %v outside the bounds", tc.name, fam, res.SignalVariance, res.NoiseVariance)
			}
		}
	}
}

// Above MaxPoints the fit runs on the bounded subset and still recovers the
// ARD length scales: n = 800 GP-prior samples, MaxPoints 250.
func TestFitSubsetRecoversLengthScales(t *testing.T) {
	if testing.Short() {
		t.Skip("samples a GP prior on 800 points")
	}
	t.Parallel()
	truth := []float64{0.1, 0.3, 1.0}
	rng := rand.New(rand.NewPCG(40, 41))
	x := unitPoints(rng, 800, 3)
	y := samplePrior(t, rng, x, Params{LengthScales: truth, SignalVariance: 1, NoiseVariance: 1e-4})
	res, err := Fit(x, y, Options{Seed: 2, MaxPoints: 250})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted %v on %d points", res.LengthScales, res.Points)
	if res.Points != 250 {
		t.Errorf("used %d points", res.Points)
	}
	for i, l := range res.LengthScales {
		if r := l / truth[i]; r > 1.5 || r < 1/1.5 {
			t.Errorf("length scale %d fitted %v, truth %v", i, l, truth[i])
		}
	}
}
