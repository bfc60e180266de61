package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Unsafe inputs found by an audit (a user's typing, crafted files): each is
// an exit 2 with a message naming the problem, and leaves the journal as
// it was.

// TestDuplicateArmRows: an arms file with a point twice makes a study that
// runs, resumes and reports like any other.
func TestDuplicateArmRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "dup.csv", "0.5,0.5\n0.5,0.5\n0.1,0.9\n0.3,0.2\n0.7,0.8\n0.9,0.1\n0.2,0.6\n")
	s := filepath.Join(dir, "d.jsonl")
	if r := runBKB(t, nil, "optimize", "--study", s, "--arms-file", csv, "-T", "6", "-f", "branin", "-q"); r.code != 0 {
		t.Fatalf("optimize: exit %d: %s", r.code, r.stderr)
	}
	if r := runBKB(t, nil, "optimize", "--study", s, "--resume", "-T", "7", "-q"); r.code != 0 {
		t.Errorf("resume: exit %d: %s", r.code, r.stderr)
	}
	if r := runBKB(t, nil, "status", "--study", s); r.code != 0 {
		t.Errorf("status: exit %d: %s", r.code, r.stderr)
	}
}

// TestTellNeverAsked: a journal holding a tell for a trial that was never
// asked is refused by status, resume, ask and copy.
func TestTellNeverAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if r := runBKB(t, nil, "optimize", "--study", good, "-T", "10", "-f", "branin", "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	b, _ := os.ReadFile(good)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"kind":"tell","trial":9,`) {
		t.Fatalf("last line %s", last)
	}
	bad := writeFile(t, dir, "bad.jsonl", string(b)+strings.Replace(last, `"trial":9,`, `"trial":50,`, 1)+"\n")
	before, _ := os.ReadFile(bad)
	for _, args := range [][]string{
		{"status", "--study", bad},
		{"optimize", "--study", bad, "--resume", "-T", "12", "-q"},
		{"ask", "--study", bad},
		{"copy", "--from", bad, "--to", filepath.Join(dir, "copy.jsonl")},
	} {
		wantRun(t, runBKB(t, nil, args...), 2, "trial 50: tell record of a trial that was never asked")
	}
	if after, _ := os.ReadFile(bad); !bytes.Equal(before, after) {
		t.Error("the journal changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "copy.jsonl")); err == nil {
		t.Error("copy wrote a copy of a journal that does not replay")
	}
}

// TestSpaceFileInputs: space files that cannot make a working study are
// refused before a journal is created.
func TestSpaceFileInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct{ space, want string }{
		{`{"params":[{"name":"x","low":-1e308,"high":1e308},{"name":"y","low":0,"high":1}]}`, "must be within ±1e+150"},
		{`{"params":[{"name":"n","type":"int","low":1e19,"high":2e19},{"name":"y","low":0,"high":1}]}`, "within ±2^53"},
		{`{"params":[{"name":"c","type":"categorical","choices":["only"]},{"name":"y","low":0,"high":1}]}`, "at least two choices"},
		{`{"params":[{"name":"x","low":0,"high":1}],"params":[{"name":"y","low":0,"high":1}]}`, `key "params" given twice`},
		{`{"params":[{"name":"x","low":0,"high":1},{"name":"y","low":0,"high":1}],"lower":[5,5],"upper":[6,6]}`, "not both"},
		{`{"params":[{"name":"x\u001b]0;pwned\u0007","low":0,"high":1},{"name":"y","low":0,"high":1}]}`, "control character"},
		{`{"params":[{"name":"c","type":"categorical","choices":["a\tb","c"]},{"name":"y","low":0,"high":1}]}`, "control character"},
	} {
		sp := writeFile(t, dir, "space.json", c.space)
		s := filepath.Join(dir, "s.jsonl")
		r := runBKB(t, nil, "create-study", "--study", s, "--space", sp, "-T", "5")
		wantRun(t, r, 2, c.want)
		if strings.ContainsAny(r.stderr, "\x1b\x07\t") {
			t.Errorf("case %d: control characters on stderr: %q", i, r.stderr)
		}
		if _, err := os.Stat(s); err == nil {
			t.Fatalf("case %d: a refused space created a study", i)
		}
	}
	wantRun(t, runBKB(t, nil, "create-study", "--study", filepath.Join(dir, "z.jsonl"), "--space", "/dev/zero", "-T", "5"), 2, "larger than")
}

// TestAskTellInputs: ask --count has a cap; tell --value takes decimal
// numbers only.
func TestAskTellInputs(t *testing.T) {
	t.Parallel()
	s := filepath.Join(t.TempDir(), "a.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", s, "-f", "branin", "-T", "5"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	before, _ := os.ReadFile(s)
	wantRun(t, runBKB(t, nil, "ask", "--study", s, "-k", "100000000"), 2, "--count must be between 1 and 10000")
	for _, v := range []string{"0x1p3", "1_000", "1e", "--1"} {
		wantRun(t, runBKB(t, nil, "tell", "--study", s, "--trial", "0", "--value", v), 2, "want a decimal number")
	}
	if after, _ := os.ReadFile(s); !bytes.Equal(before, after) {
		t.Error("the journal changed")
	}
}

// TestCorruptJournalResume: a journal whose records name an arm that is
// not their point (an edited file) is the journal's fault: resume, worker
// and ask exit 2 with a message about the journal, never exit 1 with
// advice to fix the plugin.
func TestCorruptJournalResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "run.jsonl")
	if r := runBKB(t, nil, "optimize", "-f", "branin", "-T", "6", "--study", s, "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	b, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	// Trial 0's ask and tell both name the arm next to theirs.
	lines := strings.Split(string(b), "\n")
	var rec struct{ Arm int }
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	from, to := fmt.Sprintf(`"arm":%d,`, rec.Arm), fmt.Sprintf(`"arm":%d,`, rec.Arm+1)
	for i := 1; i <= 2; i++ {
		if !strings.Contains(lines[i], `"trial":0,`) || !strings.Contains(lines[i], from) {
			t.Fatalf("line %d is not trial 0's: %s", i+1, lines[i])
		}
		lines[i] = strings.Replace(lines[i], from, to, 1)
	}
	if err := os.WriteFile(s, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(s + ".snapshot")
	for _, args := range [][]string{
		{"optimize", "--study", s, "--resume", "-T", "8", "-q"},
		{"ask", "--study", s, "--budget", "8"},
		{"worker", "--study", s, "--", "true"},
	} {
		r := runBKB(t, nil, args...)
		wantRun(t, r, 2, "do not replay")
		if !strings.Contains(r.stderr, "journal") || strings.Contains(r.stderr, "plugin") {
			t.Errorf("bkb %s: %q, want a message about the journal, not the plugin", args[0], r.stderr)
		}
	}
	wantRun(t, runBKB(t, nil, "tell", "--study", s, "--trial", "5", "--value", "1", "--seconds", "1e308"), 2, "--seconds 1e+308: want a finite time >= 0 and at most 1e+07 seconds")
	wantRun(t, runBKB(t, nil, "tell", "--study", s, "--trial", "5", "--value", "1", "--seconds", "-1"), 2, "--seconds")
}
