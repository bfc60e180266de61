package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// writeRegressCSV writes rows "x1,x2,y" with y = target(i) to dir/name.
func writeRegressCSV(t *testing.T, name string, n int, target func(i int, x, z float64) float64) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		x := float64(i%37) / 37
		z := float64((i*7)%41) / 41
		fmt.Fprintf(&b, "%g,%g,%g\n", x, z, target(i, x, z))
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// csvScores runs regress with --format csv and returns learner -> score
// (MSE or mistake %) and the CSV header.
func csvScores(t *testing.T, args ...string) (map[string]float64, []string, string) {
	t.Helper()
	code, out, errs := runRegressArgs(t, append(args, "--format", "csv", "--progress", "none")...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv %q: %v", out, err)
	}
	m := map[string]float64{}
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatalf("score %q: %v", r[4], err)
		}
		m[r[3]] = v
	}
	return m, recs[0], errs
}

// TestRegressProfileByFlagNotFileName: a user's file named elevators.csv
// gets neither our exp transform, nor our width, nor the paper column;
// --profile 000 changes the target range to [-1, 1].
func TestRegressProfileByFlagNotFileName(t *testing.T) {
	p := writeRegressCSV(t, "elevators.csv", 200, func(i int, x, z float64) float64 { return x + z })
	_, header, errs := csvScores(t, "--data", p, "--learners", "mean,nons-ald")
	if strings.Contains(strings.Join(header, ","), "paper") {
		t.Errorf("a user's elevators.csv got the paper column: %v", header)
	}
	if strings.Contains(errs, "exp(") || strings.Contains(errs, "paper's value") {
		t.Errorf("a user's elevators.csv got our defaults:\n%s", errs)
	}
	if !strings.Contains(errs, "median distance") || !strings.Contains(errs, "to [0, 1]") {
		t.Errorf("no data-driven width or target range reported:\n%s", errs)
	}
	_, _, errs = csvScores(t, "--data", p, "--learners", "mean", "--profile", "000")
	if !strings.Contains(errs, "to [-1, 1]") {
		t.Errorf("--profile 000 did not scale the targets to [-1, 1]:\n%s", errs)
	}
}

// TestRegressBinaryLabels: 0/1 targets are a classification stream
// (mistake rate), unless --task regression says otherwise.
func TestRegressBinaryLabels(t *testing.T) {
	p := writeRegressCSV(t, "labels.csv", 400, func(i int, x, z float64) float64 {
		if x > z {
			return 1
		}
		return 0
	})
	scores, header, errs := csvScores(t, "--data", p)
	if header[4] != "mistakes %" || !strings.Contains(errs, "0 -> -1, 1 -> +1") {
		t.Fatalf("0/1 labels not detected as classification: %v\n%s", header, errs)
	}
	for _, l := range []string{"fogd", "nogd", "forks"} {
		if !(scores[l] < scores["mean"]) {
			t.Errorf("%s makes %.1f%% mistakes, the majority label %.1f%%", l, scores[l], scores["mean"])
		}
	}
	_, header, _ = csvScores(t, "--data", p, "--task", "regression", "--learners", "mean")
	if header[4] != "MSE" {
		t.Errorf("--task regression: header %v", header)
	}
}

// TestRegressOutlierTarget: one target of 1e6 among values in [0, 2] is
// clipped and reported; the other targets keep their spread, so the
// learners' MSE stays comparable with the mean's instead of collapsing.
func TestRegressOutlierTarget(t *testing.T) {
	p := writeRegressCSV(t, "outlier.csv", 300, func(i int, x, z float64) float64 {
		if i == 17 {
			return 1e6
		}
		return x*x + z
	})
	scores, _, errs := csvScores(t, "--data", p, "--learners", "mean,nons-ald,fogd")
	if !strings.Contains(errs, "1 target(s) outside the outlier fences") {
		t.Errorf("outlier not reported:\n%s", errs)
	}
	// Scaled to [0, 1] by the clean range [0, 2), the targets have variance
	// about 0.04; min-max with 1e6 would give every MSE about 4e-12 after
	// round 17... and the mean's would be 1/300.
	if m := scores["mean"]; m < 0.01 || m > 0.2 {
		t.Errorf("running-mean MSE %v: the targets were squeezed", m)
	}
	for _, l := range []string{"nons-ald", "fogd"} {
		if !(scores[l] < scores["mean"]) {
			t.Errorf("%s MSE %v, mean %v", l, scores[l], scores["mean"])
		}
	}
}

// TestRegressShortStream: FOGD and NOGD used the step 10/sqrt(T), which is
// above 2 for T < 25 and diverged (MSE 27.7 and 1143 on 10 rows); targets
// are in [0, 1], so any sane learner has MSE below 1.
func TestRegressShortStream(t *testing.T) {
	p := writeRegressCSV(t, "short.csv", 10, func(i int, x, z float64) float64 { return x + 0.3*z })
	scores, _, errs := csvScores(t, "--data", p, "--learners", "mean,fogd,nogd,aogd-ald,nons-ald,pros-n-kons,con-kons,pkrr-nystrom")
	for l, v := range scores {
		if !(v < 0.5) {
			t.Errorf("%s: MSE %v on a 10-row stream", l, v)
		}
	}
	if !strings.Contains(errs, "warning: the stream has only 10 rows") {
		t.Errorf("no short-stream warning:\n%s", errs)
	}
	p1 := writeRegressCSV(t, "one.csv", 1, func(i int, x, z float64) float64 { return 3 })
	if _, _, errs := csvScores(t, "--data", p1, "--learners", "mean,nons-ald"); !strings.Contains(errs, "single row") {
		t.Errorf("no single-row warning:\n%s", errs)
	}
}

// TestRegressConstantTarget warns and still runs.
func TestRegressConstantTarget(t *testing.T) {
	p := writeRegressCSV(t, "const.csv", 100, func(int, float64, float64) float64 { return 4.5 })
	scores, _, errs := csvScores(t, "--data", p, "--learners", "mean,nons-ald,fogd")
	if !strings.Contains(errs, "warning: the target is constant") {
		t.Errorf("no constant-target warning:\n%s", errs)
	}
	for l, v := range scores {
		// The constant is scaled to 1/2; predicting 0 throughout costs 0.25.
		if !(v < 0.05) {
			t.Errorf("%s: MSE %v on a constant target", l, v)
		}
	}
}

// cancelOn is a writer that cancels a context when it sees a string.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestRegressInterruptKeepsFinishedRows cancels the run when the second
// learner reports its last round: the third learner stops at its first
// context check, the two finished rows are printed and written with --csv,
// and the exit code is 130.
func TestRegressInterruptKeepsFinishedRows(t *testing.T) {
	p := writeRegressCSV(t, "long.csv", 3000, func(i int, x, z float64) float64 { return x - z })
	csvPath := filepath.Join(t.TempDir(), "rows.csv")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOn{marker: "regress: nons-ald order 1: 3000/3000", cancel: cancel}
	var out bytes.Buffer
	code := runRegress(ctx, []string{"--data", p, "--learners", "fogd,nons-ald,nogd", "--progress", "lines", "--csv", csvPath}, &out, stderr)
	if code != exitInterrupt {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupt, stderr.buf.String())
	}
	if !strings.Contains(out.String(), "fogd") || !strings.Contains(out.String(), "nons-ald") || strings.Contains(out.String(), "nogd") {
		t.Errorf("table after interrupt:\n%s", out.String())
	}
	if !strings.Contains(stderr.buf.String(), "interrupted; 2 learner(s) finished") {
		t.Errorf("stderr: %s", stderr.buf.String())
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][3] != "fogd" || recs[2][3] != "nons-ald" {
		t.Errorf("--csv after interrupt: %v %v", recs, err)
	}
}

// TestRegressBuiltInData: the README's `bkb regress --data elevators` works
// without ../shared/data (the test runs in cmd/bkb, where it does not
// exist), from the copy built into the binary.
func TestRegressBuiltInData(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "shared", "data", "elevators.csv.gz")); err == nil {
		t.Skip("../shared/data exists relative to cmd/bkb")
	}
	code, out, errs := runRegressArgs(t, "--data", "elevators", "--n", "500", "--learners", "nons-ald", "--progress", "none")
	if code != exitOK || !strings.Contains(out, "elevators") || !strings.Contains(errs, "built into bkb") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errs)
	}
	code, _, errs = runRegressArgs(t, "--data", "bike", "--progress", "none")
	if code != exitUsage || !strings.Contains(errs, "give a CSV path") {
		t.Errorf("missing dataset: exit %d, %s", code, errs)
	}
}

// TestRegressUnknownNamesAreUsageErrors: an unknown synthetic function or
// learner, a malformed CSV or a task the targets do not allow is a usage
// error (exit 2), as docs/cli.md says.
func TestRegressUnknownNamesAreUsageErrors(t *testing.T) {
	malformed := writeRegressCSV(t, "bad.csv", 20, func(int, float64, float64) float64 { return 1 })
	if err := os.WriteFile(malformed, []byte("1,2,3\n4,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	threeValues := writeRegressCSV(t, "three.csv", 30, func(i int, _, _ float64) float64 { return float64(i % 3) })
	for _, args := range [][]string{
		{"--stream", "synthetic:nosuchfunction"},
		{"--stream", "synthetic:friedman:d=3"},
		{"--stream", "synthetic:gp:q=1"},
		{"--stream", "synthetic:branin", "--learners", "nosuchlearner"},
		{"--stream", "synthetic:branin", "--task", "ranking"},
		{"--stream", "synthetic:branin", "--budget", "-5"},
		{"--data", malformed},
		{"--data", threeValues, "--task", "classification"},
	} {
		if code, _, errs := runRegressArgs(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errs)
		}
	}
}
