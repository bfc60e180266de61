package bench

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLazyRows is the rows-read experiment of docs/scaling.md ("Lazy
// UCB"); it runs only with BKB_LAZY=1. BKB_LAZY_A (comma list, default
// 100000), BKB_LAZY_T (default 500), BKB_LAZY_F (default
// hartmann3,hartmann6), BKB_LAZY_V (variants, default bkb-lazy,
// bkb-fresh-lazy) and BKB_LAZY_L (length scale, default 0.2) and BKB_LAZY_SETUP (standard or
// scale, see LazyConfig.Standard) select the
// runs. Rows read per step are averaged over steps 50 to T.
func TestLazyRows(t *testing.T) {
	if os.Getenv("BKB_LAZY") == "" {
		t.Skip("set BKB_LAZY=1 to run the lazy-UCB rows-read experiment")
	}
	env := func(k, def string) []string {
		if v := os.Getenv(k); v != "" {
			return strings.Split(v, ",")
		}
		return strings.Split(def, ",")
	}
	T, _ := strconv.Atoi(env("BKB_LAZY_T", "500")[0])
	ls, _ := strconv.ParseFloat(env("BKB_LAZY_L", "0.2")[0], 64)
	setup := env("BKB_LAZY_SETUP", "standard")[0]
	t.Logf("setup %s, T %d, length scale %g, seed 1", setup, T, ls)
	// One goroutine's read bandwidth, for the time of one pass over the
	// A x m embedding a full scan reads (the best of three probes).
	bw := 0.0
	for range 3 {
		bw = max(bw, MemoryBandwidth(256<<20, 1, 3))
	}
	t.Logf("read bandwidth %.1f GB/s (one goroutine)", bw/1e9)
	t.Logf("| function | A | variant | rows read per step (%% of A) | computed (%% of A) | working set | m | eliminated | cum. regret | CPU ms/step | one pass ms | step / pass | peak heap MB | embedding MB |")
	t.Logf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, as := range env("BKB_LAZY_A", "100000") {
		a, err := strconv.Atoi(as)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range env("BKB_LAZY_F", "hartmann3,hartmann6") {
			for _, v := range env("BKB_LAZY_V", "bkb-lazy,bkb-fresh-lazy") {
				r, err := LazyRun(LazyConfig{Function: f, Arms: a, T: T, LengthScale: ls, Seed: 1, Variant: v, From: 50, To: T, Setup: setup,
					Progress: func(s string) {
						if os.Getenv("BKB_LAZY_PROGRESS") != "" {
							t.Log(s)
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				pass := r.EmbeddingBytes / bw
				t.Logf("| %s | %d | %s | %.2f | %.3f | %d | %d | %d | %.1f | %.2f | %.2f | %.2f | %.0f | %.0f |", f, a, v,
					100*r.RowsPerStep, 100*r.ComputedPerStep, r.WorkingSet, r.DictionarySize, r.Eliminated,
					r.CumRegret, 1e3*r.StepCPU, 1e3*pass, r.StepCPU/pass, float64(r.PeakHeapBytes)/1e6, r.EmbeddingBytes/1e6)
			}
		}
	}
}

// TestLazyRegret compares the cumulative regret of lazy BKB with the full
// scan's over 10 seeds (two-sided Mann-Whitney), Hartmann 3 and 6 on
// A = 1,000 and 10,000 arms, T = 500, the authors' settings (setup
// "peer"), incremental and fresh resampling; it runs only with
// BKB_LAZY_REGRET=1 (BKB_LAZY_A, BKB_LAZY_T, BKB_LAZY_SEEDS and
// BKB_LAZY_MODES override).
// The variants with LazyCheck are in the bandit package's tests.
func TestLazyRegret(t *testing.T) {
	if os.Getenv("BKB_LAZY_REGRET") == "" {
		t.Skip("set BKB_LAZY_REGRET=1 to run the lazy-BKB regret comparison")
	}
	env := func(k, def string) []string {
		if v := os.Getenv(k); v != "" {
			return strings.Split(v, ",")
		}
		return strings.Split(def, ",")
	}
	T, _ := strconv.Atoi(env("BKB_LAZY_T", "500")[0])
	seeds, _ := strconv.Atoi(env("BKB_LAZY_SEEDS", "10")[0])
	t.Logf("| function | A | resampling | full scan: mean cum. regret (sd) | lazy | Mann-Whitney p | runs with the same arms | rows read per step, lazy (%% of A) | CPU lazy / full |")
	t.Logf("|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, as := range env("BKB_LAZY_A", "1000,10000") {
		a, _ := strconv.Atoi(as)
		for _, f := range []string{"hartmann3", "hartmann6"} {
			for _, mode := range env("BKB_LAZY_MODES", "incremental,fresh") {
				full, lazy := "bkb", "bkb-lazy"
				if mode == "fresh" {
					full, lazy = "bkb-fresh", "bkb-fresh-lazy"
				}
				var rf, rl []float64
				var same int
				var rows, cpuF, cpuL float64
				for s := 1; s <= seeds; s++ {
					cfg := LazyConfig{Function: f, Arms: a, T: T, LengthScale: 0.2, Seed: uint64(s), Variant: full, From: 1, To: T, Setup: "peer"}
					x, err := LazyRun(cfg)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Variant = lazy
					y, err := LazyRun(cfg)
					if err != nil {
						t.Fatal(err)
					}
					rf, rl = append(rf, x.CumRegret), append(rl, y.CumRegret)
					if x.CumRegret == y.CumRegret {
						same++
					}
					rows += y.RowsPerStep / float64(seeds)
					cpuF += x.TotalCPUSeconds
					cpuL += y.TotalCPUSeconds
				}
				_, p, err := MannWhitney(rf, rl)
				if err != nil {
					t.Fatal(err)
				}
				mf, sf := meanSD(rf)
				ml, sl := meanSD(rl)
				t.Logf("| %s | %d | %s | %.1f (%.1f) | %.1f (%.1f) | %.3f | %d/%d | %.1f | %.2f |", f, a, mode, mf, sf, ml, sl, p, same, seeds, 100*rows, cpuL/cpuF)
				if p <= 0.05 {
					t.Errorf("%s A=%d %s: lazy regret differs from the full scan's (p = %.3f)", f, a, mode, p)
				}
			}
		}
	}
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v / float64(len(x))
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean) / float64(max(len(x)-1, 1))
	}
	return mean, math.Sqrt(sd)
}
