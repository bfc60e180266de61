package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// boxOf returns the unit box of d parameters.
func boxOf(t *testing.T, d int) Space {
	t.Helper()
	lo, hi := make([]float64, d), make([]float64, d)
	for i := range hi {
		hi[i] = 1
	}
	sp, err := Box(nil, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestInitCapV9: version 9's default initial design is min(max(5, 2d),
// 20), version 8's max(5, 2d); an explicit Init is kept.
func TestInitCapV9(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 2, 5, 10, 11, 20, 50, 100} {
		for _, v := range []int{8, 9} {
			cfg := Config{Space: boxOf(t, d), Version: v, Budget: 100}
			if err := cfg.Normalize(); err != nil {
				t.Fatal(err)
			}
			want := 2 * d
			if want < 5 {
				want = 5
			}
			if v == 9 && want > 20 {
				want = 20
			}
			if cfg.Init != want {
				t.Errorf("version %d, d = %d: init %d, want %d", v, d, cfg.Init, want)
			}
		}
	}
	cfg := Config{Space: boxOf(t, 50), Version: 9, Init: 60}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	if cfg.Init != 60 {
		t.Errorf("explicit init 60 at version 9: %d", cfg.Init)
	}
}

// TestTrustCandidatesSparse: the trust-region candidates perturb each
// coordinate with probability p = min(1, 20/d) and at least one, so the
// number moved has mean d p + (1 - p)^d (a binomial count, with the
// all-unmoved case moved to 1): about min(20, d). Checked on 4,000
// candidates within 5 standard errors, and every candidate within the
// region.
func TestTrustCandidatesSparse(t *testing.T) {
	t.Parallel()
	for _, d := range []int{5, 20, 50, 100} {
		cfg := Config{Space: boxOf(t, d), Version: 9, Budget: 100}
		if err := cfg.Normalize(); err != nil {
			t.Fatal(err)
		}
		e, err := New(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := e.ref
		const n, radius = 4000, 0.05
		center := make([]float64, d)
		for i := range center {
			center[i] = 0.5
		}
		m := mat.NewDense(n, d, nil)
		if err := r.trustCandidates(m, center, radius, nil, rand.New(rand.NewPCG(1, uint64(d)))); err != nil {
			t.Fatal(err)
		}
		var sum, sum2 float64
		for i := 0; i < n; i++ {
			moved := 0
			for j, x := range m.RawRowView(i) {
				if math.Abs(x-center[j]) > radius+1e-12 {
					t.Fatalf("d = %d: coordinate %d at %g, outside the region", d, j, x)
				}
				if x != center[j] {
					moved++
				}
			}
			if moved == 0 {
				t.Fatalf("d = %d: candidate %d moves no coordinate", d, i)
			}
			sum += float64(moved)
			sum2 += float64(moved * moved)
		}
		p := math.Min(1, 20/float64(d))
		want := float64(d)*p + math.Pow(1-p, float64(d))
		mean := sum / n
		sd := math.Sqrt(math.Max(sum2/n-mean*mean, 0))
		if math.Abs(mean-want) > 5*sd/math.Sqrt(n)+1e-9 {
			t.Errorf("d = %d: %.3f coordinates moved on average, want %.3f (sd %.3f)", d, mean, want, sd)
		}
		if d > 20 && math.Abs(mean-20) > 0.5 {
			t.Errorf("d = %d: %.3f coordinates moved on average, want about 20", d, mean)
		}
	}
}

// TestHighDimRulesV9: above highDim coordinates version 9 does not polish
// and its trust region halves after highDimFailureTol failures; at or
// below highDim, and in version 8, the asks are version 8's.
func TestHighDimRulesV9(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v, d      int
		polish    bool
		failTol   int
		initTrial int
	}{
		{8, 10, true, 10, 20},
		{9, 10, true, 10, 20},
		{8, 20, true, 20, 40},
		{9, 20, true, 20, 20},
		{8, 30, true, 30, 60},
		{9, 30, false, highDimFailureTol, 20},
		{9, 100, false, highDimFailureTol, 20},
	} {
		s, err := newTestStudy(Config{Space: boxOf(t, c.d), Version: c.v, Budget: 100, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := s.eng.ref
		if got := r.polishes(); got != c.polish {
			t.Errorf("version %d, d = %d: polishes %v, want %v", c.v, c.d, got, c.polish)
		}
		if r.region.FailureTol != c.failTol {
			t.Errorf("version %d, d = %d: failure tolerance %d, want %d", c.v, c.d, r.region.FailureTol, c.failTol)
		}
		if s.cfg.Init != c.initTrial {
			t.Errorf("version %d, d = %d: init %d, want %d", c.v, c.d, s.cfg.Init, c.initTrial)
		}
	}
}
