package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toyCSV writes a small regression dataset and returns its path.
func toyCSV(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 300; i++ {
		x := float64(i%37) / 37
		z := float64((i*7)%41) / 41
		fmt.Fprintf(&b, "%g,%g,%g\n", x, z, x*x+0.5*z)
	}
	p := filepath.Join(t.TempDir(), "toy.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runRegressArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runRegress(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRegressFormats(t *testing.T) {
	data := toyCSV(t)
	code, out, errs := runRegressArgs(t, "--data", data, "--learners", "nons-ald,fogd:d=20", "--orders", "2", "--progress", "none")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"toy: n = 300, 2 order(s)", "nons-ald", "fogd:d=20", "MSE", "J/D", "s/pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runRegressArgs(t, "--data", data, "--learners", "aogd-ald", "--format", "csv", "--n", "100", "--progress", "none")
	if code != exitOK {
		t.Fatal(code)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "stream" || recs[1][1] != "100" || recs[1][3] != "aogd-ald" {
		t.Errorf("csv %v %v", recs, err)
	}
	code, out, _ = runRegressArgs(t, "--data", data, "--learners", "nons-ald", "--format", "markdown", "--progress", "none")
	if code != exitOK || !strings.Contains(out, "|") || !strings.Contains(out, "---") {
		t.Errorf("markdown exit %d:\n%s", code, out)
	}
}

func TestRegressStreams(t *testing.T) {
	code, out, errs := runRegressArgs(t, "--stream", "sim000", "--n", "15", "--learners", "kawv,pkawv-taylor:m=2", "--progress", "none")
	if code != exitOK || !strings.Contains(out, "regret") || !strings.Contains(out, "AWV bound") {
		t.Errorf("sim000 exit %d: %s%s", code, out, errs)
	}
	code, out, errs = runRegressArgs(t, "--stream", "synthetic:branin", "--n", "200", "--learners", "nons-ald", "--progress", "lines")
	if code != exitOK || !strings.Contains(out, "synthetic:branin") || !strings.Contains(errs, "regress: nons-ald order 1: 200/200") {
		t.Errorf("synthetic exit %d: %s%s", code, out, errs)
	}
}

// TestRegressPaperDefaults runs cheap learners over the whole shared
// elevators dataset and checks that the paper's column appears (skipped
// without ../shared/data).
func TestRegressPaperDefaults(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(dir, "elevators.csv.gz")); err != nil {
		t.Skip("shared data not available")
	}
	code, out, errs := runRegressArgs(t, "--data", "elevators", "--data-dir", dir, "--progress", "none", "--learners", "nons-ald,aogd-ald,fogd:d=20,nogd:b=20")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"nons-ald", "aogd-ald", "fogd", "nogd", "paper MSE", "0.00284"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRegressUsageErrors(t *testing.T) {
	data := toyCSV(t)
	cases := [][]string{
		{"--format", "xml", "--data", data},
		{"--orders", "0", "--data", data},
		{"--learners", "nosuch", "--data", data},
		{"--learners", "fogd:x=1", "--data", data},
		{"--stream", "bogus"},
		{"--data", "no/such/file"},
		{"--kernel-width", "-1", "--data", data},
		{"--profile", "999", "--data", data},
		{"--target-transform", "sqrt", "--data", data},
		{"--progress", "sometimes", "--data", data},
		{"--nosuchflag"},
		{"--data", data, "extra"},
	}
	for _, args := range cases {
		code, _, errs := runRegressArgs(t, args...)
		if code != exitUsage || !strings.HasPrefix(errs, "bkb: regress: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := runRegressArgs(t, "--help"); code != exitOK || !strings.Contains(errs, "Usage: bkb regress") {
		t.Errorf("--help: exit %d %q", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := runRegress(ctx, []string{"--data", data, "--learners", "nons-ald", "--progress", "none"}, &out, &errb); code != exitInterrupt {
		t.Errorf("cancelled run: exit %d, %s", code, errb.String())
	}
}

// TestRegressWidthMixFlag: regression data without a paper's settings gets
// the width mix by default (the note names the grid and the weights),
// --width-mix=off and --kernel-width give one width, 0/1 labels and a named
// paper dataset get none unless --width-mix asks, and a bad value is a
// usage error.
func TestRegressWidthMixFlag(t *testing.T) {
	data := toyCSV(t)
	labels := writeRegressCSV(t, "labels.csv", 300, func(i int, x, z float64) float64 {
		if x > z {
			return 1
		}
		return 0
	})
	cases := []struct {
		args []string
		mix  bool
	}{
		{[]string{"--data", data}, true},
		{[]string{"--data", data, "--width-mix"}, true},
		{[]string{"--data", data, "--width-mix=on"}, true},
		{[]string{"--data", data, "--width-mix=off"}, false},
		{[]string{"--data", data, "--kernel-width", "0.5"}, false},
		{[]string{"--data", labels}, false},
		{[]string{"--data", labels, "--width-mix"}, true},
		{[]string{"--data", "elevators", "--n", "300"}, false},
	}
	for _, c := range cases {
		args := append([]string{"--learners", "fogd:d=10", "--format", "csv", "--progress", "none"}, c.args...)
		code, out, errs := runRegressArgs(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if got := strings.Contains(out, "mix of 4 widths") && strings.Contains(errs, "mix of experts"); got != c.mix {
			t.Errorf("%v: mix %v, want %v:\n%s\n%s", c.args, got, c.mix, out, errs)
		}
	}
	if code, _, errs := runRegressArgs(t, "--data", data, "--width-mix=sometimes"); code != exitUsage || !strings.Contains(errs, "--width-mix must be") {
		t.Errorf("bad --width-mix: exit %d: %s", code, errs)
	}
}
