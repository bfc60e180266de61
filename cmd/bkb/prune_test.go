package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bkbIn runs the command in this process and returns its exit status and
// output.
func bkbIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestReportExitStatus: bkb report exits 0 while the trial should go on
// and exitPrune once the median pruner says stop; tell --pruned records
// the trial pruned, status counts it, and a value for it is refused.
func TestReportExitStatus(t *testing.T) {
	t.Parallel()
	j := filepath.Join(t.TempDir(), "s.jsonl")
	steps := func(trial string, vals ...string) []int {
		var codes []int
		for k, v := range vals {
			code, _, errs := bkbIn("report", "--study", j, "--trial", trial, "--step", string(rune('0'+k)), "--value", v)
			if code != exitOK && code != exitPrune {
				t.Fatalf("report: status %d: %s", code, errs)
			}
			codes = append(codes, code)
		}
		return codes
	}
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := bkbIn(args...)
		if code != exitOK {
			t.Fatalf("bkb %v: status %d: %s", args, code, errs)
		}
		return out
	}
	must("create-study", "--study", j, "--lower", "0,0", "--upper", "1,1", "--budget", "5", "--pruner", "median:startup=1")
	must("ask", "--study", j)
	if got := steps("0", "0.5", "0.4", "0.3"); got[0]+got[1]+got[2] != 0 {
		t.Fatalf("first trial: statuses %v, want 0 (no complete trial to compare with)", got)
	}
	must("tell", "--study", j, "--trial", "0", "--value", "0.3")
	must("ask", "--study", j)
	if got := steps("1", "0.45", "0.6"); got[0] != exitOK || got[1] != exitPrune {
		t.Fatalf("second trial: statuses %v, want [0 %d] (0.45 < median 0.5; then 0.45 > 0.4)", got, exitPrune)
	}
	must("tell", "--study", j, "--trial", "1", "--pruned")
	if code, _, errs := bkbIn("tell", "--study", j, "--trial", "1", "--value", "1"); code != exitFailure || !strings.Contains(errs, "pruned") {
		t.Errorf("tell of a pruned trial: status %d, %q", code, errs)
	}
	if out := must("status", "--study", j); !strings.Contains(out, "1 complete, 0 failed, 1 pruned") {
		t.Errorf("status: %s", out)
	}
	if code, _, errs := bkbIn("report", "--study", j, "--trial", "1", "--step", "5", "--value", "1"); code != exitFailure || !strings.Contains(errs, "not pending") {
		t.Errorf("report on a pruned trial: status %d, %q", code, errs)
	}
}

// TestPrunerFlags: --pruner and the space file's "pruner" choose the
// pruner; bad settings are usage errors naming the problem.
func TestPrunerFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	space := filepath.Join(dir, "space.json")
	if err := os.WriteFile(space, []byte(`{"params":[{"name":"lr","low":0.001,"high":0.1,"log":true}],"pruner":{"kind":"asha","reduction_factor":3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--lower", "0", "--upper", "1", "--pruner", "hyperband:min=1,max=27"}, exitOK, `"kind":"hyperband","min_resource":1,"reduction_factor":3,"max_resource":27`},
		{[]string{"--space", space}, exitOK, `"kind":"asha","min_resource":1,"reduction_factor":3`},
		{[]string{"--space", space, "--pruner", "median"}, exitUsage, "not both"},
		{[]string{"--lower", "0", "--upper", "1", "--pruner", "medain"}, exitUsage, `unknown pruner "medain"`},
		{[]string{"--lower", "0", "--upper", "1", "--pruner", "asha:eta=1"}, exitUsage, "reduction_factor = 1"},
		{[]string{"--lower", "0", "--upper", "1", "--pruner", "median:warm=3"}, exitUsage, `unknown setting "warm"`},
		{[]string{"--lower", "0", "--upper", "1"}, exitOK, ""},
	} {
		j := filepath.Join(dir, "s"+string(rune('a'+i))+".jsonl")
		code, _, errs := bkbIn(append([]string{"create-study", "--study", j}, c.args...)...)
		if code != c.code {
			t.Errorf("%v: status %d, want %d: %s", c.args, code, c.code, errs)
			continue
		}
		if code != exitOK {
			if !strings.Contains(errs, c.want) {
				t.Errorf("%v: %q, want it to mention %q", c.args, errs, c.want)
			}
			continue
		}
		b, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		head := strings.SplitN(string(b), "\n", 2)[0]
		if c.want == "" && strings.Contains(head, `"pruner"`) {
			t.Errorf("%v: a study without a pruner stores one: %s", c.args, head)
		}
		if c.want != "" && !strings.Contains(head, c.want) {
			t.Errorf("%v: header %s, want %s", c.args, head, c.want)
		}
	}
}
