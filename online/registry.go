package online

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/kernel"
)

// Profile selects which paper's experimental defaults Build uses.
type Profile string

const (
	// Profile000 is Jézéquel et al. (NeurIPS 2019), Section 4: lambda = 1, KORS mu = 1, beta = 1,
	// eps = 0.5, FOGD with 1000 frequencies and eta = 1/sqrt(n), targets in
	// [-1, 1].
	Profile000 Profile = "000"
	// Profile002 is Li and Liao (ICML 2023), Appendix A: alpha = 25/T, U = 2 (AOGD-ALD),
	// U = 1, mu = 1 (NONS-ALD), FOGD D = 400, NOGD B = 400, targets in [0, 1].
	Profile002 Profile = "002"
	// Profile003 is Wen et al. (IJCAI 2024), Section 5.1: FORKS Table 1 settings, FOGD with
	// 4B features and NOGD with B and k = 0.1 B, eta = 0.2, hinge loss.
	Profile003 Profile = "003"
)

// Setting is what Build needs to know about the stream.
type Setting struct {
	Dim int
	// N is the stream length T (alpha = 25/T, rho = floor(theta N), B0, ...).
	N    int
	Task Task
	// Width is the Gaussian kernel width sigma of exp(-||x-y||^2/(2 sigma^2)).
	Width   float64
	Seed    uint64
	Profile Profile
	// Budget J caps the size of the learners whose dictionary grows with
	// the stream (ALD, KORS; 0: no cap): they stop adding atoms at J. With
	// CapAll it also caps the fixed sizes: FOGD's frequencies, NOGD's and
	// FORKS's budgets B are at most J, and Taylor's degree M is lowered
	// until binom(M+d, d) <= J. Exact KRR/AWV and DSG are not budgeted
	// (the first is exact by definition, the second keeps one coefficient
	// per round by design).
	Budget int
	CapAll bool
	// Center makes every regression learner (but "mean") predict the
	// running mean of the past targets plus its own prediction, learned on
	// the residual y_t - mean_t (see Centered). Off in the papers' profiles.
	Center bool
	// Lambda is the ridge of krr, kawv and the PKAWV/PKRR learners (0: 1,
	// Jézéquel et al.'s (NeurIPS 2019) value).
	Lambda float64
	// Widths, when it has more than one entry, makes Build return a
	// WidthMix of the learner at each width (unless the spec sets width).
	Widths []float64
	// ARD, when not nil, adds relevance experts to the mix of a regression
	// learner (see Relevance, ARDWidthFactors); their fits are shared
	// through ARD by every learner run on the same stream order. Width is
	// then the center of the width grid.
	ARD *RelevanceFits
}

func (s Setting) lambda() float64 {
	if s.Lambda > 0 {
		return s.Lambda
	}
	return 1
}

// capFixed returns min(v, Budget) when every size is capped.
func (s Setting) capFixed(v int) int {
	if s.CapAll && s.Budget > 0 && v > s.Budget {
		return s.Budget
	}
	return v
}

// DefaultBudget is the default dictionary budget J of bkb regress for the
// dictionaries that grow with the stream (ALD, KORS). The budget is a
// capacity limit: on the first 2000 rows of a GP-prior sample in 16
// dimensions, PKRR-Nystrom at its best width and lambda makes 1.23 times
// tuned exact KRR's MSE with J = 400 (the size Li and Liao (ICML 2023) gives FOGD and
// NOGD), 1.11 with 600 and 1.06 with 800; on Friedman #1 in 16 dimensions
// 1.16 with 600 and 1.10 with 800 (docs/online.md). 800 keeps every
// stream of that table within 20% with a margin, for 4 times the
// O(J^2) per-round cost of 400 once the dictionary is full.
const DefaultBudget = 800

// MaxSquareStep is the largest constant step of FOGD and NOGD with the
// square loss: a step eta on a feature vector of norm 1 (k(x, x) = 1)
// moves the prediction at x_t by -2 eta (f - y), which overshoots the
// target when eta > 1/2 and diverges when eta > 1. Seed 002's 10/sqrt(T)
// exceeds 1/2 for T < 400 (and 2 for T < 25), so the default is
// min(10/sqrt(T), 1/2).
const MaxSquareStep = 0.5

// Kernel returns the Gaussian kernel of s.
func (s Setting) Kernel() kernel.RBF { return kernel.RBF{LengthScale: s.Width} }

func (s Setting) profile() Profile {
	if s.Profile != "" {
		return s.Profile
	}
	if s.Task == Classification {
		return Profile003
	}
	return Profile002
}

// LearnerNames lists the names Build accepts, in table order.
var LearnerNames = []string{
	"mean", "krr", "kawv", "pkawv-taylor", "pkrr-taylor", "pkawv-nystrom", "pkrr-nystrom",
	"aogd-ald", "nons-ald", "pros-n-kons", "con-kons", "forks", "dsg", "fogd", "nogd",
}

// params is a parsed learner spec "name:key=value:key=value".
type params struct {
	name string
	kv   map[string]string
	used map[string]bool
}

func parseSpec(spec string) (*params, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	p := &params{name: strings.ToLower(parts[0]), kv: map[string]string{}, used: map[string]bool{}}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("online: learner spec %q: parameter %q is not key=value", spec, kv)
		}
		p.kv[strings.ToLower(k)] = v
	}
	return p, nil
}

func (p *params) float(key string, def float64) (float64, error) {
	v, ok := p.kv[key]
	if !ok {
		return def, nil
	}
	p.used[key] = true
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("online: %s: parameter %s=%q: %w", p.name, key, v, err)
	}
	return f, nil
}

func (p *params) int(key string, def int) (int, error) {
	f, err := p.float(key, float64(def))
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("online: %s: parameter %s=%v is not an integer", p.name, key, f)
	}
	return int(f), nil
}

func (p *params) str(key, def string) string {
	v, ok := p.kv[key]
	if !ok {
		return def
	}
	p.used[key] = true
	return v
}

func (p *params) unused() error {
	var bad []string
	for k := range p.kv {
		if !p.used[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("online: %s: unknown parameter(s) %s", p.name, strings.Join(bad, ", "))
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Build returns the learner described by spec for the setting s. A spec is
// a name from LearnerNames optionally followed by ":key=value" parameters,
// e.g. "pkawv-taylor:m=3", "fogd:d=1000:eta=0.01", "nons-ald:mu=5",
// "forks:rank=20". Common keys: width (kernel sigma), lambda, loss, seed;
// the defaults come from s.Profile (see Profile000, Profile002,
// Profile003). The name the learner reports includes non-default
// parameters.
func Build(spec string, s Setting) (Learner, error) {
	p, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	if _, ok := p.kv["width"]; (len(s.Widths) > 1 || s.ARD != nil && s.Task == Regression) && !ok && p.name != "mean" {
		return buildMix(spec, p, s)
	}
	width, err := p.float("width", s.Width)
	if err != nil {
		return nil, err
	}
	if err := positive("kernel width", width); err != nil {
		return nil, err
	}
	k := kernel.RBF{LengthScale: width}
	seed64, err := p.float("seed", float64(s.Seed))
	if err != nil {
		return nil, err
	}
	seed := uint64(seed64)
	defLoss := Square
	if s.Task == Classification {
		defLoss = Hinge
	}
	loss, err := ParseLoss(p.str("loss", defLoss.String()))
	if err != nil {
		return nil, err
	}
	prof := s.profile()
	sqrtT := math.Sqrt(float64(s.N))
	var l Learner
	switch p.name {
	case "mean":
		l = &RunningMean{}
	case "krr", "kawv":
		lambda, e1 := p.float("lambda", s.lambda())
		capacity, e2 := p.int("cap", DefaultExactCapacity)
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		mode := KRR
		if p.name == "kawv" {
			mode = AWV
		}
		l, err = NewExact(k, s.Dim, lambda, mode, capacity)
	case "pkawv-taylor", "pkrr-taylor":
		m, e1 := p.int("m", 2)
		lambda, e2 := p.float("lambda", s.lambda())
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		mode := AWV
		if p.name == "pkrr-taylor" {
			mode = KRR
		}
		for m > 1 && s.CapAll && s.Budget > 0 && binomial(m+s.Dim, s.Dim) > float64(s.Budget) {
			m--
		}
		l, err = NewPKAWVTaylor(s.Dim, m, width, lambda, mode)
	case "pkawv-nystrom", "pkrr-nystrom":
		lambda, e1 := p.float("lambda", s.lambda())
		// KORS's accuracy mu defaults to the ridge lambda (Jézéquel et al. (NeurIPS 2019) sets
		// both to 1): the projection error of a mu-accurate dictionary is
		// of order mu, negligible against lambda only when mu <= lambda.
		mu, e2 := p.float("mu", lambda)
		eps, e3 := p.float("eps", 0.5)
		beta, e4 := p.float("beta", 1)
		maxd, e5 := p.int("max", s.Budget)
		if err := firstErr(e1, e2, e3, e4, e5); err != nil {
			return nil, err
		}
		mode := AWV
		if p.name == "pkrr-nystrom" {
			mode = KRR
		}
		l, err = NewPKAWVNystrom(PKAWVNystromConfig{
			Kernel: k, Dim: s.Dim, Lambda: lambda, Mode: mode,
			KORS:          KORS{Mu: mu, Eps: eps, Beta: beta, PaperWeights: p.str("weights", "sqrt") == "paper"},
			All:           p.str("all", "false") == "true",
			MaxDictionary: maxd, Seed: seed,
		})
	case "aogd-ald", "nons-ald":
		alpha, e1 := p.float("alpha", ALDThreshold(s.N))
		defU := 1.0
		if p.name == "aogd-ald" {
			defU = 2
		}
		u, e2 := p.float("u", defU)
		mu, e3 := p.float("mu", 1)
		eta, e4 := p.float("eta", 0)
		b0, e5 := p.int("b0", AOGDCap(s.Dim, s.N))
		maxd, e6 := p.int("max", s.Budget)
		if err := firstErr(e1, e2, e3, e4, e5, e6); err != nil {
			return nil, err
		}
		cfg := ALDConfig{Kernel: k, Dim: s.Dim, Alpha: alpha, U: u, Mu: mu, Eta: eta, B0: b0, MaxDictionary: maxd}
		if p.name == "aogd-ald" {
			l, err = NewAOGDALD(cfg)
		} else {
			l, err = NewNONSALD(cfg)
		}
	case "pros-n-kons", "con-kons":
		// alpha = 5 and gamma = 10, of Li and Liao's (ICML 2023) grids {1, 5, 15} and
		// {0.5, 1, 5, 10} (the chosen values are not reported): the first
		// Newton step after a (re)start moves the prediction by
		// -2 (f - y)/alpha, which overshoots the target for alpha < 2, and
		// PROS-N-KONS restarts at every dictionary change, which gamma = 10
		// makes rarer. On elevators at width 8 they give the paper's
		// dictionary sizes (34 atoms against 32 and 34) and MSEs within 5%
		// (docs/online.md).
		alpha, e1 := p.float("alpha", 5)
		gamma, e2 := p.float("gamma", 10)
		c, e3 := p.float("c", 1)
		maxd, e4 := p.int("max", s.Budget)
		if err := firstErr(e1, e2, e3, e4); err != nil {
			return nil, err
		}
		l, err = NewKONS(KONSConfig{Kernel: k, Dim: s.Dim, KORS: KORS{Mu: gamma, Eps: 0.5, Beta: 1}, Alpha: alpha, C: c,
			Restart: p.name == "pros-n-kons", MaxDictionary: maxd, Seed: seed})
	case "forks":
		c := PaperFORKS(k, s.Dim, s.N, seed)
		if prof == Profile003Blocks {
			c = AdversarialFORKS(k, s.Dim, s.N, seed)
		}
		c.Loss = loss
		if loss == Square {
			// FORKS was only run with the hinge loss. For the square loss with
			// targets in [0, 1] its constants sigma_i = 0.5, alpha = 0.01
			// overshoot after every reset; use NONS-ALD's (Theorem 4.6 of
			// Li and Liao (ICML 2023)): sigma_i = 1/(4(U^2+Y^2)) = 1/8, alpha = mu = 1.
			c.Sigma, c.Alpha = 0.125, 1
		}
		var es [12]error
		var b int
		b, es[0] = p.int("b", s.capFixed(c.Budget))
		if b != c.Budget {
			c.Budget, c.Sp, c.Sm, c.Rank = b, b, max(1, b/5), max(1, b/10)
		}
		c.Sp, es[1] = p.int("sp", c.Sp)
		c.Sm, es[2] = p.int("sm", c.Sm)
		c.Rank, es[3] = p.int("rank", c.Rank)
		if _, ok := p.kv["theta"]; ok {
			theta, e := p.float("theta", 0.3)
			es[4] = e
			c.Rho = max(1, int(theta*float64(s.N)))
		}
		c.Rho, es[5] = p.int("rho", c.Rho)
		c.Alpha, es[6] = p.float("alpha", c.Alpha)
		c.Sigma, es[7] = p.float("sigma", c.Sigma)
		c.C, es[8] = p.float("c", c.C)
		c.EtaKOGD, es[9] = p.float("eta", c.EtaKOGD)
		c.Blocks, es[10] = p.int("blocks", 1)
		c.MaxStored, es[11] = p.int("cap", 0)
		c.FullDecomposition = p.str("full", "false") == "true"
		if err := firstErr(es[:]...); err != nil {
			return nil, err
		}
		l, err = NewFORKS(c)
	case "dsg":
		defTheta, defT0 := 4.0, 100.0
		theta, e1 := p.float("theta", defTheta)
		t0, e2 := p.float("t0", defT0)
		nu, e3 := p.float("nu", 0)
		block, e4 := p.int("block", 1)
		if err := firstErr(e1, e2, e3, e4); err != nil {
			return nil, err
		}
		l, err = NewDSG(DSGConfig{Kernel: k, Dim: s.Dim, Loss: loss, Nu: nu, Theta: theta, T0: t0, Block: block, Seed: seed})
	case "fogd":
		defD, defEta := 400, 10/sqrtT
		switch prof {
		case Profile000:
			defD, defEta = 1000, 1/sqrtT
		case Profile003:
			defD, defEta = 4*forksBudget(s.N)/2, 0.2 // 4B features = 2B (cos, sin) pairs
		case Profile003Blocks:
			defD, defEta = 4*200/2, 0.2
		}
		if loss == Square {
			defEta = math.Min(defEta, MaxSquareStep)
		}
		d, e1 := p.int("d", s.capFixed(defD))
		eta, e2 := p.float("eta", defEta)
		if err := firstErr(e1, e2); err != nil {
			return nil, err
		}
		l, err = NewFOGD(FOGDConfig{Kernel: k, Dim: s.Dim, Frequencies: d, Phase: p.str("phase", "false") == "true",
			Eta: eta, Loss: loss, Seed: seed})
	case "nogd":
		defB, defK, defEta := 400, 0, 10/sqrtT
		switch prof {
		case Profile003:
			defB = forksBudget(s.N)
			defK, defEta = defB/10, 0.2
		case Profile003Blocks:
			defB, defK, defEta = 200, 20, 0.2
		}
		if loss == Square {
			defEta = math.Min(defEta, MaxSquareStep)
		}
		b, e1 := p.int("b", s.capFixed(defB))
		rank, e2 := p.int("rank", min(defK, s.capFixed(defB)))
		eta, e3 := p.float("eta", defEta)
		if err := firstErr(e1, e2, e3); err != nil {
			return nil, err
		}
		l, err = NewNOGD(NOGDConfig{Kernel: k, Dim: s.Dim, Budget: b, Rank: rank, Eta: eta, Loss: loss})
	default:
		return nil, fmt.Errorf("online: unknown learner %q (want one of %s)", p.name, strings.Join(LearnerNames, ", "))
	}
	if err != nil {
		return nil, err
	}
	if err := p.unused(); err != nil {
		return nil, err
	}
	if s.Center && s.Task == Regression && p.name != "mean" {
		l = &Centered{Learner: l}
	}
	if len(p.kv) > 0 {
		return named{l, spec}, nil
	}
	return l, nil
}

// ridgeLearners are the learners with a ridge lambda, which WidthMix also
// mixes over MixLambdas.
var ridgeLearners = map[string]bool{"krr": true, "kawv": true, "pkrr-taylor": true, "pkawv-taylor": true,
	"pkrr-nystrom": true, "pkawv-nystrom": true}

// MixLambdas are the ridges a WidthMix of a ridge learner (krr, kawv,
// PKAWV/PKRR) mixes over, with each width, unless the spec sets lambda:
// exact KRR tuned in hindsight picked 0.01 or 0.1 on 11 of the 12 streams
// of docs/online.md.
var MixLambdas = []float64{0.01, 0.1}

// buildMix builds the WidthMix of spec over s.Widths (and MixLambdas for
// a ridge learner), centered like a single learner. With s.ARD it adds a
// relevance expert per ARDWidthFactors (and ridge) and returns the mix
// wrapped in a Relevance.
func buildMix(spec string, p *params, s Setting) (Learner, error) {
	sub := s
	sub.Widths, sub.Center, sub.ARD = nil, false, nil
	grid := s.Widths
	if len(grid) == 0 {
		grid = []float64{s.Width}
	}
	lambdas := []float64{0}
	if _, ok := p.kv["lambda"]; ridgeLearners[p.name] && !ok {
		lambdas = MixLambdas
		if len(grid) == 1 {
			lambdas = []float64{s.lambda()}
		}
	}
	var experts []Learner
	var widths, lams []float64
	var ard []bool
	for _, lam := range lambdas {
		for _, w := range grid {
			sub.Width = w
			if lam > 0 {
				sub.Lambda = lam
			}
			e, err := Build(spec, sub)
			if err != nil {
				return nil, err
			}
			experts = append(experts, e)
			widths, lams, ard = append(widths, w), append(lams, lam), append(ard, false)
		}
	}
	var tr *relevanceTracker
	if s.ARD != nil && s.Task == Regression {
		tr = &relevanceTracker{fits: s.ARD, d: s.Dim, n: s.N}
		for _, lam := range lambdas {
			for _, f := range ARDWidthFactors {
				iso := sub
				iso.Width = f * s.Width
				if lam > 0 {
					iso.Lambda = lam
				}
				first, err := Build(spec, iso)
				if err != nil {
					return nil, err
				}
				e := &relevanceExpert{Learner: first, factor: f, d: s.Dim, history: true}
				scaled := iso
				scaled.Width = f
				e.build = func() (Learner, error) {
					set := scaled
					set.Dim = e.dim()
					return Build(spec, set)
				}
				tr.experts = append(tr.experts, e)
				experts = append(experts, e)
				widths, lams, ard = append(widths, f), append(lams, lam), append(ard, true)
			}
		}
	}
	var l Learner
	l, err := NewWidthMix(experts, widths, s.Task, s.N)
	if err != nil {
		return nil, err
	}
	m := l.(*WidthMix)
	if len(MixLambdas) > 0 && len(lambdas) > 1 {
		m.lambdas = lams
	}
	if tr != nil {
		m.ard = ard
	}
	if s.Center && s.Task == Regression {
		l = &Centered{Learner: l}
	}
	if tr != nil {
		l = &Relevance{Learner: l, tr: tr}
	}
	return l, nil
}

// binomial returns binom(n, k) as a float (no overflow for the sizes here).
func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// RunningMean is the baseline every kernel learner must beat: it predicts
// the mean of the targets seen so far (0 before the first), and for
// classification the sign of that mean (the majority label).
type RunningMean struct {
	sum float64
	n   int
}

// Predict returns the running mean of the past targets.
func (r *RunningMean) Predict([]float64) float64 {
	if r.n == 0 {
		return 0
	}
	return r.sum / float64(r.n)
}

// Learn adds y to the mean.
func (r *RunningMean) Learn(_ []float64, y float64) error {
	r.sum += y
	r.n++
	return nil
}

// Size returns 0: the mean stores no dictionary.
func (r *RunningMean) Size() int { return 0 }

// Name returns "mean".
func (r *RunningMean) Name() string { return "mean" }

func forksBudget(n int) int {
	if n > 10000 {
		return 100
	}
	return 50
}

// named overrides a learner's name with its spec.
type named struct {
	Learner
	name string
}

func (n named) Name() string { return n.name }

// Unwrap returns the learner built by Build without its spec name and
// centering.
func Unwrap(l Learner) Learner {
	if n, ok := l.(named); ok {
		l = n.Learner
	}
	if r, ok := l.(*Relevance); ok {
		l = r.Learner
	}
	if c, ok := l.(*Centered); ok {
		l = c.Learner
	}
	if m, ok := l.(*WidthMix); ok {
		l = Unwrap(m.first())
	}
	return l
}

// Centered runs a regression learner on the residuals of the running mean:
// it predicts m_t + f_t(x_t), where m_t is the mean of y_1..y_{t-1} (0 at
// t = 1), and teaches the learner y_t - m_t. The mean uses past targets
// only, so the protocol stays prequential. It gives the learners that have
// no intercept (all of them: f is in the RKHS of a Gaussian kernel, and the
// Newton-step learners restart or reset w to 0) the level of the targets
// for free; without it, FORKS's reset to w = 0 every rho rounds and
// PROS-N-KONS's restart at every dictionary change predict 0 for targets
// near 1/2.
type Centered struct {
	Learner
	sum float64
	n   int
}

func (c *Centered) mean() float64 {
	if c.n == 0 {
		return 0
	}
	return c.sum / float64(c.n)
}

// Predict returns m_t + f_t(x).
func (c *Centered) Predict(x []float64) float64 { return c.mean() + c.Learner.Predict(x) }

// Learn teaches the learner y - m_t, then adds y to the mean.
func (c *Centered) Learn(x []float64, y float64) error {
	if err := c.Learner.Learn(x, y-c.mean()); err != nil {
		return err
	}
	c.sum += y
	c.n++
	return nil
}
