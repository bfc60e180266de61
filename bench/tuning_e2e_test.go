//go:build e2e

package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTuningTables runs bench/peers/tuning.py's table, diag and count (the
// commands of docs/tuning.md that read run files) on a file of made-up
// runs of one real task and one 20-100-parameter problem: each must exit
// 0 and print its header, and count's observed column must be the counts
// of a brute force over the same runs (and, with an oracle below every
// run, 2 of 2 rows in every bootstrap draw). The runs themselves take
// minutes a seed and are not run here.
func TestTuningTables(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy.stats").Run(); err != nil {
		t.Skipf("%s cannot import scipy.stats (Debian's python3-scipy): %v", py, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var lines []string
	// medians[half][row][sampler] of the made-up runs, for count's reference.
	bests := map[string]map[string]map[string][]float64{}
	note := func(half, row, sampler string, v float64) {
		if bests[half] == nil {
			bests[half] = map[string]map[string][]float64{}
		}
		if bests[half][row] == nil {
			bests[half][row] = map[string][]float64{}
		}
		bests[half][row][sampler] = append(bests[half][row][sampler], v)
	}
	for _, sampler := range []string{"bkb", "tpe"} {
		for seed := 1; seed <= 3; seed++ {
			var trials []map[string]any
			best := 1.0
			for i := 0; i < 60; i++ {
				y := rng.Float64()
				best = min(best, y)
				trials = append(trials, map[string]any{"y": y, "cpu": 0.01, "params": map[string]any{
					"k": 1 + rng.IntN(50), "weights": []string{"uniform", "distance"}[rng.IntN(2)],
					"p": 1 + rng.IntN(4), "scaler": []string{"standard", "minmax", "none"}[rng.IntN(3)]}})
			}
			note("tuning", "knn-wine 30", sampler, best+0.1)
			note("tuning", "knn-wine 60", sampler, best)
			note("held-out", "levy-50 100", sampler, 2*best)
			note("held-out", "levy-50 250", sampler, best)
			for _, r := range []map[string]any{
				{"sampler": sampler, "problem": "knn-wine", "seed": seed, "T": 60, "best": map[string]float64{"30": best + 0.1, "60": best},
					"sampler_cpu": 0.3, "objective_cpu": 0.6, "wall": 1.0, "trials": trials},
				{"sampler": sampler, "problem": "levy-50", "seed": seed, "T": 250, "best": map[string]float64{"100": 2 * best, "250": best},
					"sampler_cpu": 3.0, "objective_cpu": 0, "wall": 3.0, "trials": []map[string]any{{"y": best, "cpu": 0.0, "params": map[string]any{}}}},
			} {
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, string(b))
			}
		}
	}
	runs := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(runs, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// count's observed column, by brute force: rows where a sampler's
	// median (the middle of 3 seeds) is at most the other's.
	countLine := map[string][]string{}
	for _, half := range []string{"tuning", "held-out"} {
		for _, sampler := range []string{"bkb", "tpe"} {
			n := 0
			for _, bySampler := range bests[half] {
				own := median3(bySampler[sampler])
				other := median3(bySampler[map[string]string{"bkb": "tpe", "tpe": "bkb"}[sampler]])
				if own <= other {
					n++
				}
			}
			countLine[half] = append(countLine[half], fmt.Sprintf("| %s | %d |", sampler, n))
		}
	}
	// An oracle, lower than both on every seed of every row, is the lowest
	// on both rows of each half in every bootstrap draw.
	oracle := filepath.Join(t.TempDir(), "oracle.jsonl")
	var olines []string
	for seed := 1; seed <= 3; seed++ {
		for _, r := range []string{
			`{"sampler": "oracle", "problem": "knn-wine", "seed": %d, "T": 60, "best": {"30": -1, "60": -1}, "sampler_cpu": 0, "objective_cpu": 0, "wall": 0, "trials": []}`,
			`{"sampler": "oracle", "problem": "levy-50", "seed": %d, "T": 250, "best": {"100": -1, "250": -1}, "sampler_cpu": 0, "objective_cpu": 0, "wall": 0, "trials": []}`,
		} {
			olines = append(olines, fmt.Sprintf(r, seed))
		}
	}
	if err := os.WriteFile(oracle, []byte(strings.Join(olines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd   string
		files []string
		want  []string
	}{
		{"table", []string{runs}, []string{"| knn-wine | 60 | 3 |"}},
		{"diag", []string{runs}, []string{"## knn-wine (tuning)"}},
		{"count", []string{runs}, append(append([]string{"paired bootstrap of 3 seeds"}, countLine["tuning"]...), countLine["held-out"]...)},
		{"count", []string{runs, oracle}, []string{"| oracle | 2 | 2.00 | 1.000 |", "| bkb | 0 | 0.00 | 0.000 |", "| tpe | 0 | 0.00 | 0.000 |"}},
	} {
		out, err := exec.Command(py, append([]string{filepath.Join("peers", "tuning.py"), c.cmd}, c.files...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tuning.py %s: %v\n%s", c.cmd, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("tuning.py %s %v printed no %q:\n%s", c.cmd, c.files, w, out)
			}
		}
	}
}

// median3 is the middle of three values.
func median3(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[1]
}
