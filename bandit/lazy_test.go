package bandit

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// lazyProblem is an arm set in [0,1]^d and the standardized noise-free
// values of a test function on its box there.
func lazyProblem(t testing.TB, f *objectives.Function, n int, seed uint64) (*mat.Dense, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	arms := mat.NewDense(n, f.Dim, nil)
	vals := make([]float64, n)
	x := make([]float64, f.Dim)
	for i := range n {
		for j := range f.Dim {
			u := rng.Float64()
			arms.Set(i, j, u)
			x[j] = f.Lower[j] + u*(f.Upper[j]-f.Lower[j])
		}
		vals[i] = f.Value(x)
	}
	mean, sd := stat.MeanStdDev(vals, nil)
	for i := range vals {
		vals[i] = (vals[i] - mean) / sd
	}
	return arms, vals
}

// TestLazyGPUCBEqualsFullScan plays lazy GP-UCB and the full scan side by
// side on the same rewards: every step they must ask for the same arm
// (the full scan is the reference: the exact UCB of every arm).
func TestLazyGPUCBEqualsFullScan(t *testing.T) {
	t.Parallel()
	steps := 2500
	if testing.Short() {
		steps = 700
	}
	cases := []struct {
		name string
		f    *objectives.Function
		k    kernel.Kernel
		beta float64
		n    int
	}{
		{"branin/rbf0.2", objectives.Branin(), kernel.RBF{LengthScale: 0.2}, 2, 400},
		{"hartmann3/matern2.5", objectives.Hartmann3(), kernel.Matern{Nu: 2.5, LengthScale: 0.3}, 2, 400},
		{"hartmann6/rbf0.3", objectives.Hartmann6(), kernel.RBF{LengthScale: 0.3}, 1, 500},
		{"ackley4/matern1.5", objectives.Ackley(4), kernel.Matern{Nu: 1.5, LengthScale: 0.25}, 3, 300},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			arms, vals := lazyProblem(t, c.f, c.n, uint64(ci+1))
			opt := Options{Kernel: c.k, Lambda: 0.01, Beta: acquisition.Constant(c.beta), Seed: uint64(ci + 3)}
			full, err := NewGPUCB(arms, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Lazy = true
			lazy, err := NewGPUCB(arms, opt)
			if err != nil {
				t.Fatal(err)
			}
			noise := rand.New(rand.NewPCG(uint64(ci), 11))
			for s := 1; s <= steps; s++ {
				a, err := full.Ask()
				if err != nil {
					t.Fatal(err)
				}
				b, err := lazy.Ask()
				if err != nil {
					t.Fatal(err)
				}
				if a != b {
					t.Fatalf("step %d: full scan asks for arm %d, lazy for %d", s, a, b)
				}
				y := vals[a] + 0.1*noise.NormFloat64()
				if err := full.Tell(a, y); err != nil {
					t.Fatal(err)
				}
				if err := lazy.Tell(a, y); err != nil {
					t.Fatal(err)
				}
			}
			st := lazy.Stats()
			t.Logf("%d steps, A=%d: rows read %.1f per step (%.1f%% of A), computed %d, working set %d",
				steps, c.n, float64(st.RowsRead)/float64(steps), 100*float64(st.RowsRead)/float64(steps*c.n), st.RowsComputed, st.WorkingSet)
		})
	}
}
