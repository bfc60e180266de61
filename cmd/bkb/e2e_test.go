//go:build e2e

package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// TestKillAndResume kills a run with SIGKILL once some evaluations are in
// its journal, resumes it, and checks that it ends with exactly the budget
// of trials, none lost or repeated, and the same arms as an uninterrupted
// run.
func TestKillAndResume(t *testing.T) {
	const budget = 30
	dir := t.TempDir()
	env := []string{"BKB_TEST_PLUGIN=slow", "BKB_TEST_SLEEP=20ms"}

	// Uninterrupted reference run.
	ref := filepath.Join(dir, "ref.jsonl")
	if r := runBKB(t, env, pluginArgs(t, ref, budget)...); r.code != 0 {
		t.Fatalf("reference run: exit %d\n%s", r.code, r.stderr)
	}
	refArms, _ := checkJournal(t, ref, budget)

	path := filepath.Join(dir, "killed.jsonl")
	cmd := exec.Command(bkbBin, pluginArgs(t, path, budget)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Poll the journal (bounded) until some evaluations are in it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte(`"kind":"tell"`)) >= 8 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no evaluations in the journal after 30 s; stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before := 0
	for _, r := range readJournal(t, path) {
		if r.Kind == storage.KindTell {
			before++
		}
	}
	if before >= budget {
		t.Fatalf("the run finished (%d tells) before it was killed", before)
	}

	r := runBKB(t, env, "optimize", "--study", path, "--resume", "--json", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "resuming") {
		t.Errorf("resume did not say so; stderr:\n%s", r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Trials != budget || res.Complete != budget {
		t.Errorf("after resume: %d trials, %d complete; want %d", res.Trials, res.Complete, budget)
	}
	arms, _ := checkJournalReasked(t, path, budget, 1)
	for i := range arms {
		if arms[i] != refArms[i] {
			t.Errorf("trial %d: arm %d after kill and resume, %d uninterrupted", i, arms[i], refArms[i])
		}
	}
	t.Logf("killed after %d evaluations; resumed to %d", before, budget)

	// Resuming a finished study does nothing more.
	r = runBKB(t, env, "optimize", "--study", path, "--resume", "--json", "--progress", "none")
	if r.code != 0 || decodeResult(t, r.stdout).Trials != budget {
		t.Errorf("second resume: exit %d, stdout %s", r.code, r.stdout)
	}
	checkJournalReasked(t, path, budget, 1)
}

// TestAskTellShellLoop drives a Branin study from a shell loop: ask prints
// the point, awk computes Branin, tell records it. 50 evaluations reach the
// optimum region.
func TestAskTellShellLoop(t *testing.T) {
	for _, tool := range []string{"bash", "awk", "seq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "loop.sh")
	err := os.WriteFile(script, []byte(`set -euo pipefail
bkb=$1; s=$2
"$bkb" create-study --study "$s" --objective branin --budget 50 > /dev/null
for i in $(seq 50); do
  read -r trial x1 x2 < <("$bkb" ask --study "$s" --format tsv)
  y=$(awk -v x1="$x1" -v x2="$x2" 'BEGIN { pi = atan2(0, -1); b = 5.1 / (4 * pi * pi); c = 5 / pi; t = 1 / (8 * pi);
    u = x2 - b * x1 * x1 + c * x1 - 6; printf "%.17g", u * u + 10 * (1 - t) * cos(x1) + 10 }')
  "$bkb" tell --study "$s" --trial "$trial" --value "$y"
done
if "$bkb" ask --study "$s" 2> "$s.err"; then echo "ask after the budget should fail"; exit 1; fi
"$bkb" status --study "$s" --json
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "branin.jsonl")
	cmd := exec.Command("bash", script, bkbBin, path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("shell loop: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	res := decodeResult(t, out.String())
	if res.Complete != 50 || res.Best == nil {
		t.Fatalf("complete %d, best %v; want 50 complete", res.Complete, res.Best)
	}
	if got := res.Best.Value; math.Abs(got-0.397887) > 0.5 {
		t.Errorf("best Branin value after 50 ask/tell rounds %.4f, want within 0.5 of 0.397887", got)
	}
	if want := branin(res.Best.X[0], res.Best.X[1]); math.Abs(want-res.Best.Value) > 1e-9 {
		t.Errorf("best value %v does not match Branin at %v (%v)", res.Best.Value, res.Best.X, want)
	}
	checkJournal(t, path, 50)
	errMsg, _ := os.ReadFile(path + ".err")
	if !strings.Contains(string(errMsg), "complete") {
		t.Errorf("ask after the budget: stderr %q", errMsg)
	}
	t.Logf("ask/tell shell loop: best %.6f at %v (trial %d)", res.Best.Value, res.Best.X, res.Best.Trial)
}

// TestPythonPlugin runs the shipped Python example plugin, long-lived and
// one-shot, when python3 is installed.
func TestPythonPlugin(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs("../../objectives/plugin/examples/python/branin.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("example plugin missing: %v", err)
	}
	for _, extra := range [][]string{nil, {"--one-shot"}} {
		args := append([]string{"optimize", "-T", "15", "--json", "-q", "--lower", "-5,0", "--upper", "10,15"}, extra...)
		args = append(args, "--", py, script)
		r := runBKB(t, nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", extra, r.code, r.stderr)
		}
		res := decodeResult(t, r.stdout)
		if res.Complete != 15 || res.Best == nil || math.Abs(branin(res.Best.X[0], res.Best.X[1])-res.Best.Value) > 1e-9 {
			t.Errorf("%v: %+v", extra, res)
		}
	}
}
