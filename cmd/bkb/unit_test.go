package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/study"
	"gonum.org/v1/plot/plotter"
)

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`python3 branin.py`:              {"python3", "branin.py"},
		`  a   'b c'  "d \"e\"" f\ g `:   {"a", "b c", `d "e"`, "f g"},
		`prog --x=''`:                    {"prog", "--x="},
		`'/path with space/plugin' -v 2`: {"/path with space/plugin", "-v", "2"},
	} {
		got, err := splitCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `   `, `a 'b`, `a \`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q): no error", bad)
		}
	}
}

// TestRecoverPanic: a panic becomes one "bkb: internal error" line and exit 1.
func TestRecoverPanic(t *testing.T) {
	var stderr bytes.Buffer
	code := func() (code int) {
		defer recoverPanic(&code, &stderr)
		panic("boom")
	}()
	if code != exitFailure || !strings.HasPrefix(stderr.String(), "bkb: internal error: boom") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

// TestRunInProcess exercises dispatch without the binary.
func TestRunInProcess(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"optimize", "-T", "8", "-q", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"complete": 8`) {
		t.Errorf("output:\n%s", out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"optimize", "-T", "8", "-q"}, &out, &errb); code != exitInterrupt || !strings.Contains(errb.String(), "interrupted after 0 trials") {
		t.Errorf("cancelled run: exit %d, stderr %q", code, errb.String())
	}
}

// TestNumericsReported: clamped variances and jitter reach the summary.
func TestNumericsReported(t *testing.T) {
	var out bytes.Buffer
	r := &result{}
	if err := r.writeText(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "numerics") {
		t.Errorf("numerics reported without any: %q", out.String())
	}
	r.Numerics.VarianceClamps, r.Numerics.RetryJitter = 3, 1
	out.Reset()
	if err := r.writeText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "3 negative variances clamped to 0") || !strings.Contains(out.String(), "1 factorizations retried") {
		t.Errorf("summary %q", out.String())
	}
}

// TestPlotRanges: the value axis covers the central values, the best so
// far and the known minimum (Hartmann's minimum was outside it), one wild
// value cannot stretch it to ±1e308, and a log axis within one decade gets
// more than one labelled tick (Hartmann 6's regret axis had one).
func TestPlotRanges(t *testing.T) {
	vals := plotter.XYs{{X: 0, Y: -1}, {X: 1, Y: -2}, {X: 2, Y: -2.5}, {X: 3, Y: 1e308}, {X: 4, Y: -2.8}}
	best := plotter.XYs{{X: 0, Y: -1}, {X: 4, Y: -2.8}}
	lo, hi := yRange(vals, best)
	if lo > -2.8 || hi > 10 || math.IsInf(hi-lo, 0) {
		t.Errorf("y range [%v, %v]", lo, hi)
	}
	for _, r := range [][2]float64{{0.02, 0.09}, {1e-3, 5e-3}, {0.3, 0.5}} {
		labelled := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 {
			t.Errorf("log axis [%v, %v]: %d labelled ticks", r[0], r[1], labelled)
		}
	}
	// The known minimum of a built-in is inside the drawn range, with room
	// above the values for the legend.
	if lo, hi := plotYRange(vals, best, -3.86, true); lo > -3.86 || hi > 10 || hi < -1+0.25*(hi-lo) {
		t.Errorf("range [%v, %v] misses the minimum -3.86 or the legend's headroom", lo, hi)
	}
	dir := t.TempDir()
	sp, err := specOf(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	trials := []study.TrialResult{{Number: 0, State: study.Complete, Value: -1}, {Number: 1, State: study.Complete, Value: -2}}
	if err := plotStudy(filepath.Join(dir, "p.png"), sp, trials); err != nil {
		t.Fatal(err)
	}
}

func mustConfig(t *testing.T) study.Config {
	t.Helper()
	f, _ := objectives.Lookup("hartmann3")
	space, err := study.Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSpec(study.Config{Space: space}, objectiveSpec{Kind: "builtin", Name: f.String()})
	if err != nil {
		t.Fatal(err)
	}
	return s.cfg
}
