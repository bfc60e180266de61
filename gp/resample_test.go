package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// Tests of BKB's dictionary resampling (seed 004, Sec. 3 and Theorem 3.1;
// bkb.md "Dictionary resampling"): the law of |S|, the variance band
// sigma^2/alpha <= lambda*sigma~^2 <= alpha*sigma^2, and how often S
// changes under fresh versus incremental (coupled-threshold) resampling.
//
// Scale: Theorem 3.1 states sigma_t^2/alpha <= sigma~_t^2 <= alpha sigma_t^2
// with sigma~^2 from Eq. 4 (1/lambda scale) and sigma^2 from Eq. 2 (natural
// scale). The proof (Lemma C.1) writes both as phi^T A^{-1} phi-type
// quantities on the same 1/lambda (ridge leverage) scale, so the band is
// checked as sigma_exact^2/alpha <= lambda*Variances() <= alpha*sigma_exact^2.

// resampler is Resample or ResampleIncremental.
type resampler struct {
	name string
	f    func(g *DTC, src Uniform, qbar float64) (int, int, error)
}

var resamplers = []resampler{
	{"fresh", (*DTC).Resample},
	{"incremental", (*DTC).ResampleIncremental},
}

// bandAlpha is alpha = (1+eps)/(1-eps) of Theorem 3.1.
func bandAlpha(eps float64) float64 { return (1 + eps) / (1 - eps) }

// theoryQbar is the smallest qbar of Theorem 3.1: 6 alpha log(4T/delta)/eps^2.
func theoryQbar(eps, delta float64, T int) float64 {
	return 6 * bandAlpha(eps) * math.Log(4*float64(T)/delta) / (eps * eps)
}

// ---------------------------------------------------------------------------
// 1. The law of |S| on a fixed state.

// sizeLawFixture is a fixed DTC state: 60 candidates in [0,1]^2, RBF
// l = 0.3, lambda = 0.1, 150 noisy observations of random candidates (2.5
// per arm on average, so counts matter), and every observed row in S,
// which makes the DTC variances equal the exact ones.
type sizeLawFixture struct {
	k      kernel.Kernel
	lambda float64
	cand   *mat.Dense
	arms   []int
	ys     []float64
}

func newSizeLawFixture() *sizeLawFixture {
	rng := rand.New(rand.NewPCG(2019, 4))
	f := &sizeLawFixture{k: kernel.RBF{LengthScale: 0.3}, lambda: 0.1, cand: randPoints(rng, 60, 2)}
	for s := 0; s < 150; s++ {
		i := rng.IntN(60)
		x := f.cand.RawRowView(i)
		f.arms = append(f.arms, i)
		f.ys = append(f.ys, math.Sin(5*x[0])*math.Cos(4*x[1])+0.3*rng.NormFloat64())
	}
	return f
}

// build returns a fresh DTC in the fixture's state.
func (f *sizeLawFixture) build(t testing.TB) *DTC {
	g, err := NewDTC(f.k, 2, f.lambda)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetCandidates(f.cand); err != nil {
		t.Fatal(err)
	}
	// The law is checked on a fixed state with its current variances,
	// which the exact GP below reproduces.
	g.SetLeverageAfterObservation(true)
	var rows []int
	for s, i := range f.arms {
		if g.Count(i) == 0 {
			rows = append(rows, i)
		}
		if err := g.ObserveCandidate(i, f.ys[s]); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := g.SetDictionary(rows); err != nil {
		t.Fatal(err)
	}
	return g
}

// probabilities returns p_i = min(1, qbar * sigma_exact^2(x_i)/lambda * count_i)
// for every candidate (0 if unobserved), computed with the exact GP, so the
// expectation the law is checked against does not come from the DTC code.
func (f *sizeLawFixture) probabilities(t testing.TB, qbar float64) []float64 {
	ex, err := NewExact(f.k, 2, f.lambda)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.SetCandidates(f.cand); err != nil {
		t.Fatal(err)
	}
	count := make([]int, 60)
	for s, i := range f.arms {
		count[i]++
		if err := ex.ObserveCandidate(i, f.ys[s]); err != nil {
			t.Fatal(err)
		}
	}
	p := make([]float64, 60)
	for i, c := range count {
		p[i] = math.Min(1, qbar*ex.Variances()[i]/f.lambda*float64(c))
	}
	return p
}

func TestResampleSizeLaw(t *testing.T) {
	t.Parallel()
	const nseeds = 400
	fx := newSizeLawFixture()
	for _, rs := range resamplers {
		for _, qbar := range []float64{0.5, 2} {
			t.Run(fmt.Sprintf("%s/qbar=%v", rs.name, qbar), func(t *testing.T) {
				t.Parallel()
				p := fx.probabilities(t, qbar)
				// The fixture is what it claims: all observed rows in S, so
				// DTC probabilities equal to the exact ones.
				g0 := fx.build(t)
				var sum, vsum float64
				var nobs, nfree int
				for i := range p {
					if g0.Count(i) == 0 {
						continue
					}
					nobs++
					if !g0.InDictionary(i) {
						t.Fatalf("observed row %d not in the fixture dictionary", i)
					}
					if got := g0.InclusionProbability(i, qbar); !close(got, p[i], 0, 1e-5) {
						t.Fatalf("row %d: InclusionProbability %v, exact-GP probability %v", i, got, p[i])
					}
					sum += p[i]
					vsum += p[i] * (1 - p[i])
					if p[i] < 1 {
						nfree++
					}
				}
				if nfree < 20 {
					t.Fatalf("only %d of %d probabilities below 1: the test exercises too little", nfree, nobs)
				}
				m0 := g0.DictionarySize()

				hits := make([]int, len(p))
				var msum, msq float64
				for seed := uint64(0); seed < nseeds; seed++ {
					g := fx.build(t)
					ch0 := g.DictionaryChanges()
					added, removed, err := rs.f(g, rand.New(rand.NewPCG(seed, 0x5eed)), qbar)
					if err != nil {
						t.Fatal(err)
					}
					m := g.DictionarySize()
					if m != m0+added-removed {
						t.Fatalf("seed %d: |S| %d, want %d + %d - %d", seed, m, m0, added, removed)
					}
					if d := g.DictionaryChanges() - ch0; d != added+removed {
						t.Fatalf("seed %d: DictionaryChanges grew by %d, want %d", seed, d, added+removed)
					}
					for _, i := range g.Dictionary() {
						if i >= len(p) || g.Count(i) == 0 {
							t.Fatalf("seed %d: unobserved row %d in S", seed, i)
						}
						hits[i]++
					}
					msum += float64(m)
					msq += float64(m) * float64(m)
				}
				mean := msum / nseeds
				variance := (msq - msum*msum/nseeds) / (nseeds - 1)
				se := math.Sqrt(vsum / nseeds)
				z := (mean - sum) / se
				// Per-row inclusion frequencies: chi-square over the rows
				// with 0 < p < 1; rows with p = 1 must always be in S.
				var chi2 float64
				for i, pi := range p {
					if g0.Count(i) == 0 {
						continue
					}
					if pi == 1 {
						if hits[i] != nseeds {
							t.Errorf("row %d has p = 1 but was in S %d/%d times", i, hits[i], nseeds)
						}
						continue
					}
					d := float64(hits[i]) - nseeds*pi
					chi2 += d * d / (nseeds * pi * (1 - pi))
				}
				df := float64(nfree)
				t.Logf("%d observed rows (%d with p<1): sum p = %.3f, mean |S| = %.3f (z = %+.2f), var |S| = %.3f vs sum p(1-p) = %.3f, chi2 = %.1f on %d df",
					nobs, nfree, sum, mean, z, variance, vsum, chi2, nfree)
				if math.Abs(z) > 4 {
					t.Errorf("mean |S| = %.3f over %d seeds, want sum p = %.3f +- 4 SE (SE %.3f, z = %.2f)", mean, nseeds, sum, se, z)
				}
				// Independent draws: Var |S| = sum p(1-p). The relative SE of
				// a sample variance is about sqrt(2/(n-1)).
				if r := variance / vsum; math.Abs(r-1) > 4*math.Sqrt(2.0/(nseeds-1)) {
					t.Errorf("Var |S| = %.3f, want sum p(1-p) = %.3f (ratio %.3f): draws not independent?", variance, vsum, r)
				}
				if chi2 > df+5*math.Sqrt(2*df) {
					t.Errorf("per-row inclusion frequencies: chi2 = %.1f on %.0f df", chi2, df)
				}
			})
		}
	}
}

// ---------------------------------------------------------------------------
// A BKB-like loop run side by side with the exact GP.

type loopConfig struct {
	arms, dim   int
	lengthScale float64
	lambda      float64
	explore     float64 // probability of a uniformly random arm instead of the UCB one
	steps       int
	qbar        float64
	rs          resampler
	seed        uint64
}

// bandConfig is the problem of the variance-band and change-count tests:
// 500 arms in [0,1]^2, RBF l = 0.5, lambda = 0.1, half the steps uniform
// exploration, so that many distinct arms are observed while d_eff stays
// near 10, and a small dictionary can be accurate.
func bandConfig(steps int, qbar float64, rs resampler) loopConfig {
	return loopConfig{arms: 500, dim: 2, lengthScale: 0.5, lambda: 0.1, explore: 0.5, steps: steps, qbar: qbar, rs: rs, seed: 1}
}

type loopRun struct {
	cfg   loopConfig
	k     kernel.Kernel
	cand  *mat.Dense
	g     *DTC
	ex    *Exact
	arms  []int
	ys    []float64
	seen  map[int]bool
	steps int // steps at which S changed
}

// loopStep is what the hook sees after each step's resample.
type loopStep struct {
	t              int
	prob           []float64 // p_i per candidate just before the resample (0 if unobserved)
	added, removed int
}

func loopObjective(x []float64) float64 { return math.Sin(5*x[0]) * math.Cos(4*x[1%len(x)]) }

// runLoop runs the loop: choose the arm maximising mu~ + 2 sqrt(lambda sigma~^2)
// (or a uniformly random one with probability explore), observe f plus
// N(0, lambda) noise in both posteriors, then resample S with the
// configured rule. hook, if not nil, runs after every resample.
func runLoop(t testing.TB, cfg loopConfig, hook func(r *loopRun, s loopStep)) *loopRun {
	t.Helper()
	rng := rand.New(rand.NewPCG(cfg.seed, 1))
	src := rand.New(rand.NewPCG(cfg.seed, 2))
	r := &loopRun{cfg: cfg, k: kernel.RBF{LengthScale: cfg.lengthScale}, seen: map[int]bool{}}
	r.cand = randPoints(rng, cfg.arms, cfg.dim)
	var err error
	if r.g, err = NewDTC(r.k, cfg.dim, cfg.lambda); err != nil {
		t.Fatal(err)
	}
	if r.ex, err = NewExact(r.k, cfg.dim, cfg.lambda); err != nil {
		t.Fatal(err)
	}
	if err := r.g.SetCandidates(r.cand); err != nil {
		t.Fatal(err)
	}
	if err := r.ex.SetCandidates(r.cand); err != nil {
		t.Fatal(err)
	}
	r.ex.Reserve(cfg.steps)
	noise := math.Sqrt(cfg.lambda)
	prob := make([]float64, cfg.arms)
	for s := 0; s < cfg.steps; s++ {
		arm := rng.IntN(cfg.arms)
		if s > 0 && rng.Float64() >= cfg.explore {
			best := math.Inf(-1)
			for j, m := range r.g.Means() {
				if u := m + 2*math.Sqrt(cfg.lambda*r.g.Variances()[j]); u > best {
					best, arm = u, j
				}
			}
		}
		y := loopObjective(r.cand.RawRowView(arm)) + noise*rng.NormFloat64()
		r.arms = append(r.arms, arm)
		r.ys = append(r.ys, y)
		r.seen[arm] = true
		// Algorithm 1 draws S_{t+1} with the variances before y_{t+1}.
		copy(prob, r.g.Variances())
		if err := r.g.ObserveCandidate(arm, y); err != nil {
			t.Fatal(err)
		}
		if err := r.ex.ObserveCandidate(arm, y); err != nil {
			t.Fatal(err)
		}
		for i := range prob {
			prob[i] = math.Min(1, cfg.qbar*prob[i]*float64(r.g.Count(i)))
			if s == 0 { // S_1 = {x_1}
				prob[i] = 0
				if i == arm {
					prob[i] = 1
				}
			}
		}
		added, removed, err := cfg.rs.f(r.g, src, cfg.qbar)
		if err != nil {
			t.Fatal(err)
		}
		if added+removed > 0 {
			r.steps++
		}
		if hook != nil {
			hook(r, loopStep{t: s, prob: prob, added: added, removed: removed})
		}
	}
	return r
}

// ratioRange returns the smallest and largest lambda*sigma~^2/sigma^2 over
// the candidates of g and ex, and the candidate with the largest.
func ratioRange(g *DTC, ex *Exact) (lo, hi float64, argHi int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	lam := g.Lambda()
	for j, v := range ex.Variances() {
		r := lam * g.Variances()[j] / v
		if r < lo {
			lo = r
		}
		if r > hi {
			hi, argHi = r, j
		}
	}
	return lo, hi, argHi
}

// replayWith returns a DTC with the same data as r and dictionary rows,
// built from scratch.
func (r *loopRun) replayWith(t testing.TB, rows []int) *DTC {
	g, err := NewDTC(r.k, r.cfg.dim, r.cfg.lambda)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetCandidates(r.cand); err != nil {
		t.Fatal(err)
	}
	for s, arm := range r.arms {
		if err := g.ObserveCandidate(arm, r.ys[s]); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := g.SetDictionary(rows); err != nil {
		t.Fatal(err)
	}
	return g
}

// ---------------------------------------------------------------------------
// 1b. The law of |S| along one run: a martingale.

// Fresh resampling draws each q_{t,i} independently given the past, so
// M_T = sum_t (|S_t| - sum_i p_{t,i}) is a martingale with predictable
// variance sum_t sum_i p(1-p), and M_T/sqrt(that) is about N(0,1).
// (ResampleIncremental reuses each row's threshold, so its steps are not
// conditionally independent and this statistic does not apply to it; its
// coupling invariant S = {i: u_i < p_i} is checked instead.)
func TestResampleSizeMartingale(t *testing.T) {
	t.Parallel()
	for _, qbar := range []float64{1, 4} {
		t.Run(fmt.Sprintf("fresh/qbar=%v", qbar), func(t *testing.T) {
			t.Parallel()
			var dev, v float64
			var esum float64
			cfg := loopConfig{arms: 200, dim: 2, lengthScale: 0.3, lambda: 0.1, explore: 0.3, steps: 300, qbar: qbar, rs: resamplers[0], seed: 7}
			runLoop(t, cfg, func(r *loopRun, s loopStep) {
				var e float64
				for _, p := range s.prob {
					e += p
					v += p * (1 - p)
				}
				esum += e
				dev += float64(r.g.DictionarySize()) - e
			})
			z := dev / math.Sqrt(v)
			t.Logf("300 resamples: mean sum p = %.2f, sum(|S_t| - sum p) = %+.2f, normalised %+.2f", esum/300, dev, z)
			if math.Abs(z) > 4 {
				t.Errorf("normalised martingale %+.2f outside +-4", z)
			}
		})
	}
	t.Run("incremental/coupling", func(t *testing.T) {
		t.Parallel()
		cfg := loopConfig{arms: 200, dim: 2, lengthScale: 0.3, lambda: 0.1, explore: 0.3, steps: 300, qbar: 2, rs: resamplers[1], seed: 7}
		first := map[int]float64{}
		runLoop(t, cfg, func(r *loopRun, s loopStep) {
			if s.t == 0 { // S_1 = {x_1}: no threshold is drawn yet
				return
			}
			for i, p := range s.prob {
				if r.g.Count(i) == 0 {
					continue
				}
				u := r.g.thresh[i]
				if u0, ok := first[i]; !ok {
					first[i] = u
				} else if u != u0 {
					t.Fatalf("step %d: row %d threshold redrawn (%v, then %v)", s.t, i, u0, u)
				}
				if in := r.g.InDictionary(i); in != (u < p) {
					t.Fatalf("step %d: row %d in S = %v, but u = %v, p = %v", s.t, i, in, u, p)
				}
			}
		})
	})
}

// TestResampleIncrementalAdaptiveLaw is slow (about 25 s of CPU); set
// GP_SLOW_TESTS=1 to run it. Across independent runs of the adaptive
// loop, fresh resampling keeps E|S_T| = E sum_i p_{T,i}; the incremental
// variant need not, because its p_{T,i} depend on past dictionaries, which
// depend on the same thresholds u_i. The test asserts the former and
// reports the latter's bias. Over 300 runs of 100 steps (100 arms): at
// qbar = 1 the incremental |S_T| exceeds sum p_T = 17.6 by +2.06 on
// average (z = +14.4; fresh: -0.16, z = -1.05); at qbar = 4 neither has
// a detectable bias (+-0.03, z = +-0.36). So ResampleIncremental's "same
// marginal law as a fresh draw" holds for one call on a given state (see
// TestResampleSizeLaw), not along a run with small qbar.
func TestResampleIncrementalAdaptiveLaw(t *testing.T) {
	if os.Getenv("GP_SLOW_TESTS") == "" {
		t.Skip("slow; set GP_SLOW_TESTS=1")
	}
	t.Parallel()
	const nseeds, steps = 300, 100
	for _, rs := range resamplers {
		for _, qbar := range []float64{1, 4} {
			t.Run(fmt.Sprintf("%s/qbar=%v", rs.name, qbar), func(t *testing.T) {
				t.Parallel()
				var sd, sd2, se float64
				for seed := uint64(0); seed < nseeds; seed++ {
					cfg := loopConfig{arms: 100, dim: 2, lengthScale: 0.3, lambda: 0.1, explore: 0.3, steps: steps, qbar: qbar, rs: rs, seed: seed}
					runLoop(t, cfg, func(r *loopRun, s loopStep) {
						if s.t != steps-1 {
							return
						}
						var e float64
						for _, p := range s.prob {
							e += p
						}
						d := float64(r.g.DictionarySize()) - e
						sd += d
						sd2 += d * d
						se += e
					})
				}
				mean := sd / nseeds
				z := mean / math.Sqrt((sd2/nseeds-mean*mean)/nseeds)
				t.Logf("%s, qbar = %v: E sum p_T = %.2f, E(|S_T| - sum p_T) = %+.3f (z = %+.2f over %d runs)", rs.name, qbar, se/nseeds, mean, z, nseeds)
				if rs.name == "fresh" && math.Abs(z) > 4 {
					t.Errorf("fresh resampling: |S_T| - sum p_T has mean %+.3f, z = %+.2f", mean, z)
				}
			})
		}
	}
}

// ---------------------------------------------------------------------------
// 2. The variance band of Theorem 3.1.

func TestResampleVarianceBand(t *testing.T) {
	t.Parallel()
	const (
		eps   = 0.5
		delta = 0.1
		T     = 200
	)
	alpha := bandAlpha(eps) // 3
	cases := []struct {
		name     string
		qbar     float64
		maxShare float64 // |S_T| must be below this share of the distinct observed arms (0: no limit)
	}{
		// qbar = 6 alpha log(4T/delta)/eps^2 = 647.1: every observed row
		// has p = 1 in practice, so S holds every observed arm.
		{"theory", theoryQbar(eps, delta, T), 0},
		// A practical qbar, 160 times smaller, with a dictionary of a third
		// of the observed arms (|S_T| = 32 of 94, fresh and incremental).
		{"qbar=4", 4, 0.5},
	}
	for _, c := range cases {
		for _, rs := range resamplers {
			t.Run(c.name+"/"+rs.name, func(t *testing.T) {
				t.Parallel()
				lo, hi := math.Inf(1), math.Inf(-1)
				worstStep := -1
				r := runLoop(t, bandConfig(T, c.qbar, rs), func(r *loopRun, s loopStep) {
					l, h, j := ratioRange(r.g, r.ex)
					if h > hi {
						worstStep = s.t
					}
					lo, hi = math.Min(lo, l), math.Max(hi, h)
					if l < 1/alpha || h > alpha {
						t.Errorf("step %d: lambda*sigma~^2/sigma^2 in [%.4f, %.4f] (worst arm %d), outside [1/%g, %g]; |S| = %d",
							s.t, l, h, j, alpha, alpha, r.g.DictionarySize())
					}
				})
				m, distinct := r.g.DictionarySize(), len(r.seen)
				jt, jc := r.g.Jitter()
				t.Logf("qbar = %.1f: ratio in [%.4f, %.4f] over %d steps x %d arms (max at step %d); |S_T| = %d, distinct arms %d, changes %d, d_eff~ %.2f, jitter %.2g (%d)",
					c.qbar, lo, hi, T, r.cfg.arms, worstStep, m, distinct, r.g.DictionaryChanges(), r.g.EffectiveDimension(), jt, jc)
				if c.maxShare > 0 && float64(m) >= c.maxShare*float64(distinct) {
					t.Errorf("|S_T| = %d is not below %.0f%% of the %d distinct observed arms: the case is trivial", m, 100*c.maxShare, distinct)
				}
				// The band assertion has power: a two-point dictionary on the
				// same data must break it.
				small := r.replayWith(t, r.g.Dictionary()[:2])
				if _, h, _ := ratioRange(small, r.ex); h <= alpha {
					t.Errorf("a two-point dictionary stays in the band (max ratio %.3f): the check is vacuous", h)
				}
			})
		}
	}
}

// TestResampleVarianceBandSmallQbar documents what happens below the
// theory, with qbar = 1 or 2 on the same problem.
//
// Upper side: lambda*sigma~^2 reaches 3.6-11 sigma^2 at qbar = 2 and up to
// 250 sigma^2 at qbar = 1. Each violation is the failure event of Theorem
// 3.1: an observed arm with p_i = qbar*sigma~^2*count_i < 1 (typically
// 0.2-0.8) was left out of S; the DTC variance of arms next to it keeps
// the Nystrom residual (k(x,x) - ||z(x)||^2)/lambda, while the exact
// posterior has used that observation (the worst arm is usually an
// unobserved arm next to the dropped one, or the dropped arm itself). The
// test checks that diagnosis: putting back the one
// dropped observed arm most correlated with the worst arm brings that arm
// under alpha (every time at qbar = 2; 117 of 119 and 142 of 142 times at
// qbar = 1, fresh and incremental).
//
// Lower side: at qbar = 2 it holds. At qbar = 1 (fresh) it fails once,
// at a step where S has 3 points for about 50 observed arms: the
// observations projected on span(S) are counted as information along
// those 3 directions (P Phi Phi^T P is not below Phi Phi^T), and an arm of
// S gets lambda*sigma~^2 = 0.32 sigma^2. That is variance starvation, the
// other failure of an inaccurate dictionary.
func TestResampleVarianceBandSmallQbar(t *testing.T) {
	t.Parallel()
	alpha := bandAlpha(0.5)
	for _, qbar := range []float64{1, 2} {
		for _, rs := range resamplers {
			t.Run(fmt.Sprintf("qbar=%v/%s", qbar, rs.name), func(t *testing.T) {
				t.Parallel()
				strict := qbar >= 2
				lo, hi := math.Inf(1), math.Inf(-1)
				var upper, lower, restored int
				r := runLoop(t, bandConfig(200, qbar, rs), func(r *loopRun, s loopStep) {
					l, h, j := ratioRange(r.g, r.ex)
					lo, hi = math.Min(lo, l), math.Max(hi, h)
					if l < 1/alpha {
						lower++
						if strict {
							t.Errorf("step %d: lambda*sigma~^2 = %.3f sigma^2 < sigma^2/alpha (variance starvation), |S| = %d", s.t, l, r.g.DictionarySize())
						}
					}
					if h <= alpha {
						return
					}
					upper++
					// The dropped observed arm most correlated with arm j.
					o, best := -1, -1.0
					for i := range s.prob {
						if r.g.Count(i) > 0 && !r.g.InDictionary(i) {
							if kv := r.k.Eval(r.cand.RawRowView(i), r.cand.RawRowView(j)); kv > best {
								o, best = i, kv
							}
						}
					}
					if o < 0 {
						t.Errorf("step %d: ratio %.3f at arm %d with every observed arm in S", s.t, h, j)
						return
					}
					g2 := r.replayWith(t, append(append([]int(nil), r.g.Dictionary()...), o))
					r2 := r.cfg.lambda * g2.Variances()[j] / r.ex.Variances()[j]
					if r2 <= alpha {
						restored++
					} else if strict {
						t.Errorf("step %d: arm %d ratio %.3f, still %.3f with dropped arm %d (p = %.3f, k = %.3f) put back", s.t, j, h, r2, o, s.prob[o], best)
					}
				})
				t.Logf("qbar = %v: ratio in [%.4f, %.4f]; of %d steps, %d above alpha = %g (%d restored by putting back one dropped arm), %d below 1/alpha; |S_T| = %d of %d distinct arms, %d changes",
					qbar, lo, hi, len(r.arms), upper, alpha, restored, lower, r.g.DictionarySize(), len(r.seen), r.g.DictionaryChanges())
			})
		}
	}
}

// ---------------------------------------------------------------------------
// 3. How often S changes.

func TestResampleChangeFrequency(t *testing.T) {
	t.Parallel()
	const T = 300
	for _, qbar := range []float64{2, 4} {
		t.Run(fmt.Sprintf("qbar=%v", qbar), func(t *testing.T) {
			t.Parallel()
			var changes, steps, size [2]int
			for k, rs := range resamplers {
				r := runLoop(t, bandConfig(T, qbar, rs), nil)
				changes[k], steps[k], size[k] = r.g.DictionaryChanges(), r.steps, r.g.DictionarySize()
			}
			t.Logf("T = %d: fresh %d changes (S changed at %d steps, |S_T| = %d); incremental %d changes (%d steps, |S_T| = %d)",
				T, changes[0], steps[0], size[0], changes[1], steps[1], size[1])
			if changes[1] >= changes[0] {
				t.Errorf("incremental resampling made %d dictionary changes, fresh %d: want fewer", changes[1], changes[0])
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Known bug (not fixed here; see the report): near-duplicate dictionary
// points break the Nystrom factor.

// TestDTCNearlyDependentDictionary: 20 or 30 evenly spaced points of [0,1]
// with RBF l = 0.3, all observed and all in S. K_SS is numerically
// singular (with 20 points the Cholesky pivots are ~1e-5 from the 12th
// point on). chol.AppendSolved
// floors a pivot d^2 at MinPivot*k(x,x) = 1e-12, below the rounding noise
// of ||L^{-1} k_S(x)||^2 (~1e-10 here), so the next pivots are computed
// from amplified rounding errors: the residuals Nystrom.Embed reports go
// -3e-11, -7e-8, -0.056, -1.4e10, -1.3e32 and the embeddings reach 1e38.
// With 20 points the DTC variance is off by a factor 2.35 although S holds
// every observed point (it must equal the exact GP); with 30 points
// SetDictionary panics "gp: DTC V not positive definite". In a BKB loop
// on 500 arms of [0,1] (l = 0.3, qbar = 4 or 8) 11 of 12 seeds panic or
// reach absurd variance ratios (0 or 1e51 to +Inf). Raising
// chol.MinPivot to 1e-8 makes this test pass together with the existing
// gp and chol tests; a floor tied to the rounding level (or refusing
// numerically dependent points in Nystrom.Add) would be the robust fix.
func TestDTCNearlyDependentDictionary(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 30} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			k := kernel.RBF{LengthScale: 0.3}
			x := mat.NewDense(n, 1, nil)
			rows := make([]int, n)
			for i := range n {
				x.Set(i, 0, float64(i)/float64(n-1))
				rows[i] = i
			}
			g, _ := NewDTC(k, 1, 0.1)
			ex, _ := NewExact(k, 1, 0.1)
			if err := g.SetCandidates(x); err != nil {
				t.Fatal(err)
			}
			if err := ex.SetCandidates(x); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				y := math.Sin(6 * x.At(i, 0))
				g.ObserveCandidate(i, y)
				ex.ObserveCandidate(i, y)
			}
			func() {
				defer func() {
					if e := recover(); e != nil {
						t.Fatalf("SetDictionary panicked: %v", e)
					}
				}()
				if _, _, err := g.SetDictionary(rows); err != nil {
					t.Fatal(err)
				}
			}()
			for i := range n {
				if v, w := 0.1*g.Variances()[i], ex.Variances()[i]; !close(v, w, 1e-3, 1e-4) {
					t.Errorf("point %d: lambda*sigma~^2 = %.6g, exact %.6g, with every observed point in S", i, v, w)
				}
			}
		})
	}
	// The BKB loop on 500 arms of [0,1] (about 0.002 apart, l = 0.3). With
	// seed 2, at step 113 every arm's lambda*sigma~^2 is below 6e-14 times
	// its exact variance (the DTC variances collapse to 0: complete
	// variance starvation, silently); with seed 3 the ratio reaches 1e-64
	// at step 77 and SetDictionary later panics. With MinPivot = 1e-8 both
	// runs stay within 1.2 of the exact variances at every step.
	for _, seed := range []uint64{2, 3} {
		t.Run(fmt.Sprintf("loop/seed=%d", seed), func(t *testing.T) {
			defer func() {
				if e := recover(); e != nil {
					t.Fatalf("BKB loop panicked: %v", e)
				}
			}()
			cfg := loopConfig{arms: 500, dim: 1, lengthScale: 0.3, lambda: 0.1, explore: 0.5, steps: 200, qbar: 4, rs: resamplers[0], seed: seed}
			alpha := bandAlpha(0.5)
			runLoop(t, cfg, func(r *loopRun, s loopStep) {
				if lo, hi, _ := ratioRange(r.g, r.ex); !(lo >= 1/alpha && hi <= alpha) {
					t.Fatalf("step %d: ratio in [%.3g, %.3g], |S| = %d", s.t, lo, hi, r.g.DictionarySize())
				}
			})
		})
	}
}
