// Package hyper fits Gaussian-process hyperparameters: per-dimension (ARD)
// length scales, the signal variance and the noise variance, by maximizing
// the log marginal likelihood plus weak priors (a MAP fit), with analytic
// gradients (Rasmussen & Williams 2006, eqs. 5.8-5.9) and gonum's L-BFGS from
// a few deterministic starts.
//
// The model is y = f(x) + eps, f ~ GP(0, k), eps ~ N(0, NoiseVariance), with
// k an ARD kernel (kernel.RBFARD or kernel.Matern52ARD) whose variance is the
// signal variance. The caller standardizes y (mean 0, standard deviation
// about 1) and maps x into the unit box: the default bounds and priors are
// stated on that scale.
//
// Cost: one objective evaluation is a Cholesky factorization and an inverse
// of an m x m matrix, O(m^3), plus O(m^2 d) kernel work, where m is
// min(n, Options.MaxPoints). Above MaxPoints the fit runs on a deterministic
// subset (see Options.MaxPoints), so a refit never costs O(n^3) at large n.
package hyper

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/kernel"
)

// Family selects the ARD kernel family.
type Family int

const (
	// RBF is the squared-exponential ARD kernel, kernel.RBFARD.
	RBF Family = iota
	// Matern52 is the Matern 5/2 ARD kernel, kernel.Matern52ARD.
	Matern52
)

// String returns "rbf" or "matern52".
func (f Family) String() string {
	switch f {
	case RBF:
		return "rbf"
	case Matern52:
		return "matern52"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Params are GP hyperparameters.
type Params struct {
	// Family is the kernel family. In Options.Init it is ignored: a fit
	// always uses Options.Family.
	Family Family
	// LengthScales has one positive length scale per input dimension.
	LengthScales []float64
	// SignalVariance is k(x, x), the prior variance of f.
	SignalVariance float64
	// NoiseVariance is the variance of the observation noise.
	NoiseVariance float64
}

// Kernel returns the ARD kernel of p (its Variance is SignalVariance). The
// length scales are copied, so later changes to p do not affect it.
func (p Params) Kernel() kernel.Kernel {
	ls := append([]float64(nil), p.LengthScales...)
	if p.Family == Matern52 {
		return kernel.Matern52ARD{LengthScales: ls, Variance: p.SignalVariance}
	}
	return kernel.RBFARD{LengthScales: ls, Variance: p.SignalVariance}
}

// Validate reports a wrong number of length scales for dimension d, an
// unknown family, or a non-positive or non-finite value.
func (p Params) Validate(d int) error {
	if p.Family != RBF && p.Family != Matern52 {
		return fmt.Errorf("hyper: unknown kernel family %d", int(p.Family))
	}
	if len(p.LengthScales) != d {
		return fmt.Errorf("hyper: %d length scales for %d dimensions", len(p.LengthScales), d)
	}
	for i, l := range p.LengthScales {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("hyper: length scale %d must be positive and finite, got %v", i, l)
		}
	}
	if !(p.SignalVariance > 0) || math.IsInf(p.SignalVariance, 0) {
		return fmt.Errorf("hyper: signal variance must be positive and finite, got %v", p.SignalVariance)
	}
	if !(p.NoiseVariance > 0) || math.IsInf(p.NoiseVariance, 0) {
		return fmt.Errorf("hyper: noise variance must be positive and finite, got %v", p.NoiseVariance)
	}
	return nil
}

// Bounds are the box, in the parameters' own units, that a fit stays inside.
// A zero pair means the default.
type Bounds struct {
	// LengthScale defaults to [1e-3, 1e2] (on the unit box: from far
	// shorter than any sensible design's spacing to "irrelevant dimension").
	LengthScale [2]float64
	// SignalVariance defaults to [1e-2, 1e2] (y is standardized).
	SignalVariance [2]float64
	// NoiseVariance defaults to [1e-6, 10]; the floor 1e-6 lets noise-free
	// problems be fitted as nearly interpolating while keeping K + sigma^2 I
	// factorable.
	NoiseVariance [2]float64
}

// Convergence of one L-BFGS run: gradient norm (in the unconstrained
// variables) below tolGrad, or the objective improving by less than tolAbs
// over tolIter iterations. Measured on GP-prior samples (d = 6, n = 100 and
// 300): tighter settings (1e-5, 1e-7, 5) cost 15-40% more evaluations and
// move the log posterior by less than 1e-4.
const (
	tolGrad = 1e-3
	tolAbs  = 1e-4
	tolIter = 2
)

// Default bounds, see Bounds.
var defaultBounds = Bounds{
	LengthScale:    [2]float64{1e-3, 1e2},
	SignalVariance: [2]float64{1e-2, 1e2},
	NoiseVariance:  [2]float64{1e-6, 10},
}

func (b Bounds) withDefaults() (Bounds, error) {
	fill := func(name string, p *[2]float64, def [2]float64) error {
		if *p == ([2]float64{}) {
			*p = def
		}
		if !(p[0] > 0) || !(p[1] >= p[0]) || math.IsInf(p[1], 0) {
			return fmt.Errorf("hyper: %s bounds must satisfy 0 < lo <= hi < inf, got %v", name, *p)
		}
		return nil
	}
	if err := fill("length-scale", &b.LengthScale, defaultBounds.LengthScale); err != nil {
		return b, err
	}
	if err := fill("signal-variance", &b.SignalVariance, defaultBounds.SignalVariance); err != nil {
		return b, err
	}
	return b, fill("noise-variance", &b.NoiseVariance, defaultBounds.NoiseVariance)
}

// Gamma is a Gamma(Shape, Rate) prior with density proportional to
// v^(Shape-1) exp(-Rate v).
type Gamma struct{ Shape, Rate float64 }

// Priors are the Gamma priors of a MAP fit. The densities are evaluated at
// the parameter value (no log-Jacobian), as GPyTorch/BoTorch do, so the
// fitted point is the mode of likelihood x prior in the parameters' own
// units.
type Priors struct {
	LengthScale, SignalVariance, NoiseVariance Gamma
}

// DefaultPriors are BoTorch's classic SingleTaskGP priors (botorch <= 0.11):
// Gamma(3, 6) on every length scale (mode 1/3, mean 1/2 of the unit box),
// Gamma(2, 0.15) on the signal variance and Gamma(1.1, 0.05) on the noise
// variance. The last two are nearly flat on the standardized scale; the
// length-scale prior keeps a fit on few points from collapsing to very short
// or very long length scales.
var DefaultPriors = Priors{
	LengthScale:    Gamma{3, 6},
	SignalVariance: Gamma{2, 0.15},
	NoiseVariance:  Gamma{1.1, 0.05},
}

// Options configure Fit.
type Options struct {
	// Family is the kernel family (RBF by default).
	Family Family
	// Init, when not nil, is the first starting point (typically the
	// previous fit, which makes a refit cheap). It is clamped into Bounds.
	Init *Params
	// Starts is the number of L-BFGS runs, from the best (by the
	// objective) points of a pool made of Init (if given), the fixed default
	// point (length scales 0.3, signal variance 1, noise variance 1e-2) and
	// Screen points drawn from Seed (log-uniform length scales in [0.05, 1],
	// signal variance in [0.3, 3], noise variance in [1e-5, 1e-1]).
	// 0 means 2. A warm refit (Init = the previous fit) with Starts 1 and
	// Screen -1 is the cheapest.
	Starts int
	// Screen is the number of seeded random points in the pool; scoring one
	// costs a third of an objective-and-gradient evaluation. 0 means 8;
	// negative means none.
	Screen int
	// MaxPoints bounds the points the likelihood is computed on, so one
	// evaluation costs O(MaxPoints^3). With n > MaxPoints the fit uses the
	// MaxPoints/4 points with the largest y (the region the optimizer
	// works in; ties broken by index) plus a uniform sample, drawn from
	// Seed, of the rest. 0 means 300.
	MaxPoints int
	// Seed makes the subset and the random starts reproducible: the same
	// inputs and options give a bit-identical Result.
	Seed uint64
	// MaxIter bounds the L-BFGS iterations per start; 0 means 100.
	MaxIter int
	// Bounds are the parameter box; zero pairs mean the defaults.
	Bounds Bounds
	// Priors are the MAP priors; nil means DefaultPriors.
	Priors *Priors
	// NoPrior fits by maximum likelihood alone (Priors is ignored).
	NoPrior bool
}

// Result is the outcome of Fit.
type Result struct {
	// Params are the fitted hyperparameters (Family = Options.Family).
	Params
	// LogMarginal is the log marginal likelihood log p(y_S | X_S, Params) on
	// the points S the fit used (eq. 5.8 of Rasmussen & Williams).
	LogMarginal float64
	// LogPosterior is LogMarginal plus the log prior densities (up to the
	// priors' normalizing constants): the maximized objective.
	LogPosterior float64
	// Evaluations is the number of objective evaluations (the screening of
	// the pool's points without gradient, the L-BFGS runs with it).
	Evaluations int
	// Points is the number of points the fit used, min(n, MaxPoints).
	Points int
	// Starts is the number of starts run.
	Starts int
}

// Fit maximizes the log marginal likelihood plus log priors over the log
// length scales, log signal variance and log noise variance of an ARD GP on
// the rows of x (n x d, in the unit box) and the standardized values y.
// Each parameter is bounded by a smooth map from an unconstrained variable
// z, log v = log lo + (log hi - log lo) sigmoid(z), so that L-BFGS sees a
// smooth objective with no kinks at the bounds.
func Fit(x *mat.Dense, y []float64, opt Options) (Result, error) {
	if x == nil {
		return Result{}, errors.New("hyper: nil x")
	}
	_, d := x.Dims()
	if err := checkData(x, y); err != nil {
		return Result{}, err
	}
	if opt.Family != RBF && opt.Family != Matern52 {
		return Result{}, fmt.Errorf("hyper: unknown kernel family %d", int(opt.Family))
	}
	if opt.Starts < 0 || opt.MaxPoints < 0 || opt.MaxIter < 0 {
		return Result{}, fmt.Errorf("hyper: negative Starts (%d), MaxPoints (%d) or MaxIter (%d)", opt.Starts, opt.MaxPoints, opt.MaxIter)
	}
	if opt.MaxPoints == 1 {
		return Result{}, errors.New("hyper: MaxPoints must be at least 2")
	}
	starts, maxPoints, maxIter := orDefault(opt.Starts, 2), orDefault(opt.MaxPoints, 300), orDefault(opt.MaxIter, 100)
	screen := orDefault(opt.Screen, 8)
	if screen < 0 {
		screen = 0
	}
	bounds, err := opt.Bounds.withDefaults()
	if err != nil {
		return Result{}, err
	}
	pri := DefaultPriors
	if opt.Priors != nil && !opt.NoPrior {
		pri = *opt.Priors
		for _, g := range []Gamma{pri.LengthScale, pri.SignalVariance, pri.NoiseVariance} {
			if !(g.Shape > 0) || !(g.Rate >= 0) || math.IsInf(g.Shape, 0) || math.IsInf(g.Rate, 0) {
				return Result{}, fmt.Errorf("hyper: Gamma prior needs a positive shape and a non-negative rate, got %+v", g)
			}
		}
	}
	if opt.Init != nil {
		ini := *opt.Init
		ini.Family = opt.Family
		if err := ini.Validate(d); err != nil {
			return Result{}, fmt.Errorf("hyper: Init: %s", strings.TrimPrefix(err.Error(), "hyper: "))
		}
	}

	rng := rand.New(rand.NewPCG(opt.Seed, 0x68797072))
	idx := subset(y, maxPoints, rng)
	xs := mat.NewDense(len(idx), d, nil)
	ys := make([]float64, len(idx))
	for i, j := range idx {
		xs.SetRow(i, x.RawRowView(j))
		ys[i] = y[j]
	}
	obj := newObjective(xs, ys, opt.Family)
	if !opt.NoPrior {
		obj.priors = &pri
	}
	sp := space{d: d, b: bounds}

	// The best evaluated point over all starts, tracked here rather than
	// taken from optimize.Result so that a start ending in a line-search
	// failure still contributes what it found.
	best := struct {
		f, lml float64
		logp   []float64
		ok     bool
	}{f: math.Inf(1)}
	logp := make([]float64, d+2)
	glog := make([]float64, d+2)
	evals := 0
	// eval computes -(LML + log prior) and its gradient in z.
	eval := func(z, gz []float64) float64 {
		evals++
		sp.toLog(logp, z)
		lml, ok := obj.eval(logp, glog)
		if !ok {
			if gz != nil {
				for i := range gz {
					gz[i] = 0
				}
			}
			return math.Inf(1)
		}
		lp := obj.logPrior(logp, glog)
		f := -(lml + lp)
		if f < best.f {
			best.f, best.lml, best.ok = f, lml, true
			best.logp = append(best.logp[:0], logp...)
		}
		if gz != nil {
			sp.chainGrad(gz, glog, z)
			for i := range gz {
				gz[i] = -gz[i]
			}
		}
		return f
	}
	// gonum asks for F and gradient at the same point separately; cache
	// the last point so each costs one factorization.
	var lastZ, lastG []float64
	lastF := 0.0
	cached := func(z []float64) bool {
		if lastZ == nil || len(lastZ) != len(z) {
			return false
		}
		for i := range z {
			if z[i] != lastZ[i] {
				return false
			}
		}
		return true
	}
	both := func(z []float64) {
		if cached(z) {
			return
		}
		lastZ = append(lastZ[:0], z...)
		if lastG == nil {
			lastG = make([]float64, len(z))
		}
		lastF = eval(z, lastG)
	}
	prob := optimize.Problem{
		Func: func(z []float64) float64 { both(z); return lastF },
		Grad: func(g, z []float64) { both(z); copy(g, lastG) },
	}
	settings := &optimize.Settings{
		MajorIterations:   maxIter,
		FuncEvaluations:   3 * maxIter,
		GradientThreshold: tolGrad,
		Converger:         &optimize.FunctionConverge{Absolute: tolAbs, Relative: 1e-9, Iterations: tolIter},
	}
	// The pool of starting points: Init, the default point, then seeded
	// draws; each is scored by the objective alone (one factorization, a
	// third of an evaluation with gradient) and L-BFGS runs from the
	// Starts best. Stable sorting keeps Init first among equals.
	type start struct {
		z []float64
		f float64
	}
	var pool []start
	add := func(s []float64) {
		z := make([]float64, d+2)
		sp.toZ(z, sp.clampLog(s))
		pool = append(pool, start{z: z, f: eval(z, nil)})
	}
	if opt.Init != nil {
		add(logParams(*opt.Init))
	}
	def := make([]float64, d+2)
	for i := range d {
		def[i] = math.Log(0.3)
	}
	def[d], def[d+1] = 0, math.Log(1e-2)
	add(def)
	for range screen {
		s := make([]float64, d+2)
		for i := range d {
			s[i] = logUniform(rng, 0.05, 1)
		}
		s[d] = logUniform(rng, 0.3, 3)
		s[d+1] = logUniform(rng, 1e-5, 1e-1)
		add(s)
	}
	sort.SliceStable(pool, func(i, j int) bool { return pool[i].f < pool[j].f })
	ran := 0
	for _, p := range pool {
		if ran == starts || math.IsInf(p.f, 1) {
			break // the rest are not factorable
		}
		ran++
		lastZ = nil
		// Errors (line-search failures near a bound, limits) only end this
		// start; the best point seen is kept above.
		_, _ = optimize.Minimize(prob, p.z, settings, &optimize.LBFGS{})
	}
	if !best.ok {
		return Result{}, errors.New("hyper: the kernel matrix could not be factorized at any start (duplicate points with too little noise?)")
	}
	p := expParams(best.logp, opt.Family)
	return Result{
		Params:       p,
		LogMarginal:  best.lml,
		LogPosterior: -best.f,
		Evaluations:  evals,
		Points:       len(idx),
		Starts:       ran,
	}, nil
}

// LogMarginal returns the log marginal likelihood of y given x and p
// (Rasmussen & Williams eq. 5.8) and its gradient with respect to
// (log l_1, ..., log l_d, log SignalVariance, log NoiseVariance) (eq. 5.9),
// on all n points. It is what Fit maximizes (without the priors), exposed
// for tests and diagnostics.
func LogMarginal(x *mat.Dense, y []float64, p Params) (float64, []float64, error) {
	if x == nil {
		return 0, nil, errors.New("hyper: nil x")
	}
	if err := checkData(x, y); err != nil {
		return 0, nil, err
	}
	_, d := x.Dims()
	if err := p.Validate(d); err != nil {
		return 0, nil, err
	}
	obj := newObjective(x, y, p.Family)
	g := make([]float64, d+2)
	lml, ok := obj.eval(logParams(p), g)
	if !ok {
		return 0, nil, errors.New("hyper: K + noise I is not positive definite")
	}
	return lml, g, nil
}

// Standardize returns z = (y - mean)/sd with the sample mean and the
// unbiased sample standard deviation of y, the scale Fit's bounds and priors
// assume. A constant y (sd 0, or a single value) gives sd 1. Map a
// prediction back with mean + sd*z and a variance with sd^2*v.
func Standardize(y []float64) (z []float64, mean, sd float64) {
	z = make([]float64, len(y))
	if len(y) == 0 {
		return z, 0, 1
	}
	mean, sd = stat.MeanStdDev(y, nil)
	if !(sd > 0) {
		sd = 1
	}
	for i, v := range y {
		z[i] = (v - mean) / sd
	}
	return z, mean, sd
}

func checkData(x *mat.Dense, y []float64) error {
	n, d := x.Dims()
	if n < 2 {
		return fmt.Errorf("hyper: need at least 2 points, got %d", n)
	}
	if d < 1 {
		return errors.New("hyper: x has no columns")
	}
	if len(y) != n {
		return fmt.Errorf("hyper: x has %d rows but y has %d values", n, len(y))
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("hyper: y[%d] = %v is not finite", i, v)
		}
	}
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("hyper: x[%d][%d] = %v is not finite", i, j, v)
			}
		}
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Log(lo) + (math.Log(hi)-math.Log(lo))*rng.Float64()
}

func logParams(p Params) []float64 {
	d := len(p.LengthScales)
	s := make([]float64, d+2)
	for i, l := range p.LengthScales {
		s[i] = math.Log(l)
	}
	s[d] = math.Log(p.SignalVariance)
	s[d+1] = math.Log(p.NoiseVariance)
	return s
}

func expParams(s []float64, f Family) Params {
	d := len(s) - 2
	p := Params{Family: f, LengthScales: make([]float64, d)}
	for i := range d {
		p.LengthScales[i] = math.Exp(s[i])
	}
	p.SignalVariance = math.Exp(s[d])
	p.NoiseVariance = math.Exp(s[d+1])
	return p
}

// subset returns the sorted indices of at most maxPoints rows: all of them
// when n <= maxPoints, else the maxPoints/4 largest y (ties by index) and a
// uniform sample of the rest drawn from rng.
func subset(y []float64, maxPoints int, rng *rand.Rand) []int {
	n := len(y)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if n <= maxPoints {
		return idx
	}
	sort.SliceStable(idx, func(a, b int) bool { return y[idx[a]] > y[idx[b]] })
	top := maxPoints / 4
	rest := idx[top:]
	rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	out := idx[:maxPoints]
	sort.Ints(out)
	return out
}

// space maps the unconstrained optimization variables z to log parameters
// inside the bounds: s = lo + (hi - lo) sigmoid(z).
type space struct {
	d int
	b Bounds
}

func (sp space) logBounds(i int) (lo, hi float64) {
	var p [2]float64
	switch {
	case i < sp.d:
		p = sp.b.LengthScale
	case i == sp.d:
		p = sp.b.SignalVariance
	default:
		p = sp.b.NoiseVariance
	}
	return math.Log(p[0]), math.Log(p[1])
}

func (sp space) clampLog(s []float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		lo, hi := sp.logBounds(i)
		out[i] = math.Min(math.Max(v, lo), hi)
	}
	return out
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func (sp space) toLog(s, z []float64) {
	for i, zi := range z {
		lo, hi := sp.logBounds(i)
		s[i] = lo + (hi-lo)*sigmoid(zi)
	}
}

// toZ inverts toLog; points on a bound are moved 1e-6 of the range inside.
func (sp space) toZ(z, s []float64) {
	for i, si := range s {
		lo, hi := sp.logBounds(i)
		if hi == lo {
			z[i] = 0
			continue
		}
		u := (si - lo) / (hi - lo)
		u = math.Min(math.Max(u, 1e-6), 1-1e-6)
		z[i] = math.Log(u / (1 - u))
	}
}

// chainGrad writes dF/dz = dF/ds * ds/dz into gz.
func (sp space) chainGrad(gz, gs, z []float64) {
	for i, zi := range z {
		lo, hi := sp.logBounds(i)
		sg := sigmoid(zi)
		gz[i] = gs[i] * (hi - lo) * sg * (1 - sg)
	}
}
