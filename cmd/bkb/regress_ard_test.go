package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// relevanceCSV writes n rows with a header: six inputs of which only
// "speed" and "load" move the target.
func relevanceCSV(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("a,speed,b,c,load,d,target\n")
	for i := 0; i < n; i++ {
		v := make([]float64, 6)
		for j := range v {
			v[j] = float64((i*(7+6*j)+3*j)%(29+2*j)) / float64(29+2*j)
		}
		fmt.Fprintf(&b, "%g,%g,%g,%g,%g,%g,%g\n", v[0], v[1], v[2], v[3], v[4], v[5], math.Sin(4*v[1])+v[4]*v[4])
	}
	p := filepath.Join(t.TempDir(), "rel.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegressARDFlag: relevance is on by default for regression data with
// 5 or more inputs and no paper's settings, prints the relevant inputs by
// name, most relevant first; --ard=off, a named paper dataset and data
// with 2 inputs leave it off unless --ard on.
func TestRegressARDFlag(t *testing.T) {
	t.Parallel()
	rel, toy := relevanceCSV(t, 400), toyCSV(t)
	cases := []struct {
		args []string
		ard  bool
	}{
		{[]string{"--data", rel}, true},
		{[]string{"--data", rel, "--ard", "off"}, false},
		{[]string{"--data", rel, "--ard=off"}, false},
		{[]string{"--data", toy}, false},
		{[]string{"--data", toy, "--ard", "on"}, true},
		{[]string{"--data", "elevators", "--n", "300"}, false},
	}
	for _, c := range cases {
		args := append([]string{"--learners", "mean,fogd:d=10", "--progress", "none"}, c.args...)
		code, out, errs := runRegressArgs(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		got := strings.Contains(out, "Input relevance") && strings.Contains(errs, "per-input relevance") && strings.Contains(out, "relevance (ard*f")
		if got != c.ard {
			t.Errorf("%v: relevance %v, want %v:\n%s\n%s", c.args, got, c.ard, out, errs)
		}
	}
	_, out, _ := runRegressArgs(t, "--data", rel, "--learners", "mean", "--progress", "none")
	_, table, _ := strings.Cut(out, "Input relevance")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.HasPrefix(strings.TrimSpace(lines[1]), "speed") && !strings.HasPrefix(strings.TrimSpace(lines[1]), "load") ||
		!strings.Contains(lines[3], "nearly irrelevant") || !strings.Contains(lines[3], "a, b, c, d") {
		t.Errorf("want speed and load relevant, a, b, c, d not:\n%s", table)
	}
	if code, _, errs := runRegressArgs(t, "--data", rel, "--ard=maybe"); code != exitUsage || !strings.Contains(errs, "--ard must be") {
		t.Errorf("bad --ard: exit %d: %s", code, errs)
	}
}
