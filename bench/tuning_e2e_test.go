//go:build e2e

package bench

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuningTables runs bench/peers/tuning.py's table and diag (the
// commands of docs/tuning.md that read run files) on a file of made-up
// runs of one real task and one 20-100-parameter problem: each must exit
// 0 and print its header. The runs themselves take minutes a seed and are
// not run here.
func TestTuningTables(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy.stats").Run(); err != nil {
		t.Skipf("%s cannot import scipy.stats (Debian's python3-scipy): %v", py, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var lines []string
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
	for _, c := range []struct{ cmd, want string }{
		{"table", "| knn-wine | 60 | 3 |"},
		{"diag", "## knn-wine (tuning)"},
	} {
		out, err := exec.Command(py, filepath.Join("peers", "tuning.py"), c.cmd, runs).CombinedOutput()
		if err != nil {
			t.Fatalf("tuning.py %s: %v\n%s", c.cmd, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("tuning.py %s printed no %q:\n%s", c.cmd, c.want, out)
		}
	}
}
