package candidates

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// PolishOptions configure Polish.
type PolishOptions struct {
	// MaxEvals bounds the calls of f (and Grad) made by Polish, up to the
	// calls of one L-BFGS iteration past the bound; 0 means 200.
	MaxEvals int
	// Grad, when not nil, writes the gradient of f at x into grad (both of
	// the full dimension; only the continuous coordinates are read).
	// Without it the gradient is a central finite difference with step
	// Step, one-sided at the box's faces.
	Grad func(grad, x []float64)
	// Step is the finite-difference step; 0 means 1e-6.
	Step float64
	// Batch, when not nil, writes f(xs[i]) into out[i] for every point
	// of xs: the same values as f, made together (a posterior scores a
	// group of points faster than one at a time). The finite-difference
	// gradient's points are evaluated by one call; Polish's result is
	// the same with or without it.
	Batch func(xs [][]float64, out []float64)
}

var errBudget = errors.New("candidates: evaluation budget spent")

// budgetRecorder stops optimize.Minimize once the evaluation budget is spent;
// gonum's own limits count function and gradient calls separately, while a
// finite-difference gradient costs several calls of f.
type budgetRecorder struct{ used, max *int }

func (b budgetRecorder) Init() error { return nil }
func (b budgetRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	if *b.used >= *b.max {
		return errBudget
	}
	return nil
}

// Polish maximizes f over the continuous coordinates of dom from x0, a valid
// point of dom, holding the discrete and categorical coordinates at their
// values in x0, and returns the best point it evaluated and f there (x0 and
// f(x0) if nothing better was found). The point stays inside [0, 1]: L-BFGS
// runs on unconstrained variables u with x = clamp(u, 0, 1) and the
// objective f(clamp(u)) - 500 ||u - clamp(u)||^2, which equals f inside the
// box and pulls a step that leaves it back to the face, so maxima on a face
// are reached exactly. f must be deterministic for Polish to be.
func Polish(f func(x []float64) float64, x0 []float64, dom Domain, opt PolishOptions) ([]float64, float64, error) {
	if f == nil {
		return nil, 0, errors.New("candidates: nil function")
	}
	if err := dom.Validate(); err != nil {
		return nil, 0, err
	}
	if err := dom.Check(x0); err != nil {
		return nil, 0, fmt.Errorf("candidates: start: %w", err)
	}
	if opt.MaxEvals < 0 || opt.Step < 0 || math.IsNaN(opt.Step) {
		return nil, 0, fmt.Errorf("candidates: negative MaxEvals (%d) or Step (%v)", opt.MaxEvals, opt.Step)
	}
	maxEvals := opt.MaxEvals
	if maxEvals == 0 {
		maxEvals = 200
	}
	h := opt.Step
	if h == 0 {
		h = 1e-6
	}
	const rho = 1000.0

	x := append([]float64(nil), x0...)
	best := append([]float64(nil), x0...)
	used := 1
	bestF := f(x0)
	cont := dom.ContinuousIndices()
	if len(cont) == 0 || math.IsNaN(bestF) {
		return best, bestF, nil
	}
	// record counts an evaluation of f at x, of value v, and keeps the
	// best.
	record := func(x []float64, v float64) float64 {
		used++
		if v > bestF {
			bestF = v
			copy(best, x)
		}
		return v
	}
	call := func(x []float64) float64 { return record(x, f(x)) }
	var fdPoints [][]float64 // the gradient's points for opt.Batch
	var fdValues []float64
	// set writes clamp(u) into the continuous coordinates of x and returns
	// the penalty ||u - clamp(u)||^2.
	set := func(u []float64) float64 {
		var pen float64
		for j, i := range cont {
			c := math.Min(math.Max(u[j], 0), 1)
			pen += (u[j] - c) * (u[j] - c)
			x[i] = c
		}
		return pen
	}
	full := make([]float64, len(x0))
	prob := optimize.Problem{
		Func: func(u []float64) float64 {
			pen := set(u)
			v := call(x)
			if math.IsNaN(v) {
				return math.Inf(1)
			}
			return -v + 0.5*rho*pen
		},
		Grad: func(g, u []float64) {
			set(u)
			switch {
			case opt.Grad != nil:
				used++
				opt.Grad(full, x)
			case opt.Batch != nil:
				// The points and the order of the loop below, evaluated
				// by one call.
				if fdPoints == nil {
					fdPoints, fdValues = make([][]float64, 2*len(cont)), make([]float64, 2*len(cont))
					for k := range fdPoints {
						fdPoints[k] = make([]float64, len(x))
					}
				}
				for j, i := range cont {
					xi := x[i]
					up, dn := math.Min(xi+h, 1), math.Max(xi-h, 0)
					copy(fdPoints[2*j], x)
					fdPoints[2*j][i] = up
					copy(fdPoints[2*j+1], x)
					fdPoints[2*j+1][i] = dn
				}
				opt.Batch(fdPoints, fdValues)
				for j, i := range cont {
					fu := record(fdPoints[2*j], fdValues[2*j])
					fd := record(fdPoints[2*j+1], fdValues[2*j+1])
					full[i] = (fu - fd) / (fdPoints[2*j][i] - fdPoints[2*j+1][i])
				}
			default:
				for _, i := range cont {
					xi := x[i]
					up, dn := math.Min(xi+h, 1), math.Max(xi-h, 0)
					x[i] = up
					fu := call(x)
					x[i] = dn
					fd := call(x)
					x[i] = xi
					full[i] = (fu - fd) / (up - dn)
				}
			}
			for j, i := range cont {
				switch {
				case u[j] > 1:
					g[j] = rho * (u[j] - 1)
				case u[j] < 0:
					g[j] = rho * u[j]
				default:
					g[j] = -full[i]
				}
			}
		},
	}
	u0 := make([]float64, len(cont))
	for j, i := range cont {
		u0[j] = x0[i]
	}
	settings := &optimize.Settings{
		GradientThreshold: 1e-10,
		FuncEvaluations:   maxEvals,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-15, Relative: 1e-15, Iterations: 10},
		Recorder:          budgetRecorder{&used, &maxEvals},
	}
	// Line-search failures and the budget end the search; best holds the
	// best point evaluated either way.
	_, _ = optimize.Minimize(prob, u0, settings, &optimize.LBFGS{})
	return best, bestF, nil
}

// UCB returns the acquisition x -> mean(x) + beta sd(x) (GP-UCB, Srinivas et
// al. 2010) from a posterior's predictive function, such as the Predict
// method of gp.Exact or gp.DTC, for Polish. A prediction error gives NaN,
// which Polish treats as no improvement.
func UCB(predict func(x []float64) (mean, variance float64, err error), beta float64) func(x []float64) float64 {
	return func(x []float64) float64 {
		m, v, err := predict(x)
		if err != nil {
			return math.NaN()
		}
		return m + beta*math.Sqrt(math.Max(v, 0))
	}
}
