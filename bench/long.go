package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// WriteLongMarkdown writes the long-run table of runs (RunRegret runs of
// one variant at several budgets T per problem, as `bkb bench --long`
// makes them): per problem and T, medians over seeds of the simple
// regret, the policy's CPU milliseconds per trial over the last tenth of
// the run, its ratio to the smallest T's figure of the same seed, the
// wall-clock policy milliseconds per trial over the last tenth, and the
// dictionary size at the end. peakRSS is the process's peak resident
// memory (bytes), reported under the table.
func WriteLongMarkdown(w io.Writer, runs []RegretRun, peakRSS int64) error {
	type key struct {
		problem string
		t       int
	}
	var keys []key
	by := map[key][]RegretRun{}
	for _, r := range runs {
		k := key{r.Problem, r.Checkpoints[len(r.Checkpoints)-1]}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.problem, b.problem); c != 0 {
			return c
		}
		return a.t - b.t
	})
	// base[problem][seed] is the CPU figure at the problem's smallest T.
	base := map[string]map[uint64]float64{}
	for _, k := range keys {
		if _, ok := base[k.problem]; ok {
			continue
		}
		base[k.problem] = map[uint64]float64{}
		for _, r := range by[k] {
			base[k.problem][r.Seed] = r.CPUMSEnd
		}
	}
	fmt.Fprintln(w, "| problem | T | seeds | simple regret | CPU ms/trial, last tenth | ratio to the smallest T | wall ms/trial, last tenth | dictionary |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, k := range keys {
		rs := by[k]
		var simple, cpu, ratio, wall, dict []float64
		for _, r := range rs {
			simple = append(simple, r.Simple[len(r.Simple)-1])
			cpu = append(cpu, r.CPUMSEnd)
			if b := base[k.problem][r.Seed]; b > 0 {
				ratio = append(ratio, r.CPUMSEnd/b)
			}
			wall = append(wall, r.PolicyMSEnd)
			dict = append(dict, float64(r.Dictionary))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.3g | %.1f | %s | %.1f | %.0f |\n", k.problem, k.t, len(rs), Median(simple), Median(cpu),
			fmtRatio(Median(ratio)), Median(wall), Median(dict))
	}
	if peakRSS > 0 {
		fmt.Fprintf(w, "\nPeak resident memory of the process: %.0f MB.\n", float64(peakRSS)/(1<<20))
	}
	return nil
}

func fmtRatio(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}
