package bandit

import (
	"errors"
	"math"
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
		vals[i] = -f.Value(x) // rewards: the functions are minimized
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
				a, b := askBoth(t, full, lazy)
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

// TestLazyGPUCBPending: with batches (arms asked and not yet told) lazy
// GP-UCB still asks for the full scan's arms; the bound covers the
// conditional variances because conditioning only lowers them.
func TestLazyGPUCBPending(t *testing.T) {
	t.Parallel()
	arms, vals := lazyProblem(t, objectives.Hartmann3(), 300, 9)
	opt := Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.01, Seed: 4}
	full, _ := NewGPUCB(arms, opt)
	opt.Lazy = true
	lazy, _ := NewGPUCB(arms, opt)
	noise := rand.New(rand.NewPCG(2, 3))
	for round := 0; round < 60; round++ {
		var batch []int
		for k := 0; k < 3; k++ {
			a, b := askBoth(t, full, lazy)
			if a != b {
				t.Fatalf("round %d ask %d: full scan %d, lazy %d", round, k, a, b)
			}
			batch = append(batch, a)
		}
		for _, a := range batch {
			y := vals[a] + 0.1*noise.NormFloat64()
			if err := full.Tell(a, y); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Tell(a, y); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLazyBKB plays lazy BKB against the full scan with the debug check:
// no arm may be above its bound, and the arms asked for are the same
// while no bound is violated (both posteriors hold the same dictionary).
func TestLazyBKB(t *testing.T) {
	t.Parallel()
	steps := 400
	if testing.Short() {
		steps = 150
	}
	for _, inc := range []bool{true, false} {
		arms, vals := lazyProblem(t, objectives.Hartmann3(), 250, 5)
		// lambda 0.1: points leave the dictionary, so the bound's
		// measured part (dictionary changes) is exercised.
		opt := Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.1, Seed: 8, Incremental: inc}
		full, _ := NewBKB(arms, opt)
		opt.Lazy, opt.LazyCheck = true, true
		lazy, _ := NewBKB(arms, opt)
		noise := rand.New(rand.NewPCG(6, 3))
		same := 0
		var rf, rl float64
		best := vals[0]
		for _, v := range vals {
			best = math.Max(best, v)
		}
		for s := 1; s <= steps; s++ {
			a, b := askBoth(t, full, lazy)
			if a == b {
				same++
			}
			rf += best - vals[a]
			rl += best - vals[b]
			e := 0.1 * noise.NormFloat64()
			if err := full.Tell(a, vals[a]+e); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Tell(b, vals[b]+e); err != nil {
				t.Fatal(err)
			}
		}
		st := lazy.Stats()
		t.Logf("incremental %v: %d/%d asks the same; cumulative regret full %.1f, lazy %.1f; %d bound violations; rows read %.1f%% of A",
			inc, same, steps, rf, rl, st.BoundViolations, 100*float64(st.RowsRead)/float64(steps*250))
		if st.BoundViolations != 0 {
			t.Errorf("incremental %v: %d arms above their lazy bound", inc, st.BoundViolations)
		} else if same != steps {
			t.Errorf("incremental %v: no bound violated, yet %d of %d asks differ", inc, steps-same, steps)
		}
	}
}

// TestLazyEliminate: elimination removes arms, never the best one on a
// noise-free problem with a valid confidence width, and the run finds it.
func TestLazyEliminate(t *testing.T) {
	t.Parallel()
	arms, vals := lazyProblem(t, objectives.Branin(), 400, 2)
	bestArm := 0
	for i, v := range vals {
		if v > vals[bestArm] {
			bestArm = i
		}
	}
	opt := Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.001, Seed: 1, Lazy: true, Eliminate: true}
	p, err := NewGPUCB(arms, opt)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for s := 0; s < 150; s++ {
		a, err := p.Ask()
		if err != nil {
			t.Fatal(err)
		}
		found = found || a == bestArm
		if err := p.Tell(a, vals[a]); err != nil {
			t.Fatal(err)
		}
		if p.lz.dead[bestArm] {
			t.Fatalf("step %d: the best arm was eliminated", s)
		}
	}
	st := p.Stats()
	t.Logf("eliminated %d of 400 arms; working set %d", st.ArmsEliminated, st.WorkingSet)
	if st.ArmsEliminated == 0 || !found {
		t.Errorf("eliminated %d arms, best arm found %v", st.ArmsEliminated, found)
	}
	if _, err := NewGPUCB(arms, Options{Eliminate: true}); err == nil {
		t.Error("Eliminate without Lazy: no error")
	}
	if _, err := NewThompson(arms, Options{Lazy: true}, false); err == nil {
		t.Error("Lazy Thompson sampling: no error")
	}
}

// TestLazyMarkPending: arms marked pending (a study's failed evaluations
// and enqueued points) join the working set, and lazy GP-UCB and BKB still
// ask for the full scan's arms.
func TestLazyMarkPending(t *testing.T) {
	t.Parallel()
	arms, vals := lazyProblem(t, objectives.Hartmann3(), 300, 12)
	for _, dtc := range []bool{false, true} {
		opt := Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.01, Seed: 5}
		mk := NewGPUCB
		if dtc {
			mk = NewBKB
		}
		full, _ := mk(arms, opt)
		opt.Lazy, opt.LazyCheck = true, true
		lazy, _ := mk(arms, opt)
		noise := rand.New(rand.NewPCG(4, 1))
		marks := rand.New(rand.NewPCG(9, 2))
		for s := 0; s < 120; s++ {
			if s%10 == 3 {
				m := marks.IntN(300) // never told: pending for good
				if err := full.MarkPending(m); err != nil {
					t.Fatal(err)
				}
				if err := lazy.MarkPending(m); err != nil {
					t.Fatal(err)
				}
			}
			a, b := askBoth(t, full, lazy)
			if a != b {
				t.Fatalf("dtc %v, step %d: full scan %d, lazy %d", dtc, s, a, b)
			}
			y := vals[a] + 0.1*noise.NormFloat64()
			if err := full.Tell(a, y); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Tell(a, y); err != nil {
				t.Fatal(err)
			}
		}
		if v := lazy.Stats().BoundViolations; v != 0 {
			t.Errorf("dtc %v: %d bound violations", dtc, v)
		}
	}
}

// TestLazyBBKBOptions: Eliminate and LazyCheck need Lazy, and BruteForce
// (every arm recomputed) cannot be lazy: errors, not a full scan in
// disguise.
func TestLazyBBKBOptions(t *testing.T) {
	t.Parallel()
	arms, _ := lazyProblem(t, objectives.Branin(), 50, 1)
	for _, o := range []BBKBOptions{{Options: Options{Eliminate: true}}, {Options: Options{LazyCheck: true}},
		{Options: Options{Lazy: true}, BruteForce: true}} {
		if _, err := NewBBKB(arms, o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
}

// TestLazyBBKBEqualsFullScan plays lazy BBKB and the full scan side by
// side on the same rewards, asking each batch's arms one by one (as
// parallel workers do, ErrBatchFull ending a batch) and telling them
// when the batch is full: every ask must return the full scan's arm,
// over several functions, kernels and batch rules; LazyCheck must find
// no arm above its bound at any batch's start (the bound's part for
// dictionary changes is measured, not proven: docs/scaling.md); and on
// 20,000 arms the lazy policy must read under a quarter of the rows the
// full scan reads.
func TestLazyBBKBEqualsFullScan(t *testing.T) {
	t.Parallel()
	steps := 1500
	if testing.Short() {
		steps = 400
	}
	cases := []struct {
		name string
		f    *objectives.Function
		k    kernel.Kernel
		n    int
		lam  float64
		inc  bool
		opt  BBKBOptions
	}{
		{"hartmann3/rbf/ratio2", objectives.Hartmann3(), kernel.RBF{LengthScale: 0.2}, 800, 0.1, true, BBKBOptions{}},
		{"hartmann3/rbf/a20000/max4", objectives.Hartmann3(), kernel.RBF{LengthScale: 0.2}, 20000, 0.1, true, BBKBOptions{MaxBatch: 4}},
		{"hartmann3/rbf/fresh/max4", objectives.Hartmann3(), kernel.RBF{LengthScale: 0.2}, 800, 0.1, false, BBKBOptions{MaxBatch: 4}},
		{"branin/matern/distinct/min3", objectives.Branin(), kernel.Matern{Nu: 2.5, LengthScale: 0.25}, 600, 0.05, true,
			BBKBOptions{Distinct: true, MinBatch: 3, MaxBatch: 6}},
		{"hartmann6/rbf/ratio4", objectives.Hartmann6(), kernel.RBF{LengthScale: 0.35}, 1000, 0.1, true, BBKBOptions{Ratio: 4}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			arms, vals := lazyProblem(t, c.f, c.n, uint64(ci+11))
			o := c.opt
			o.Options = Options{Kernel: c.k, Lambda: c.lam, Seed: uint64(ci + 5), Incremental: c.inc}
			full, err := NewBBKB(arms, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Lazy, o.LazyCheck = true, true
			lazy, err := NewBBKB(arms, o)
			if err != nil {
				t.Fatal(err)
			}
			noise := rand.New(rand.NewPCG(uint64(ci), 13))
			var pending []int
			tell := func() {
				for _, a := range pending {
					y := vals[a] + 0.1*noise.NormFloat64()
					if err := full.Tell(a, y); err != nil {
						t.Fatal(err)
					}
					if err := lazy.Tell(a, y); err != nil {
						t.Fatal(err)
					}
				}
				pending = pending[:0]
			}
			for s := 1; s <= steps; s++ {
				a, errA := full.Ask()
				b, errB := lazy.Ask()
				if (errA == nil) != (errB == nil) || a != b {
					t.Fatalf("step %d: full scan asks for arm %d (%v), lazy for %d (%v); %d bound violations",
						s, a, errA, b, errB, lazy.Stats().BoundViolations)
				}
				switch {
				case errors.Is(errA, ErrBatchFull):
					tell()
				case errA != nil:
					t.Fatal(errA)
				default:
					pending = append(pending, a)
				}
			}
			st, bs := lazy.Stats(), lazy.BatchStats()
			perObs := float64(st.RowsRead) / float64(st.Observations)
			t.Logf("%d asks, %d batches (mean %.2f arms); rows computed %d, rows read %.1f%% of A per observation; working set %d; dictionary %d; %d bound violations",
				steps, bs.Batches, bs.AverageBatchSize, st.RowsComputed, 100*perObs/float64(c.n), st.WorkingSet, st.DictionarySize, st.BoundViolations)
			if f := full.Stats(); f.DictionarySize != st.DictionarySize || f.Observations != st.Observations {
				t.Errorf("dictionary %d, %d observations; the full scan's %d, %d", st.DictionarySize, st.Observations,
					f.DictionarySize, f.Observations)
			}
			if st.BoundViolations != 0 {
				t.Errorf("%d arms above their lazy bound", st.BoundViolations)
			}
			// The full scan reads every arm's row at every observation.
			if c.n >= 10000 && perObs > 0.25*float64(c.n) {
				t.Errorf("%.0f rows read per observation of %d arms: not lazy", perObs, c.n)
			}
		})
	}
}

// TestLazyBBKBEliminate: BBKB's elimination removes arms, never the best
// one on a noise-free problem, and the batches find it.
func TestLazyBBKBEliminate(t *testing.T) {
	t.Parallel()
	arms, vals := lazyProblem(t, objectives.Branin(), 400, 2)
	bestArm := 0
	for i, v := range vals {
		if v > vals[bestArm] {
			bestArm = i
		}
	}
	p, err := NewBBKB(arms, BBKBOptions{Options: Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.001, Seed: 1,
		Lazy: true, Eliminate: true}, MaxBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	var pending []int
	for s := 0; s < 300; s++ {
		a, err := p.Ask()
		if errors.Is(err, ErrBatchFull) {
			for _, a := range pending {
				if err := p.Tell(a, vals[a]); err != nil {
					t.Fatal(err)
				}
			}
			pending = pending[:0]
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found = found || a == bestArm
		pending = append(pending, a)
		if p.lz.lz.dead[bestArm] {
			t.Fatalf("ask %d: the best arm was eliminated", s)
		}
	}
	st := p.Stats()
	t.Logf("eliminated %d of 400 arms; working set %d", st.ArmsEliminated, st.WorkingSet)
	if st.ArmsEliminated == 0 || !found {
		t.Errorf("eliminated %d arms, best arm found %v", st.ArmsEliminated, found)
	}
}

// askBoth asks the full scan and the lazy policy for their next arms.
func askBoth(t *testing.T, full, lazy *GP) (a, b int) {
	t.Helper()
	a, err := full.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if b, err = lazy.Ask(); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestLazyBBKBDrop: batches whose arms are dropped (evaluations that
// never report), some wholly, update lazy BBKB as they update the full
// scan: every later ask returns the full scan's arm.
func TestLazyBBKBDrop(t *testing.T) {
	t.Parallel()
	arms, vals := lazyProblem(t, objectives.Hartmann3(), 3000, 4)
	o := BBKBOptions{Options: Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.1, Seed: 3, Incremental: true}, MaxBatch: 3}
	full, err := NewBBKB(arms, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Lazy, o.LazyCheck = true, true
	lazy, err := NewBBKB(arms, o)
	if err != nil {
		t.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(2, 9))
	var pending []int
	batches := 0
	for s := 1; s <= 400; s++ {
		a, errA := full.Ask()
		b, errB := lazy.Ask()
		if (errA == nil) != (errB == nil) || a != b {
			t.Fatalf("ask %d: full scan %d (%v), lazy %d (%v)", s, a, errA, b, errB)
		}
		if errA == nil {
			pending = append(pending, a)
			continue
		}
		if !errors.Is(errA, ErrBatchFull) {
			t.Fatal(errA)
		}
		batches++
		for k, a := range pending {
			// Every third batch is dropped whole, in the others every
			// second arm.
			if batches%3 == 0 || k%2 == 1 {
				if err := full.Drop(a); err != nil {
					t.Fatal(err)
				}
				if err := lazy.Drop(a); err != nil {
					t.Fatal(err)
				}
				continue
			}
			y := vals[a] + 0.1*noise.NormFloat64()
			if err := full.Tell(a, y); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Tell(a, y); err != nil {
				t.Fatal(err)
			}
		}
		pending = pending[:0]
	}
	st := lazy.Stats()
	t.Logf("%d batches, %d observations; working set %d; %d bound violations", batches, st.Observations, st.WorkingSet, st.BoundViolations)
	if f := full.Stats(); f.Observations != st.Observations || f.DictionarySize != st.DictionarySize {
		t.Errorf("%d observations, dictionary %d; the full scan's %d, %d", st.Observations, st.DictionarySize, f.Observations, f.DictionarySize)
	}
}

// TestLazyBBKBFantasyVariances: during a batch, lazy BBKB's fantasized
// variances of every arm, visited or not, are the full scan's (up to
// rounding), and asking for them changes no later choice.
func TestLazyBBKBFantasyVariances(t *testing.T) {
	t.Parallel()
	const n = 500
	arms, vals := lazyProblem(t, objectives.Hartmann3(), n, 3)
	o := BBKBOptions{Options: Options{Kernel: kernel.RBF{LengthScale: 0.2}, Lambda: 0.01, Seed: 2}, MaxBatch: 3}
	full, _ := NewBBKB(arms, o)
	o.Lazy, o.LazyCheck = true, true
	lazy, err := NewBBKB(arms, o)
	if err != nil {
		t.Fatal(err)
	}
	vf, vl := make([]float64, n), make([]float64, n)
	for round := 0; round < 40; round++ {
		var batch []int
		for {
			a, errA := full.Ask()
			b, errB := lazy.Ask()
			if a != b || (errA == nil) != (errB == nil) {
				t.Fatalf("round %d: full scan %d (%v), lazy %d (%v)", round, a, errA, b, errB)
			}
			if errA != nil {
				break
			}
			batch = append(batch, a)
		}
		if round%4 == 1 {
			if err := full.FantasyVariances(vf); err != nil {
				t.Fatal(err)
			}
			if err := lazy.FantasyVariances(vl); err != nil {
				t.Fatal(err)
			}
			for i := range vf {
				if math.Abs(vf[i]-vl[i]) > 1e-7*(1+vf[i]) {
					t.Fatalf("round %d: arm %d fantasized variance %v, full scan %v", round, i, vl[i], vf[i])
				}
			}
		}
		for _, a := range batch {
			if err := full.Tell(a, vals[a]); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Tell(a, vals[a]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if v := lazy.Stats().BoundViolations; v != 0 {
		t.Errorf("%d bound violations", v)
	}
}
