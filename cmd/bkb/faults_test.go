package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The faults found when the command line was tried as a new user would
// (issue 9): each has a test here.

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRun asserts an exit code and a message on stderr.
func wantRun(t *testing.T, r runResult, code int, want string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "internal error") {
		t.Errorf("exit %d (want %d), stderr %q (want %q)", r.code, code, r.stderr, want)
	}
}

// TestOutputNeverReplacesStudy: --trace or --plot naming the study (or any
// journal) is refused before the run; an existing file is replaced only
// with --overwrite.
func TestOutputNeverReplacesStudy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "s.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "6", "-q", "--study", s); r.code != 0 {
		t.Fatalf("making a study: %s", r.stderr)
	}
	before, _ := os.ReadFile(s)
	other := writeFile(t, dir, "notes.csv", "my data\n")
	for _, args := range [][]string{
		{"optimize", "--study", s, "--resume", "-T", "8", "--trace", s},
		{"status", "--study", s, "--trace", s},
		{"status", "--study", s, "--trace", s, "--overwrite"},
		{"status", "--study", s, "--plot", filepath.Join(dir, "s.jsonl.png"), "--trace", filepath.Join(dir, "s.jsonl.png")},
	} {
		wantRun(t, runBKB(t, nil, args...), 2, "")
	}
	r := runBKB(t, nil, "optimize", "-T", "6", "-q", "--trace", other)
	wantRun(t, r, 2, "exists: choose another file, or give --overwrite")
	if after, _ := os.ReadFile(s); !bytes.Equal(before, after) {
		t.Error("the study journal changed")
	}
	if b, _ := os.ReadFile(other); string(b) != "my data\n" {
		t.Error("an existing file was replaced without --overwrite")
	}
	// A new study run whose trace path is refused leaves no journal.
	s2 := filepath.Join(dir, "s2.jsonl")
	wantRun(t, runBKB(t, nil, "optimize", "-T", "6", "-q", "--study", s2, "--trace", s), 2, "study journal")
	if _, err := os.Stat(s2); err == nil {
		t.Error("a refused run created its study")
	}
	// A missing directory is found before the run.
	wantRun(t, runBKB(t, nil, "optimize", "-T", "6", "-q", "--plot", filepath.Join(dir, "no", "p.png")), 2, "does not exist")
	if r := runBKB(t, nil, "status", "--study", s, "--trace", other, "--overwrite"); r.code != 0 {
		t.Errorf("--overwrite: %s", r.stderr)
	}
}

// TestJournalDoesNotFitSpace: records of another dimension than the
// header, or from another box of the same dimension, are a clear error
// (exit 2) for status and --resume, never an index panic or a silent
// resume.
func TestJournalDoesNotFitSpace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "6", "-q", "--study", a); r.code != 0 {
		t.Fatalf("making a study: %s", r.stderr)
	}
	b, _ := os.ReadFile(a)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	wide := writeFile(t, dir, "wide.jsonl", strings.Join(lines, "")+"\n"+
		`{"kind":"ask","trial":6,"arm":-1,"x":[1,2,3],"time":"2025-01-02T03:04:05Z"}`+"\n")
	// Study b: the same dimension, another box; a's records under b's header.
	bp := filepath.Join(dir, "b.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", bp, "--lower", "100,100", "--upper", "200,200", "-T", "6"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	bh, _ := os.ReadFile(bp)
	spliced := writeFile(t, dir, "spliced.jsonl", string(bh)+strings.Join(lines[1:], ""))
	for p, want := range map[string]string{wide: "x has 3 coordinates, earlier records have 2", spliced: "do not fit its search space"} {
		wantRun(t, runBKB(t, nil, "status", "--study", p), 2, want)
		wantRun(t, runBKB(t, nil, "optimize", "--study", p, "--resume", "-T", "9", "-q"), 2, want)
	}
}

// TestHugeValues: a plugin returning 1e307 (1 + x) gets clear failed
// trials (and a non-zero exit when every trial fails), the study stays
// loadable, and status --plot of a journal holding ±1e308 returns.
func TestHugeValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "huge.jsonl")
	args := append(pluginArgs(t, s, 6), "--max-failures", "0")
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=huge"}, args...)
	wantRun(t, r, 1, "every trial failed")
	recs := readJournal(t, s)
	fails := 0
	for _, rec := range recs {
		if rec.Kind == "fail" {
			fails++
			if !strings.Contains(rec.Error, "beyond") {
				t.Errorf("failure message %q does not say the value is out of range", rec.Error)
			}
		}
	}
	if fails != 6 {
		t.Errorf("%d failed trials, want 6", fails)
	}
	if r := runBKB(t, nil, "status", "--study", s); r.code != 0 {
		t.Errorf("status after huge values: %s", r.stderr)
	}
	// A journal written before the range check, with ±1e308 values.
	good := filepath.Join(dir, "good.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "6", "-q", "--study", good); r.code != 0 {
		t.Fatalf("making a study: %s", r.stderr)
	}
	b, _ := os.ReadFile(good)
	// Replace the first told value by 1e308 and the second by -1e308.
	lines := strings.Split(string(b), "\n")
	n := 0
	for i, l := range lines {
		if strings.Contains(l, `"kind":"tell"`) && n < 2 {
			j := strings.Index(l, `"y":`)
			k := strings.Index(l[j:], ",")
			v := "1e308"
			if n == 1 {
				v = "-1e308"
			}
			lines[i] = l[:j] + `"y":` + v + l[j+k:]
			n++
		}
	}
	legacy := writeFile(t, dir, "legacy.jsonl", strings.Join(lines, "\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bkbBin, "status", "--study", legacy, "--plot", filepath.Join(dir, "legacy.png"))
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatal("status --plot on ±1e308 values did not return")
	}
	if err != nil {
		t.Errorf("status --plot on ±1e308: %v\n%s", err, out)
	}
	r = runBKB(t, nil, "optimize", "--study", legacy, "--resume", "-T", "8", "-q")
	if r.code != 0 || !strings.Contains(r.stderr, "treated as failed") {
		t.Errorf("resume of a journal with ±1e308: exit %d, %s", r.code, r.stderr)
	}
}

// TestEveryTrialFails: a run whose every trial fails exits non-zero even
// below --max-failures.
func TestEveryTrialFails(t *testing.T) {
	t.Parallel()
	s := filepath.Join(t.TempDir(), "f.jsonl")
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=error", "BKB_TEST_AT=-1"}, pluginArgs(t, s, 4)...)
	wantRun(t, r, 1, "every trial failed")
}

// TestOneShotNoRestartNote: one-shot mode starts a process per evaluation
// and has no restarts to announce.
func TestOneShotNoRestartNote(t *testing.T) {
	t.Parallel()
	s := filepath.Join(t.TempDir(), "o.jsonl")
	args := append(pluginArgs(t, s, 3), "--one-shot", "--max-failures", "0")
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=crashloop"}, args...)
	if strings.Contains(r.stderr, "restart") || strings.Count(r.stderr, "failed") < 3 {
		t.Errorf("one-shot failures: %q", r.stderr)
	}
}

// TestInputFaults: trailing garbage after the space JSON, an unknown
// policy in a header and a changed arms CSV are usage errors (exit 2);
// ask with every trial asked says which are pending; Sobol's dimension
// limit is said; one best point is "Best point".
func TestInputFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := writeFile(t, dir, "space.json", `{"params":[{"name":"x","low":0,"high":1}]} trailing`)
	wantRun(t, runBKB(t, nil, "optimize", "--plugin", "true", "--space", garbage), 2, "unexpected content after")

	good := filepath.Join(dir, "good.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "5", "-q", "--study", good); r.code != 0 {
		t.Fatalf("making a study: %s", r.stderr)
	}
	b, _ := os.ReadFile(good)
	bad := writeFile(t, dir, "badpolicy.jsonl", strings.Replace(string(b), `"policy":"bkb"`, `"policy":"nope"`, 1))
	wantRun(t, runBKB(t, nil, "status", "--study", bad), 2, `unknown policy "nope"`)

	csv := writeFile(t, dir, "arms.csv", "0.1,0.2\n0.3,0.4\n0.5,0.6\n")
	cs := filepath.Join(dir, "csv.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "2", "-q", "--arms-file", csv, "--study", cs); r.code != 0 {
		t.Fatalf("csv study: %s", r.stderr)
	}
	writeFile(t, dir, "arms.csv", "0.1,0.2\n0.3,0.4\n0.5,0.7\n")
	wantRun(t, runBKB(t, nil, "optimize", "--study", cs, "--resume", "-T", "3", "-q"), 2, "changed since the study was created")

	ask := filepath.Join(dir, "ask.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", ask, "-f", "branin", "-T", "2"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	for i := 0; i < 2; i++ {
		if r := runBKB(t, nil, "ask", "--study", ask); r.code != 0 {
			t.Fatalf("ask: %s", r.stderr)
		}
	}
	wantRun(t, runBKB(t, nil, "ask", "--study", ask), 1, "2 still pending")

	lower := strings.TrimSuffix(strings.Repeat("0,", 33), ",")
	upper := strings.TrimSuffix(strings.Repeat("1,", 33), ",")
	// Sobol points exist for at most 32 parameters: asked for, they are an
	// error; by default a larger space gets Latin-hypercube arms.
	wantRun(t, runBKB(t, nil, "optimize", "--arms", "sobol", "--plugin", "true", "--lower", lower, "--upper", upper), 2, "Sobol arms support at most 32 parameters")
	if r := runBKB(t, nil, "create-study", "--study", filepath.Join(dir, "wide.jsonl"), "--lower", lower, "--upper", upper, "-T", "3"); r.code != 0 || !strings.Contains(r.stdout, "lhs arms") {
		t.Errorf("33 parameters at defaults: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}

	r := runBKB(t, nil, "optimize", "-T", "1", "--progress", "none")
	if r.code != 0 || !strings.Contains(r.stdout, "Best point of 1 complete trial") {
		t.Errorf("one trial: %s %s", r.stdout, r.stderr)
	}
}

// TestScaleProgress: bench --scale reports overall progress and a time
// estimate on every finished checkpoint, and its --markdown output, like
// every output, is checked before the run.
func TestScaleProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runBKB(t, nil, "bench", "--scale", "--scale-arms", "200", "--scale-t", "5,10", "--scale-variants", "bkb", "--scale-budget", "2s", "--markdown", filepath.Join(dir, "s.md"))
	if r.code != 0 || !strings.Contains(r.stderr, "[1/2 checkpoints,") || !strings.Contains(r.stderr, "left]") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	existing := writeFile(t, dir, "mine.md", "my notes\n")
	wantRun(t, runBKB(t, nil, "bench", "--scale", "--markdown", existing), 2, "exists")
	wantRun(t, runBKB(t, nil, "regress", "--data", "elevators", "--csv", existing), 2, "exists")
}
