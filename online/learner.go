package online

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Learner is an online learner in the prequential protocol of Jézéquel et al. (NeurIPS 2019), Dai et al. (NIPS 2014), Li and Liao (ICML 2023) and Wen et al. (IJCAI 2024):
// at round t it receives x_t and predicts (Predict), then the label y_t is
// revealed and it updates (Learn).
//
// Predict must not change what the learner would predict at any other
// point: adversaries (Jézéquel et al., NeurIPS 2019, Appendix G) probe it at many candidate
// points before choosing x_t. Learn(x, y) performs round t; calling Predict(x)
// before it is allowed but not required. Neither Predict nor Learn retains x.
type Learner interface {
	// Predict returns the prediction yhat_t at x (a real score for
	// classification; its sign is the predicted label).
	Predict(x []float64) float64
	// Learn reveals y at x and updates the learner. A learner may refuse to
	// grow past a capacity (Exact) and reports that as an error.
	Learn(x []float64, y float64) error
	// Size returns the dictionary size or number of features in use.
	Size() int
	// Name identifies the learner and its main hyperparameters.
	Name() string
}

// Task is the kind of prediction problem a stream carries.
type Task int

const (
	// Regression is scored by the online mean squared error
	// (1/T) sum_t (yhat_t - y_t)^2 (Li and Liao, ICML 2023, Appendix A).
	Regression Task = iota
	// Classification has labels in {-1, +1} and is scored by the online
	// mistake rate #{t : sign(yhat_t) != y_t} / T, with sign(0) = +1 (the
	// tie-break of Wen et al. (IJCAI 2024), pitfall 10).
	Classification
)

// String returns "regression" or "classification".
func (t Task) String() string {
	switch t {
	case Regression:
		return "regression"
	case Classification:
		return "classification"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Loss is a convex loss l(f, y) of a real prediction f and a target y, used
// by the first-order and Newton-step learners.
type Loss int

const (
	// Square is l = (f - y)^2, l' = 2 (f - y) (Li and Liao, ICML 2023, Section 2).
	Square Loss = iota
	// Hinge is l = max(0, 1 - y f), l' = -y when y f < 1 and 0 otherwise
	// (Wen et al., IJCAI 2024, Section 5; Dai et al. (NIPS 2014), Section 4).
	Hinge
	// Logistic is l = log(1 + exp(-y f)), l' = -y sigmoid(-y f)
	// (Dai et al., NIPS 2014, Section 4).
	Logistic
)

// String returns the loss name.
func (l Loss) String() string {
	switch l {
	case Square:
		return "square"
	case Hinge:
		return "hinge"
	case Logistic:
		return "logistic"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss returns the Loss named s ("square", "hinge" or "logistic").
func ParseLoss(s string) (Loss, error) {
	switch s {
	case "square", "squared":
		return Square, nil
	case "hinge":
		return Hinge, nil
	case "logistic", "log":
		return Logistic, nil
	}
	return 0, fmt.Errorf("online: unknown loss %q (want square, hinge or logistic)", s)
}

// Value returns l(f, y).
func (l Loss) Value(f, y float64) float64 {
	switch l {
	case Square:
		return (f - y) * (f - y)
	case Hinge:
		return math.Max(0, 1-y*f)
	case Logistic:
		z := -y * f
		if z > 0 {
			return z + math.Log1p(math.Exp(-z))
		}
		return math.Log1p(math.Exp(z))
	}
	panic(fmt.Sprintf("online: unknown loss %d", int(l)))
}

// Deriv returns dl/df at (f, y).
func (l Loss) Deriv(f, y float64) float64 {
	switch l {
	case Square:
		return 2 * (f - y)
	case Hinge:
		if y*f < 1 {
			return -y
		}
		return 0
	case Logistic:
		return -y * sigmoid(-y*f)
	}
	panic(fmt.Sprintf("online: unknown loss %d", int(l)))
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func (l Loss) valid() error {
	if l < Square || l > Logistic {
		return fmt.Errorf("online: unknown loss %d", int(l))
	}
	return nil
}

// Stream is a finite sequence of examples (x_t, y_t) presented once, in
// order. Next returns ok = false after the last example. The x returned by
// Next may be overwritten by the following call.
type Stream interface {
	Next() (x []float64, y float64, ok bool)
	// Len is the number of examples, T.
	Len() int
	// Dim is the input dimension d.
	Dim() int
	// Task is the kind of targets.
	Task() Task
}

// Result summarizes one prequential pass.
type Result struct {
	Learner string
	Task    Task
	N       int // examples seen
	// SquaredError is sum_t (yhat_t - y_t)^2.
	SquaredError float64
	// Mistakes is #{t : sign(yhat_t) != y_t}, sign(0) = +1 (classification).
	Mistakes int
	// Size is the learner's final dictionary size or feature count.
	Size int
	// Elapsed is the wall time spent in Predict and Learn (not in the
	// stream).
	Elapsed time.Duration
	// CPU is the CPU time of the pass (learner and stream) on its OS thread,
	// where the platform reports it (Linux), else 0. Unlike Elapsed it is
	// not inflated by other processes sharing the cores.
	CPU time.Duration
}

// MSE returns the online mean squared error SquaredError / N.
func (r Result) MSE() float64 {
	if r.N == 0 {
		return math.NaN()
	}
	return r.SquaredError / float64(r.N)
}

// MistakeRate returns Mistakes / N.
func (r Result) MistakeRate() float64 {
	if r.N == 0 {
		return math.NaN()
	}
	return float64(r.Mistakes) / float64(r.N)
}

// Score returns the paper metric: MSE for regression, the mistake rate for
// classification.
func (r Result) Score() float64 {
	if r.Task == Classification {
		return r.MistakeRate()
	}
	return r.MSE()
}

// Step is one prequential round, reported to an Observer.
type Step struct {
	T    int // 0-based round
	X    []float64
	Y    float64
	Yhat float64
}

// Options tunes Run.
type Options struct {
	// Progress, if not nil, is called every ProgressEvery rounds and at the
	// end with the number of rounds done and the stream length.
	Progress func(done, total int)
	// ProgressEvery defaults to 1000.
	ProgressEvery int
	// Observe, if not nil, is called after every round. Step.X aliases the
	// stream's buffer.
	Observe func(Step)
}

// Prequential runs l over stream in one online pass: for every example it
// calls Predict(x_t), scores the prediction against y_t, then Learn(x_t,
// y_t). It stops with ctx's error when ctx is done, and wraps learner
// errors with the round at which they occurred.
func Prequential(ctx context.Context, l Learner, stream Stream, progress func(done, total int)) (Result, error) {
	return Run(ctx, l, stream, Options{Progress: progress})
}

// Run is Prequential with options.
func Run(ctx context.Context, l Learner, stream Stream, opt Options) (res Result, err error) {
	if l == nil || stream == nil {
		return Result{}, errors.New("online: nil learner or stream")
	}
	every := opt.ProgressEvery
	if every <= 0 {
		every = 1000
	}
	res = Result{Learner: l.Name(), Task: stream.Task()}
	total := stream.Len()
	var elapsed time.Duration
	lockThread()
	defer unlockThread()
	cpu0, cpuOK := threadCPU()
	defer func() {
		if cpu1, ok := threadCPU(); ok && cpuOK {
			res.CPU = cpu1 - cpu0
		}
	}()
	for t := 0; ; t++ {
		if t%256 == 0 {
			if err := ctx.Err(); err != nil {
				res.Elapsed = elapsed
				return res, err
			}
		}
		x, y, ok := stream.Next()
		if !ok {
			break
		}
		start := time.Now()
		yhat := l.Predict(x)
		err = l.Learn(x, y)
		elapsed += time.Since(start)
		if err != nil {
			res.Elapsed = elapsed
			return res, fmt.Errorf("online: %s at round %d: %w", l.Name(), t+1, err)
		}
		res.N++
		d := yhat - y
		res.SquaredError += d * d
		if res.Task == Classification && sign(yhat) != y {
			res.Mistakes++
		}
		if opt.Observe != nil {
			opt.Observe(Step{T: t, X: x, Y: y, Yhat: yhat})
		}
		if opt.Progress != nil && res.N%every == 0 {
			opt.Progress(res.N, total)
		}
	}
	res.Size = l.Size()
	res.Elapsed = elapsed
	if opt.Progress != nil && res.N%every != 0 {
		opt.Progress(res.N, total)
	}
	return res, nil
}

// sign returns +1 for f >= 0 and -1 otherwise (sign(0) = +1).
func sign(f float64) float64 {
	if f >= 0 {
		return 1
	}
	return -1
}

func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(x); i += 2 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
	}
	if i < len(x) {
		s0 += x[i] * y[i]
	}
	return s0 + s1
}

// axpy does y += a x.
func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

func checkDim(x []float64, d int) error {
	if len(x) != d {
		return fmt.Errorf("online: point has dimension %d, want %d", len(x), d)
	}
	return nil
}

func positive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("online: %s must be positive and finite, got %v", name, v)
	}
	return nil
}
