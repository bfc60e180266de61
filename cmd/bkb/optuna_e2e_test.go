//go:build e2e

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// optunaPython returns a Python 3 interpreter that imports optuna, or skips
// the test: BKB_PYTHON if set, else python3 on PATH, else Debian's
// /usr/bin/python3 (where apt-get puts python3-optuna).
func optunaPython(t *testing.T) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("BKB_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	for _, p := range cands {
		if exec.Command(p, "-c", "import optuna, sqlalchemy").Run() == nil {
			return p
		}
	}
	t.Skipf("no python3 that imports optuna and sqlalchemy among %v (Debian: apt-get install python3-optuna; or set BKB_PYTHON): BkbSampler is not tested", cands)
	return ""
}

// TestOptunaSampler runs the tests of bkb_client.optuna.BkbSampler
// (clients/python/tests/test_optuna_sampler.py) with this bkb: an Optuna
// study on Branin asks the points of `bkb optimize` bit for bit for 40
// trials, on Optuna's in-memory storage and on SQLite; two objectives give
// a Pareto front; a raising objective, n_jobs=2, a MedianPruner,
// constraints, the first trial's space and conditional parameters, url=
// and a resumed study, and the sampler's own server stopping at exit.
func TestOptunaSampler(t *testing.T) {
	py := optunaPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "-v", "test_optuna_sampler")
	cmd.Dir = filepath.Join("..", "..", "clients", "python", "tests")
	cmd.Env = append(os.Environ(), "BKB_PATH="+bkbBin, "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=.")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s -m unittest test_optuna_sampler: %v\n%s", py, err, out.String())
	}
	// Every test runs here (optuna and bkb are given): a skip is a failure
	// to test, not a pass.
	if regexp.MustCompile(`(?m) \.\.\. skipped|skipped=`).MatchString(out.String()) {
		t.Fatalf("tests were skipped:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "test_branin_asks_the_command_lines_points") {
		t.Fatalf("the Branin test did not run:\n%s", out.String())
	}
	t.Logf("%s", out.String())
}
