package bandit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/objectives"
)

// scaled wraps a reward so that its noise-free values over the arm set
// have mean 0 and standard deviation 1: the GP prior has unit variance, and
// Branin's raw range (about 300) would otherwise make any beta meaningless.
type scaled struct {
	r          *objectives.Reward
	shift, div float64
}

func (s *scaled) Evaluate(ctx context.Context, x []float64) (float64, error) {
	y, err := s.r.Evaluate(ctx, x)
	return (y - s.shift) / s.div, err
}

func (s *scaled) noiseless(x []float64) float64 { return (s.r.Noiseless(x) - s.shift) / s.div }

// unitArms maps arms drawn in [0,1]^d onto the function's box; policies see
// the unit-box arms, the objective the box.
type boxed struct {
	inner *scaled
	f     *objectives.Function
	buf   []float64
}

func (b *boxed) toBox(u []float64) []float64 {
	for i, v := range u {
		b.buf[i] = b.f.Lower[i] + v*(b.f.Upper[i]-b.f.Lower[i])
	}
	return b.buf
}

func (b *boxed) Evaluate(ctx context.Context, u []float64) (float64, error) {
	return b.inner.Evaluate(ctx, b.toBox(u))
}

func (b *boxed) noiseless(u []float64) float64 { return b.inner.noiseless(b.toBox(u)) }

func newBoxed(f *objectives.Function, arms *mat.Dense, seed uint64) *boxed {
	r, _ := objectives.NewReward(f, 0, seed)
	b := &boxed{f: f, buf: make([]float64, f.Dim)}
	n, _ := arms.Dims()
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = r.Noiseless(b.toBox(arms.RawRowView(i)))
	}
	mean, std := stat.MeanStdDev(vals, nil)
	sc := &scaled{shift: mean, div: std}
	// Noise of std 0.05 on the standardised scale.
	sc.r, _ = objectives.NewReward(f, 0.05*std, seed)
	b.inner = sc
	return b
}

// TestRegretExperiment is issue 3's experiment: Branin and Hartmann 3 over
// 1,000 random arms, T = 500, 5 seeds. BKB's cumulative regret must be
// within 1.5x of GP-UCB's, both far below random search, and BKB's final
// dictionary far below T.
func TestRegretExperiment(t *testing.T) {
	const A, T, seeds = 1000, 500, 5
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-10s %-8s %14s %14s %10s %12s\n", "function", "policy", "cum regret", "simple regret", "|S| at T", "ms/step@500")
	for _, name := range []string{"branin", "hartmann3"} {
		f, err := objectives.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		cum := map[string][]float64{}
		for seed := uint64(1); seed <= seeds; seed++ {
			arms, _ := objectives.Uniform(objectives.Box{Lower: make([]float64, f.Dim), Upper: ones(f.Dim)}, A, seed)
			opt := Options{Seed: seed, Lambda: 0.0025, Beta: acquisition.Constant(3)}
			for _, pol := range []string{"gp-ucb", "bkb", "bkb-incr", "random"} {
				var p Policy
				switch pol {
				case "gp-ucb":
					p, _ = NewGPUCB(arms, opt)
				case "bkb":
					o := opt
					p, _ = NewBKB(arms, o)
				case "bkb-incr":
					o := opt
					o.Incremental = true
					p, _ = NewBKB(arms, o)
				case "random":
					p, _ = NewRandom(A, seed)
				}
				obj := newBoxed(f, arms, seed)
				tr, err := Run(context.Background(), p, arms, obj, RunOptions{Steps: T, Noiseless: obj.noiseless})
				if err != nil {
					t.Fatal(err)
				}
				cum[pol] = append(cum[pol], tr.CumRegret())
				last := tr.Steps[T-1]
				if strings.HasPrefix(pol, "bkb") && last.DictionarySize > T/5 {
					t.Errorf("%s seed %d: BKB dictionary %d, not far below T=%d", name, seed, last.DictionarySize, T)
				}
				fmt.Fprintf(&table, "%-10s %-8s %14.2f %14.4f %10d %8d %12.3f\n", name, pol, tr.CumRegret(), last.SimpleRegret, last.DictionarySize, last.DictionaryChanges, 1e3*tr.MeanSeconds(T-50, T))
			}
		}
		g, b, r := stat.Mean(cum["gp-ucb"], nil), stat.Mean(cum["bkb"], nil), stat.Mean(cum["random"], nil)
		bi := stat.Mean(cum["bkb-incr"], nil)
		fmt.Fprintf(&table, "%-10s mean cumulative regret: gp-ucb %.2f  bkb %.2f  bkb-incr %.2f  random %.2f\n", name, g, b, bi, r)
		// beta = 3 on rewards standardised over the arms: with beta = 2 an
		// unexplored arm's UCB (2 prior sd) can sit below a local optimum
		// (Hartmann 3 reaches 3.3 sd), and a run, of any policy, may stay there.
		if b > 1.5*g || bi > 1.5*g {
			t.Errorf("%s: BKB cumulative regret %.2f (incremental %.2f) above 1.5x GP-UCB's %.2f", name, b, bi, g)
		}
		if g > r/4 || b > r/4 {
			t.Errorf("%s: regret not far below random search (gp-ucb %.2f, bkb %.2f, random %.2f)", name, g, b, r)
		}
		if math.IsNaN(g + b + r) {
			t.Errorf("%s: NaN regret", name)
		}
	}
	t.Log(table.String())
}

func ones(d int) []float64 {
	o := make([]float64, d)
	for i := range o {
		o[i] = 1
	}
	return o
}
