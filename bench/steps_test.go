package bench

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

// stepProfile runs BKB (incremental resampling) on A Hartmann 6 arms for
// T steps and times every step (Ask and Tell, with resampling), in units
// of one read of the A x m embedding at the bandwidth measured in the
// same process (m after the step). It reports the largest ratio, the
// 99th percentile and the mean, separately for steps where S changed,
// and the peak heap against the embedding's size.
//
// With BKB_STEPS_CPU=1 a step is measured in CPU seconds of the process
// (getrusage, all threads) against one read of the embedding by one
// goroutine, so that other jobs on a shared machine inflate the ratios
// much less than wall time does.
func stepProfile(t *testing.T, a, T int, ls float64, warm int) {
	useCPU := os.Getenv("BKB_STEPS_CPU") != ""
	workers := 0
	if useCPU {
		workers = 1
	}
	bw := MemoryBandwidth(256<<20, workers, 5)
	// In CPU mode the bandwidth is probed again every 100 steps on a
	// buffer allocated before the heap baseline, and the best probe is
	// the unit: on a shared machine one probe can catch a busy moment and
	// deflate every ratio.
	var probeBuf []float64
	if useCPU {
		probeBuf = make([]float64, (256<<20)/8)
		for i := range probeBuf {
			probeBuf[i] = float64(i & 7)
		}
	}
	probe := func() {
		for r := 0; r < 3; r++ {
			start := time.Now()
			sink = sum(probeBuf)
			bw = max(bw, float64(len(probeBuf)*8)/time.Since(start).Seconds())
		}
	}
	clock := func() float64 {
		if useCPU {
			return cpuSeconds()
		}
		return float64(time.Now().UnixNano()) / 1e9
	}
	f := objectives.Hartmann6()
	arms, _ := objectives.Uniform(f.Domain(), a, 1)
	obj, _ := newHartmann6(arms, 1)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse // the arms and the objective
	p, err := NewPolicy("bkb", arms, ls, 1, T+10)
	if err != nil {
		t.Fatal(err)
	}
	st := p.(bandit.StatsReporter)
	var all, changed, changedBig, steady []float64
	var peak uint64
	var worst struct {
		t    int
		r    float64
		m, c int
	}
	type stepRec struct {
		s, m, changes int
		el            float64
	}
	var recs []stepRec
	c0 := 0
	for s := 1; s <= T; s++ {
		if useCPU && s%100 == 0 {
			probe()
		}
		// Stats is read after the timed region: reading it (like reading
		// the means) runs the deferred per-observation pass, which belongs
		// to the step.
		t0 := clock()
		arm, err := p.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Tell(arm, obj.noiseless(arms.RawRowView(arm))); err != nil {
			t.Fatal(err)
		}
		p.(*bandit.GP).Means() // the deferred pass of this step's observation
		el := clock() - t0
		s1 := st.Stats()
		prev := c0
		c0 = s1.DictionaryChanges
		if s%10 == 0 || s1.DictionaryChanges != prev {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		recs = append(recs, stepRec{s, s1.DictionarySize, s1.DictionaryChanges - prev, el})
	}
	for _, rc := range recs {
		if rc.s <= warm {
			continue
		}
		r := rc.el / (float64(a) * float64(rc.m) * 8 / bw)
		all = append(all, r)
		if rc.changes != 0 {
			changed = append(changed, r)
			if rc.m >= 64 {
				changedBig = append(changedBig, r)
			}
		} else {
			steady = append(steady, r)
		}
		if r > worst.r {
			worst.t, worst.r, worst.m, worst.c = rc.s, r, rc.m, rc.changes
		}
	}
	s1 := st.Stats()
	emb := float64(a) * float64(s1.DictionarySize) * 8
	q := func(x []float64, p float64) float64 {
		if len(x) == 0 {
			return 0
		}
		y := append([]float64(nil), x...)
		sort.Float64s(y)
		return y[int(p*float64(len(y)-1))]
	}
	mean := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v
		}
		return s / float64(max(len(x), 1))
	}
	unit := "wall time"
	if useCPU {
		unit = "CPU time against one goroutine's read"
	}
	t.Logf("A=%d l=%g steps %d..%d (GOMAXPROCS %d, %s, bandwidth %.1f GB/s): m %d, %d changes in all",
		a, ls, warm+1, T, runtime.GOMAXPROCS(0), unit, bw/1e9, s1.DictionarySize, s1.DictionaryChanges)
	t.Logf("  pass ratio, every step: max %.2f (step %d, m %d, %d changes), 99%% %.2f, mean %.2f",
		worst.r, worst.t, worst.m, worst.c, q(all, 0.99), mean(all))
	t.Logf("  steps with changes (%d): max %.2f, mean %.2f; steady steps (%d): max %.2f, 99%% %.2f, mean %.2f",
		len(changed), q(changed, 1), mean(changed), len(steady), q(steady, 1), q(steady, 0.99), mean(steady))
	// The floor of a step that adds a point to S: one kernel column, k(x, x_new)
	// for every arm, in units of one read of an A x m embedding.
	k := kernel.RBF{LengthScale: ls}
	x0 := arms.RawRowView(0)
	t0 := clock()
	var ks float64
	for i := 0; i < a; i++ {
		ks += k.Eval(arms.RawRowView(i), x0)
	}
	col := clock() - t0
	sink = ks
	perCoord := float64(a) * 8 / bw // one coordinate of every row
	t.Logf("  steps with changes at m >= 64 (%d): max %.2f, mean %.2f; one kernel column costs %.2f ms, a read of %.0f coordinates per row (so %.2f passes at m = 64, %.2f at m = %d)",
		len(changedBig), q(changedBig, 1), mean(changedBig), col*1e3, col/perCoord, col/perCoord/64, col/perCoord/float64(s1.DictionarySize), s1.DictionarySize)
	nu := p.(*bandit.GP).Posterior().(*gp.DTC).Numerics()
	t.Logf("  peak heap in use beyond the arms %.0f MB, embedding %.0f MB (x%.2f); numerics %+v",
		float64(peak-base)/1e6, emb/1e6, float64(peak-base)/emb, nu)
}

// TestStepPasses is the per-step pass-ratio experiment of issue 13 at
// A = 100,000 (docs/scaling.md); it runs only with BKB_STEPS=1.
// BKB_STEPS_A and BKB_STEPS_T override A and T; BKB_STEPS_L the length
// scale (default: both 0.2, where S grows until t = 1,000, and 0.3).
func TestStepPasses(t *testing.T) {
	if os.Getenv("BKB_STEPS") == "" {
		t.Skip("set BKB_STEPS=1 to run the per-step pass-ratio experiment")
	}
	a, T := 100000, 1000
	if v, err := strconv.Atoi(os.Getenv("BKB_STEPS_A")); err == nil {
		a = v
	}
	if v, err := strconv.Atoi(os.Getenv("BKB_STEPS_T")); err == nil {
		T = v
	}
	ls := []float64{0.2, 0.3}
	if v, err := strconv.ParseFloat(os.Getenv("BKB_STEPS_L"), 64); err == nil {
		ls = []float64{v}
	}
	for _, l := range ls {
		t.Run(fmt.Sprintf("A=%d/l=%g", a, l), func(t *testing.T) { stepProfile(t, a, T, l, 20) })
	}
}
