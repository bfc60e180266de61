package main

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/study"
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

// TestPlotStudyFile: a study's plot is written to the file asked for.
func TestPlotStudyFile(t *testing.T) {
	t.Parallel()
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
