package bandit

import (
	"gonum.org/v1/gonum/mat"

	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/objectives"
)

// With MaxBatch 1 every batch is one arm, chosen by UCB on the posterior
// after the previous observation and followed by one resample: sequential
// BKB. The arms must be exactly those of NewBKB under the same options.
func TestBBKBSequentialEqualsBKB(t *testing.T) {
	t.Parallel()
	arms := randArms(3, 300, 2)
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"constant-gpscale", Options{Lambda: 0.0025, Beta: acquisition.Constant(2), Seed: 1}},
		{"constant-incremental", Options{Lambda: 0.0025, Beta: acquisition.Constant(2), Incremental: true, Seed: 2}},
		{"theorem-beta", Options{Lambda: 0.01, Beta: acquisition.BKBTheorem{F: 1, Delta: 0.1, Eps: 0.5, Xi: 0.1}, Seed: 3, PaperScale: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := NewBKB(arms, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewBBKB(arms, BBKBOptions{Options: tc.opt, Ratio: 1e300, MaxBatch: 1})
			if err != nil {
				t.Fatal(err)
			}
			want := play(t, ref, arms, 150, 7)
			got := play(t, b, arms, 150, 7)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("step %d: bbkb chose arm %d, bkb %d (earlier steps equal)", i+1, got[i], want[i])
				}
			}
			if s := b.BatchStats(); s.Batches != 150 || s.AverageBatchSize != 1 {
				t.Errorf("batch stats %+v, want 150 batches of 1", s)
			}
		})
	}
}

// Lazy updates refresh only the arms that can still win; the batches must
// be exactly those of recomputing every arm's fantasized variance.
func TestBBKBLazyEqualsBruteForce(t *testing.T) {
	t.Parallel()
	arms := randArms(5, 400, 2)
	for _, tc := range []struct {
		ratio   float64
		repeats bool
		lambda  float64
	}{{2, false, 0.0025}, {5, false, 0.0025}, {5, true, 0.0025}, {20, false, 0.05}, {3, true, 0.05}} {
		t.Run(fmt.Sprintf("ratio%v-repeats%v-lambda%v", tc.ratio, tc.repeats, tc.lambda), func(t *testing.T) {
			mk := func(brute bool) *BBKB {
				p, err := NewBBKB(arms, BBKBOptions{Options: Options{Lambda: tc.lambda, Beta: acquisition.Constant(2), Seed: 11},
					Ratio: tc.ratio, Distinct: !tc.repeats, BruteForce: brute})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			lazy, brute := mk(false), mk(true)
			a := play(t, lazy, arms, 250, 3)
			b := play(t, brute, arms, 250, 3)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("step %d: lazy chose %d, brute force %d", i+1, a[i], b[i])
				}
			}
			ls, bs := lazy.BatchStats(), brute.BatchStats()
			if ls.Batches != bs.Batches || ls.Arms != bs.Arms {
				t.Errorf("batches differ: lazy %+v brute %+v", ls, bs)
			}
			if bs.Chosen > 0 && ls.Recomputes >= bs.Recomputes {
				t.Errorf("lazy recomputed %d variances, brute force %d: not lazier", ls.Recomputes, bs.Recomputes)
			}
			t.Logf("batches %d, average size %.2f, max %d; recomputes lazy %d brute %d (%d chosen arms)",
				ls.Batches, ls.AverageBatchSize, ls.MaxBatchSize, ls.Recomputes, bs.Recomputes, ls.Chosen)
		})
	}
}

// askBatch asks until ErrBatchFull and returns the batch.
func askBatch(t *testing.T, p *BBKB, check func(batch []int)) []int {
	t.Helper()
	var batch []int
	for {
		a, err := p.Ask()
		if errors.Is(err, ErrBatchFull) {
			return batch
		}
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, a)
		if check != nil {
			check(batch)
		}
	}
}

// The fantasized variances inside a batch are the DTC variances
// conditioned on the batch's arms, which gp.DTC.ConditionalVariances
// computes independently (one joint solve instead of rank-one updates).
func TestBBKBFantasyEqualsConditionalVariances(t *testing.T) {
	t.Parallel()
	arms := randArms(8, 250, 2)
	obj := newBumpy(4)
	for _, tc := range []struct{ repeats, incremental bool }{{false, false}, {true, false}, {true, true}} {
		repeats := tc.repeats
		// Incremental resampling keeps S across most batches, so the
		// fantasy state is carried by rank-one updates there.
		p, err := NewBBKB(arms, BBKBOptions{Options: Options{Lambda: 0.01, Seed: 5, Incremental: tc.incremental}, Ratio: 1e300, MaxBatch: 6, Distinct: !repeats})
		if err != nil {
			t.Fatal(err)
		}
		got, want := make([]float64, 250), make([]float64, 250)
		var worst float64
		checks := 0
		for b := 0; b < 40; b++ {
			batch := askBatch(t, p, func(batch []int) {
				if err := p.FantasyVariances(got); err != nil {
					t.Fatal(err)
				}
				if err := p.Posterior().ConditionalVariances(want, batch); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					d := math.Abs(got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
					worst = math.Max(worst, d)
				}
				checks++
			})
			if len(batch) != 6 {
				t.Fatalf("batch %d has %d arms, want MaxBatch 6", b, len(batch))
			}
			// Tell in reverse order: any order is accepted, and the
			// posterior only moves when the last arm is told.
			n0 := p.Posterior().Len()
			for k := len(batch) - 1; k >= 0; k-- {
				if p.Posterior().Len() != n0 {
					t.Fatalf("posterior updated before the batch was complete")
				}
				x := arms.RawRowView(batch[k])
				if err := p.Tell(batch[k], obj.value(x)); err != nil {
					t.Fatal(err)
				}
			}
			if p.Posterior().Len() != n0+6 {
				t.Fatalf("posterior has %d observations after the batch, want %d", p.Posterior().Len(), n0+6)
			}
		}
		if worst > 1e-9 {
			t.Errorf("%+v: fantasized variances differ from ConditionalVariances by %.3g (relative)", tc, worst)
		}
		t.Logf("%+v: worst relative difference %.2g, %d bases built for 40 batches", tc, worst, p.basis)
		if checks != 240 {
			t.Errorf("%d checks, want 240", checks)
		}
		if tc.incremental && p.basis >= 40 {
			t.Errorf("the fantasy state was rebuilt for every batch (%d): the rank-one path is untested", p.basis)
		}
	}
}

// Every batch obeys the adaptive rule: with s_k the stale (batch-start)
// variances read from the posterior, 1 + s_1 + ... + s_{b-1} <= C~ and
// 1 + s_1 + ... + s_b > C~, unless MaxBatch stopped it. With Distinct no
// arm repeats.
func TestBBKBBatchRule(t *testing.T) {
	t.Parallel()
	arms := randArms(9, 300, 2)
	obj := newBumpy(9)
	for _, tc := range []struct {
		ratio    float64
		max      int
		distinct bool
		min      int
	}{{2, 0, false, 0}, {4, 0, false, 0}, {10, 0, false, 0}, {10, 5, false, 0}, {2, 0, true, 0}, {10, 0, true, 0},
		{2, 0, false, 4}, {2, 0, true, 3}, {10, 5, false, 5}} {
		t.Run(fmt.Sprintf("ratio%v-max%d-distinct%v-min%d", tc.ratio, tc.max, tc.distinct, tc.min), func(t *testing.T) {
			p, err := NewBBKB(arms, BBKBOptions{Options: Options{Lambda: 0.0025, Seed: 2}, Ratio: tc.ratio, MaxBatch: tc.max, Distinct: tc.distinct, MinBatch: tc.min})
			if err != nil {
				t.Fatal(err)
			}
			total, sizes := 0, 0
			maxRatio := 1.0
			for total < 300 {
				stale := append([]float64(nil), p.Posterior().Variances()...)
				batch := askBatch(t, p, nil)
				seen := map[int]bool{}
				sum := 1.0
				for k, a := range batch {
					if seen[a] && tc.distinct {
						t.Fatalf("arm %d twice in a batch", a)
					}
					seen[a] = true
					if k == len(batch)-1 {
						break
					}
					sum += stale[a]
				}
				if sum > tc.ratio && len(batch)-1 >= tc.min {
					t.Fatalf("batch %v continued past the rule: 1+sum = %v > %v", batch, sum, tc.ratio)
				}
				maxRatio = max(maxRatio, sum)
				last := stale[batch[len(batch)-1]]
				if (sum+last <= tc.ratio || len(batch) < tc.min) && len(batch) != tc.max {
					t.Fatalf("batch of %d stopped early: 1+sum = %v <= %v or below MinBatch %d", len(batch), sum+last, tc.ratio, tc.min)
				}
				if tc.max > 0 && len(batch) > tc.max {
					t.Fatalf("batch of %d above MaxBatch %d", len(batch), tc.max)
				}
				for _, a := range batch {
					if err := p.Tell(a, obj.Evaluate2(arms.RawRowView(a))); err != nil {
						t.Fatal(err)
					}
				}
				total += len(batch)
				sizes = max(sizes, len(batch))
			}
			s := p.BatchStats()
			if s.Arms != total || s.MaxBatchSize != sizes {
				t.Errorf("stats %+v, want %d arms, max %d", s, total, sizes)
			}
			if math.Abs(s.MaxRatio-maxRatio) > 1e-9*maxRatio {
				t.Errorf("stats MaxRatio %v, want %v", s.MaxRatio, maxRatio)
			}
			if tc.min > 1 && s.MaxBatchSize < tc.min {
				t.Errorf("MinBatch %d: largest batch %d", tc.min, s.MaxBatchSize)
			}
			if tc.ratio >= 4 && s.MaxBatchSize < 2 {
				t.Errorf("ratio %v never made a batch above 1 in %d arms", tc.ratio, total)
			}
			t.Logf("%d batches, average %.2f, max %d", s.Batches, s.AverageBatchSize, s.MaxBatchSize)
		})
	}
}

// Evaluate2 is a noisy evaluation without a context.
func (b *bumpy) Evaluate2(x []float64) float64 { y, _ := b.Evaluate(context.Background(), x); return y }

func TestBBKBAsyncProtocol(t *testing.T) {
	t.Parallel()
	arms := randArms(2, 50, 2)
	p, err := NewBBKB(arms, BBKBOptions{Options: Options{Seed: 1}, Ratio: 1e300, MaxBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Warm start outside any batch: observed at once.
	for i := 0; i < 3; i++ {
		if err := p.Tell(i, 0.1*float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if p.Posterior().Len() != 3 {
		t.Fatalf("warm start: %d observations, want 3", p.Posterior().Len())
	}
	a, _ := p.Ask()
	b, _ := p.Ask()
	// A told arm outside the batch waits for the batch update.
	if err := p.Tell(40, 0.5); err != nil {
		t.Fatal(err)
	}
	if p.Posterior().Len() != 3 {
		t.Fatalf("an arm outside the batch was observed mid-batch")
	}
	if err := p.Tell(a, 0); err != nil {
		t.Fatal(err)
	}
	// EndBatch with b pending closes the batch; Ask then reports full.
	if err := p.EndBatch(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ask(); !errors.Is(err, ErrBatchFull) {
		t.Fatalf("Ask on a closed batch: %v, want ErrBatchFull", err)
	}
	if err := p.Tell(b, 0); err != nil {
		t.Fatal(err)
	}
	if p.Posterior().Len() != 6 || p.BatchStats().Batches != 1 {
		t.Fatalf("after the batch: %d observations, %d batches; want 6, 1", p.Posterior().Len(), p.BatchStats().Batches)
	}
	if _, err := p.Ask(); err != nil {
		t.Fatalf("Ask after the update: %v", err)
	}
	// Bad input.
	if err := p.Tell(-1, 0); err == nil {
		t.Error("Tell of arm -1 accepted")
	}
	if err := p.Tell(0, math.NaN()); err == nil {
		t.Error("NaN reward accepted")
	}
	for _, o := range []BBKBOptions{{Ratio: 0.5}, {Ratio: 1}, {MaxBatch: -1}, {LogDet: &LogDetBeta{Delta: 2}}, {Options: Options{Qbar: -1}}} {
		if _, err := NewBBKB(arms, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := NewBBKB(nil, BBKBOptions{}); err == nil {
		t.Error("nil arms accepted")
	}
	// Every arm in the batch: the batch closes and, all told, a new one opens.
	small := randArms(3, 3, 1)
	q, _ := NewBBKB(small, BBKBOptions{Options: Options{Seed: 4}, Ratio: 1e300, Distinct: true})
	for step := 0; step < 9; step++ {
		a, err := q.Ask()
		if errors.Is(err, ErrBatchFull) {
			for _, x := range append([]int(nil), q.Batch()...) {
				if err := q.Tell(x, 1); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = a
	}
	if q.BatchStats().Batches == 0 {
		t.Error("an exhausted 3-arm batch never completed")
	}
}

// The batch beta grows with the accumulated logdet.
func TestBBKBLogDetBeta(t *testing.T) {
	t.Parallel()
	arms := randArms(6, 100, 2)
	lb := &LogDetBeta{F: 1, Delta: 0.1, Xi: 0.1}
	p, err := NewBBKB(arms, BBKBOptions{Options: Options{Lambda: 0.01, Seed: 3}, LogDet: lb})
	if err != nil {
		t.Fatal(err)
	}
	want0 := 0.1*1 + math.Sqrt(0.01*math.Log(10))
	if b := p.Beta(); math.Abs(b-want0) > 1e-12 {
		t.Fatalf("initial beta %v, want %v", b, want0)
	}
	play(t, p, arms, 60, 1)
	s := p.BatchStats()
	want := 0.1 + math.Sqrt(0.01*(2*s.LogDet+math.Log(10)))
	if b := p.Beta(); math.Abs(b-want) > 1e-12 || !(s.LogDet > 0) {
		t.Fatalf("beta %v, want %v (logdet %v)", b, want, s.LogDet)
	}
}

// TestBBKBRegret is the regret check on Hartmann 3 over 1,000 random arms
// (T = 500, 5 seeds, the setup of TestRegretExperiment): BBKB's
// cumulative regret stays within 2x BKB's (the paper bounds it by 4x
// GP-UCB's) and far below random search.
func TestBBKBRegret(t *testing.T) {
	if testing.Short() {
		t.Skip("regret experiment")
	}
	const A, T, seeds = 1000, 500, 5
	f, _ := objectives.Lookup("hartmann3")
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-10s %5s %12s %12s %8s %8s %10s\n", "policy", "seed", "cum regret", "simple", "batches", "avg b", "ms/eval")
	cum := map[string][]float64{}
	for seed := uint64(1); seed <= seeds; seed++ {
		arms, _ := objectives.Uniform(objectives.Box{Lower: make([]float64, 3), Upper: ones(3)}, A, seed)
		opt := Options{Seed: seed, Lambda: 0.0025, Beta: acquisition.Constant(3)}
		for _, pol := range []string{"bkb", "bbkb", "bbkb-C5", "bbkb-distinct", "random"} {
			var p Policy
			switch pol {
			case "bkb":
				p, _ = NewBKB(arms, opt)
			case "bbkb":
				p, _ = NewBBKB(arms, BBKBOptions{Options: opt})
			case "bbkb-C5":
				p, _ = NewBBKB(arms, BBKBOptions{Options: opt, Ratio: 5})
			case "bbkb-distinct":
				p, _ = NewBBKB(arms, BBKBOptions{Options: opt, Distinct: true})
			case "random":
				p, _ = NewRandom(A, seed)
			}
			obj := newBoxed(f, arms, seed)
			tr, err := Run(context.Background(), p, arms, obj, RunOptions{Steps: T, Noiseless: obj.noiseless})
			if err != nil {
				t.Fatal(err)
			}
			cum[pol] = append(cum[pol], tr.CumRegret())
			var bs BatchStats
			if b, ok := p.(*BBKB); ok {
				bs = b.BatchStats()
			}
			fmt.Fprintf(&table, "%-10s %5d %12.2f %12.4f %8d %8.2f %10.3f\n", pol, seed, tr.CumRegret(), tr.Steps[T-1].SimpleRegret, bs.Batches, bs.AverageBatchSize, 1e3*tr.MeanSeconds(0, T))
		}
	}
	k, b, b5, r := stat.Mean(cum["bkb"], nil), stat.Mean(cum["bbkb"], nil), stat.Mean(cum["bbkb-C5"], nil), stat.Mean(cum["random"], nil)
	fmt.Fprintf(&table, "mean cumulative regret: bkb %.2f  bbkb %.2f  bbkb C~=5 %.2f  bbkb distinct %.2f  random %.2f\n", k, b, b5, stat.Mean(cum["bbkb-distinct"], nil), r)
	t.Log(table.String())
	if b > 2*k {
		t.Errorf("BBKB cumulative regret %.2f above 2x BKB's %.2f", b, k)
	}
	if b > r/4 || b5 > r/4 {
		t.Errorf("BBKB regret not far below random search (bbkb %.2f, C~=5 %.2f, random %.2f)", b, b5, r)
	}
}

// BenchmarkBBKB is one run of T = 500 on Hartmann 3 over A random arms
// per iteration; it reports the policy time per evaluation and BBKB's
// average batch size.
//
//	GOMAXPROCS=1 go test ./bandit -run '^$' -bench BBKB -benchtime 1x
func BenchmarkBBKB(b *testing.B) {
	const T = 500
	f, _ := objectives.Lookup("hartmann3")
	for _, A := range []int{1000, 20000} {
		arms, _ := objectives.Uniform(objectives.Box{Lower: make([]float64, 3), Upper: ones(3)}, A, 1)
		for _, pol := range []string{"bkb", "bkb-incr", "bbkb", "bbkb-incr", "bbkb-C5", "bbkb-brute"} {
			b.Run(fmt.Sprintf("A=%d/%s", A, pol), func(b *testing.B) {
				var secs, avg, changes float64
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					opt := Options{Seed: 1, Lambda: 0.0025, Beta: acquisition.Constant(3)}
					var p Policy
					switch pol {
					case "bkb":
						p, _ = NewBKB(arms, opt)
					case "bkb-incr":
						o := opt
						o.Incremental = true
						p, _ = NewBKB(arms, o)
					case "bbkb":
						p, _ = NewBBKB(arms, BBKBOptions{Options: opt})
					case "bbkb-incr":
						o := opt
						o.Incremental = true
						p, _ = NewBBKB(arms, BBKBOptions{Options: o})
					case "bbkb-C5":
						p, _ = NewBBKB(arms, BBKBOptions{Options: opt, Ratio: 5})
					case "bbkb-brute":
						p, _ = NewBBKB(arms, BBKBOptions{Options: opt, BruteForce: true})
					}
					obj := newBoxed(f, arms, 1) // the same noise for every run
					tr, err := Run(context.Background(), p, arms, obj, RunOptions{Steps: T})
					if err != nil {
						b.Fatal(err)
					}
					secs += tr.MeanSeconds(0, T)
					if q, ok := p.(*BBKB); ok {
						avg += q.BatchStats().AverageBatchSize
					}
					changes += float64(p.(StatsReporter).Stats().DictionaryChanges)
				}
				b.ReportMetric(1e6*secs/float64(b.N), "us/eval")
				// Process CPU time per evaluation, objective and Run's
				// bookkeeping included: steadier than the wall clock on
				// a shared machine.
				b.ReportMetric(1e6*(cpuSeconds()-cpu0)/float64(b.N*T), "cpu-us/eval")
				b.ReportMetric(avg/float64(b.N), "batch")
				b.ReportMetric(changes/float64(b.N), "dict-changes")
			})
		}
	}
}

// TestBBKBDrop: a dropped (failed) arm no longer holds a closed batch.
func TestBBKBDrop(t *testing.T) {
	t.Parallel()
	arms := mat.NewDense(5, 1, []float64{0, 0.25, 0.5, 0.75, 1})
	p, err := NewBBKB(arms, BBKBOptions{Options: Options{Seed: 1, Lambda: 1}, MaxBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Ask()
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ask(); err != ErrBatchFull {
		t.Fatalf("third ask of a batch of 2: %v", err)
	}
	if err := p.Tell(a, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ask(); err != ErrBatchFull {
		t.Fatalf("ask with one arm untold: %v", err)
	}
	if err := p.Drop(b); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ask(); err != nil {
		t.Errorf("ask after the last untold arm was dropped: %v", err)
	}
}
