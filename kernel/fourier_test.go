package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// fixedPairs returns n pairs of points of dimension d in [-1, 1]^d.
func fixedPairs(seed uint64, n, d int) (xs, ys [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	for range n {
		x, y := make([]float64, d), make([]float64, d)
		for i := range d {
			x[i] = 2*rng.Float64() - 1
			y[i] = 2*rng.Float64() - 1
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

// fourierErrors returns the RMS and maximal |phi(x).phi(y) - k(x, y)| over
// the pairs.
func fourierErrors(t *testing.T, k SpectralSampler, d, D int, seed uint64, xs, ys [][]float64) (rms, maxErr float64) {
	t.Helper()
	rf, err := NewRandomFourier(k, d, D, seed)
	if err != nil {
		t.Fatal(err)
	}
	px, py := make([]float64, D), make([]float64, D)
	for p := range xs {
		rf.Map(px, xs[p])
		rf.Map(py, ys[p])
		e := math.Abs(dot(px, py) - k.Eval(xs[p], ys[p]))
		rms += e * e
		maxErr = math.Max(maxErr, e)
	}
	return math.Sqrt(rms / float64(len(xs))), maxErr
}

func TestRandomFourierMonteCarloRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    SpectralSampler
		d    int
	}{
		{"RBF", RBF{LengthScale: 0.9}, 3},
		{"RBF/var", RBF{LengthScale: 1.5, Variance: 2}, 6},
		{"Matern0.5", Matern{Nu: 0.5, LengthScale: 1}, 2},
		{"Matern1.5", Matern{Nu: 1.5, LengthScale: 1.2}, 3},
		{"Matern2.5", Matern{Nu: 2.5, LengthScale: 0.8, Variance: 0.5}, 4},
	}
	sizes := []int{100, 1600, 25600}
	const seeds = 3
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			xs, ys := fixedPairs(uint64(ti), 40, tc.d)
			scaled := make([]float64, len(sizes))
			for si, D := range sizes {
				var rms, maxErr float64
				for s := range seeds {
					r, m := fourierErrors(t, tc.k, tc.d, D, uint64(1000*ti+s), xs, ys)
					rms += r * r / seeds
					maxErr = math.Max(maxErr, m)
				}
				rms = math.Sqrt(rms)
				scaled[si] = rms * math.Sqrt(float64(D))
				// The variance of one feature product is at most 2 k(0)^2,
				// so the error is O(k(0) sqrt(2/D)) with a generous factor.
				if limit := 6 * tc.k.Scale() * math.Sqrt(2/float64(D)); maxErr > limit {
					t.Errorf("D = %d: max error %v > %v", D, maxErr, limit)
				}
				t.Logf("D = %5d: RMS error %.3e, max %.3e, RMS*sqrt(D) = %.3f", D, rms, maxErr, scaled[si])
			}
			for si := 1; si < len(sizes); si++ {
				if r := scaled[si] / scaled[0]; r < 0.3 || r > 3 {
					t.Errorf("RMS*sqrt(D) at D = %d is %.3g x its value at D = %d, want within [0.3, 3]", sizes[si], r, sizes[0])
				}
			}
		})
	}
}

func TestRandomFourierUnbiased(t *testing.T) {
	t.Parallel()
	// The average of phi(x).phi(y) over many independent seeds converges
	// to k(x, y): the features are unbiased, including the sqrt(2 s/D)
	// normalisation and the phase b ~ U[0, 2 pi).
	k := Matern{Nu: 1.5, LengthScale: 0.7, Variance: 1.5}
	x, y := []float64{0.3, -0.2}, []float64{-0.1, 0.4}
	const reps, D = 2000, 16
	px, py := make([]float64, D), make([]float64, D)
	var mean, m2 float64
	for s := range reps {
		rf, err := NewRandomFourier(k, 2, D, uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		rf.Map(px, x)
		rf.Map(py, y)
		v := dot(px, py)
		mean += v / reps
		m2 += v * v / reps
	}
	se := math.Sqrt((m2 - mean*mean) / reps)
	if want := k.Eval(x, y); math.Abs(mean-want) > 4*se {
		t.Errorf("mean phi(x).phi(y) = %v +- %v, k(x, y) = %v", mean, se, want)
	}
}

func TestFourierFeatureRegeneration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    SpectralSampler
		d, D int
		seed uint64
	}{
		{"RBF", RBF{LengthScale: 0.5}, 3, 200, 42},
		{"Matern0.5", Matern{Nu: 0.5, LengthScale: 2}, 1, 50, 0},
		{"Matern2.5", Matern{Nu: 2.5, LengthScale: 1, Variance: 4}, 7, 64, math.MaxUint64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rf, err := NewRandomFourier(tc.k, tc.d, tc.D, tc.seed)
			if err != nil {
				t.Fatal(err)
			}
			if rf.Dim() != tc.D || rf.InputDim() != tc.d || rf.Seed() != tc.seed {
				t.Fatalf("Dim, InputDim, Seed = %d, %d, %d", rf.Dim(), rf.InputDim(), rf.Seed())
			}
			gen, err := NewFourierGenerator(tc.k, tc.seed)
			if err != nil {
				t.Fatal(err)
			}
			stored, regen, regen2 := make([]float64, tc.d), make([]float64, tc.d), make([]float64, tc.d)
			// Regenerate in reverse order: features are random access.
			for j := tc.D - 1; j >= 0; j-- {
				b := rf.Frequency(j, stored)
				b1 := FourierFeature(tc.k, tc.seed, j, regen)
				b2 := gen.Feature(j, regen2)
				if math.Float64bits(b) != math.Float64bits(b1) || math.Float64bits(b) != math.Float64bits(b2) {
					t.Fatalf("feature %d: phase %v, regenerated %v, %v", j, b, b1, b2)
				}
				if b < 0 || b >= 2*math.Pi {
					t.Fatalf("feature %d: phase %v outside [0, 2 pi)", j, b)
				}
				for i := range stored {
					if math.Float64bits(stored[i]) != math.Float64bits(regen[i]) ||
						math.Float64bits(stored[i]) != math.Float64bits(regen2[i]) {
						t.Fatalf("feature %d: omega %v, regenerated %v, %v", j, stored, regen, regen2)
					}
				}
			}
			// A smaller map with the same seed is a prefix of the larger one,
			// and its features are the larger map's rescaled by sqrt(D/D').
			small, err := NewRandomFourier(tc.k, tc.d, tc.D/2, tc.seed)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, tc.d)
			for i := range x {
				x[i] = 0.1 * float64(i+1)
			}
			full, half := make([]float64, tc.D), make([]float64, tc.D/2)
			rf.Map(full, x)
			small.Map(half, x)
			r := math.Sqrt(float64(tc.D) / float64(tc.D/2))
			for j := range half {
				if math.Abs(half[j]-r*full[j]) > 1e-14*math.Sqrt(tc.k.Scale()) {
					t.Fatalf("feature %d: %v != %v * %v", j, half[j], r, full[j])
				}
			}
			// Map is phi_j = sqrt(2 s/D) cos(omega_j . x + b_j).
			for j := range full {
				b := gen.Feature(j, regen)
				want := math.Sqrt(2*tc.k.Scale()/float64(tc.D)) * math.Cos(dot(regen, x)+b)
				if math.Abs(full[j]-want) > 1e-14 {
					t.Fatalf("phi_%d(x) = %v, want %v", j, full[j], want)
				}
			}
		})
	}
}

func TestFourierSeedsDiffer(t *testing.T) {
	t.Parallel()
	k := RBF{LengthScale: 1}
	a, b := make([]float64, 4), make([]float64, 4)
	ba := FourierFeature(k, 1, 0, a)
	bb := FourierFeature(k, 2, 0, b)
	bc := FourierFeature(k, 1, 1, b)
	if ba == bb || ba == bc {
		t.Errorf("phases of different (seed, j) coincide: %v %v %v", ba, bb, bc)
	}
}

func TestNewRandomFourierErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		k       SpectralSampler
		d, D    int
		wantErr string
	}{
		{"nil kernel", nil, 2, 10, "nil"},
		{"invalid RBF", RBF{LengthScale: -1}, 2, 10, "length scale"},
		{"invalid Matern", Matern{Nu: 1, LengthScale: 1}, 2, 10, "nu"},
		{"zero scale", badScale{RBF{LengthScale: 1}}, 2, 10, "scale"},
		{"zero dimension", RBF{LengthScale: 1}, 0, 10, "input dimension"},
		{"zero features", RBF{LengthScale: 1}, 2, 0, "feature count"},
		{"negative features", RBF{LengthScale: 1}, 2, -5, "feature count"},
		{"too many", RBF{LengthScale: 1}, 1 << 20, 1 << 20, "cap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rf, err := NewRandomFourier(tc.k, tc.d, tc.D, 1)
			if err == nil || rf != nil {
				t.Fatalf("NewRandomFourier = %v, %v, want an error", rf, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
	if _, err := NewFourierGenerator(nil, 1); err == nil {
		t.Error("NewFourierGenerator(nil) did not fail")
	}
}

// badScale is a sampler whose Scale is zero.
type badScale struct{ RBF }

func (badScale) Scale() float64 { return 0 }

func TestRandomFourierPanics(t *testing.T) {
	t.Parallel()
	rf, err := NewRandomFourier(RBF{LengthScale: 1}, 3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []panicCase{
		{"Map x", func() { rf.Map(make([]float64, 8), make([]float64, 2)) }},
		{"Map dst", func() { rf.Map(make([]float64, 7), make([]float64, 3)) }},
		{"Frequency buffer", func() { rf.Frequency(0, make([]float64, 2)) }},
		{"negative j", func() { FourierFeature(RBF{LengthScale: 1}, 1, -1, make([]float64, 2)) }},
		{"empty omega", func() { FourierFeature(RBF{LengthScale: 1}, 1, 0, nil) }},
		{"nil kernel", func() { FourierFeature(nil, 1, 0, make([]float64, 2)) }},
	}
	expectPanics(t, tests)
}

func TestFeatureMapsDoNotAllocate(t *testing.T) {
	rf, err := NewRandomFourier(RBF{LengthScale: 1}, 6, 256, 1)
	if err != nil {
		t.Fatal(err)
	}
	small, err := NewTaylorGaussian(6, 4, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	large, err := NewTaylorGaussian(70, 2, 3) // d*M above the stack table
	if err != nil {
		t.Fatal(err)
	}
	gen, err := NewFourierGenerator(Matern{Nu: 1.5, LengthScale: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	omega := make([]float64, 6)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"RandomFourier.Map", mapper(rf)},
		{"TaylorGaussian.Map", mapper(small)},
		{"TaylorGaussian.Map large", mapper(large)},
		{"FourierGenerator.Feature", func() { gen.Feature(17, omega) }},
	} {
		if a := testing.AllocsPerRun(100, tc.f); a != 0 {
			t.Errorf("%s allocates %v times per call", tc.name, a)
		}
	}
}

func mapper(m FeatureMap) func() {
	dst, x := make([]float64, m.Dim()), make([]float64, m.InputDim())
	for i := range x {
		x[i] = 0.1 * float64(i%7)
	}
	return func() { m.Map(dst, x) }
}
