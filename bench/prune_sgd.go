package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/online"
	"github.com/bkb-go/bkb/study"
)

// SGDTask is the real iterative model of the learning-curve benchmark:
// linear least squares fitted by mini-batch SGD with momentum and an L2
// penalty on the elevators data set (built into the online package), one
// epoch per step, the value being the validation mean squared error. Rows
// i with i mod 4 = 1 train, rows with i mod 8 = 0 validate; features are
// standardized on the training rows. Each epoch visits the training rows
// in an order drawn by Fisher-Yates from splitmix64 (seed, trial, epoch),
// as the Optuna driver does. The search space is lr (log, 1e-5 to 0.1), l2
// (log, 1e-6 to 0.1) and momentum (0 to 0.95).
type SGDTask struct {
	xt, xv []float64 // row-major, d columns
	yt, yv []float64
	d      int
	Epochs int
	Batch  int
}

// sgdDiverged is the value of a trial whose weights blew up.
const sgdDiverged = 10.0

// NewSGDTask loads elevators and returns the task with 27 epochs and
// batches of 32.
func NewSGDTask() (*SGDTask, error) {
	ds, err := online.OpenData("elevators")
	if err != nil {
		return nil, err
	}
	t := &SGDTask{d: ds.D, Epochs: 27, Batch: 32}
	for i := range ds.N {
		switch {
		case i%4 == 1:
			t.xt, t.yt = append(t.xt, ds.Row(i)...), append(t.yt, ds.Y[i])
		case i%8 == 0:
			t.xv, t.yv = append(t.xv, ds.Row(i)...), append(t.yv, ds.Y[i])
		}
	}
	if len(t.yt) == 0 || len(t.yv) == 0 {
		return nil, errors.New("bench: elevators has too few rows")
	}
	for j := range t.d {
		m, s := 0.0, 0.0
		for i := range t.yt {
			m += t.xt[i*t.d+j]
		}
		m /= float64(len(t.yt))
		for i := range t.yt {
			s += (t.xt[i*t.d+j] - m) * (t.xt[i*t.d+j] - m)
		}
		s = math.Sqrt(s / float64(len(t.yt)))
		if s == 0 {
			s = 1
		}
		for i := range t.yt {
			t.xt[i*t.d+j] = (t.xt[i*t.d+j] - m) / s
		}
		for i := range t.yv {
			t.xv[i*t.d+j] = (t.xv[i*t.d+j] - m) / s
		}
	}
	return t, nil
}

// Name implements PruneTask.
func (t *SGDTask) Name() string { return "elevators-sgd" }

// Steps implements PruneTask.
func (t *SGDTask) Steps() int { return t.Epochs }

// Space implements PruneTask.
func (t *SGDTask) Space() (study.Space, error) {
	return study.NewSpace(study.LogFloat("lr", 1e-5, 0.1), study.LogFloat("l2", 1e-6, 0.1), study.Float("momentum", 0, 0.95))
}

// Shuffle returns the order of n rows for (seed, trial, epoch):
// Fisher-Yates with splitmix64 draws (the Optuna driver's order).
func Shuffle(n int, seed uint64, trial, epoch int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	h := splitmix(seed ^ splitmix(uint64(trial)<<20^uint64(epoch)^0x5eed))
	for i := n - 1; i > 0; i-- {
		h = splitmix(h)
		j := int(h % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Start implements PruneTask: x is (lr, l2, momentum).
func (t *SGDTask) Start(x []float64, seed uint64, trial int) func(int) float64 {
	lr, l2, mom := x[0], x[1], x[2]
	d := t.d
	w, v := make([]float64, d+1), make([]float64, d+1) // the last is the intercept
	g := make([]float64, d+1)
	diverged := false
	return func(epoch int) float64 {
		if diverged {
			return sgdDiverged
		}
		order := Shuffle(len(t.yt), seed, trial, epoch)
		for start := 0; start < len(order); start += t.Batch {
			batch := order[start:min(start+t.Batch, len(order))]
			clear(g)
			for _, i := range batch {
				row := t.xt[i*d : (i+1)*d]
				e := w[d] - t.yt[i]
				for j, xj := range row {
					e += w[j] * xj
				}
				for j, xj := range row {
					g[j] += e * xj
				}
				g[d] += e
			}
			nb := float64(len(batch))
			for j := range g {
				gj := g[j] / nb
				if j < d {
					gj += l2 * w[j]
				}
				v[j] = mom*v[j] - lr*gj
				w[j] += v[j]
			}
		}
		mse := 0.0
		for i := range t.yv {
			e := w[d] - t.yv[i]
			for j, xj := range t.xv[i*d : (i+1)*d] {
				e += w[j] * xj
			}
			mse += e * e
		}
		mse /= float64(len(t.yv))
		if math.IsNaN(mse) || mse > sgdDiverged {
			diverged = true
			return sgdDiverged
		}
		return mse
	}
}

// LeastSquaresMSE is the validation error of the least-squares fit on the
// training rows (by QR, no penalty): the known answer SGD approaches.
func (t *SGDTask) LeastSquaresMSE() (float64, error) {
	n, d := len(t.yt), t.d
	a := mat.NewDense(n, d+1, nil)
	for i := range n {
		for j := range d {
			a.Set(i, j, t.xt[i*d+j])
		}
		a.Set(i, d, 1)
	}
	var w mat.VecDense
	if err := w.SolveVec(a, mat.NewVecDense(n, slices.Clone(t.yt))); err != nil {
		return 0, fmt.Errorf("bench: least squares: %w", err)
	}
	mse := 0.0
	for i := range t.yv {
		e := w.AtVec(d) - t.yv[i]
		for j := range d {
			e += w.AtVec(j) * t.xv[i*d+j]
		}
		mse += e * e
	}
	return mse / float64(len(t.yv)), nil
}
