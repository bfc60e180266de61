package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBKBWithin runs bkb like runBKB, killing it after d: a hang is a
// failure, not a stuck test.
func runBKBWithin(t *testing.T, d time.Duration, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bkbBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bkb %v did not return within %v", args, d)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running bkb %v: %v", args, err)
	}
	return runResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestOutputSpecialFiles: an output path naming a device or a FIFO is
// refused at once (it was read without limit, or blocked).
func TestOutputSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := filepath.Join(dir, "s.jsonl")
	if r := runBKB(t, nil, "optimize", "--study", s, "-T", "5", "-f", "branin", "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	for _, args := range [][]string{
		{"optimize", "-T", "5", "-f", "branin", "-q", "--trace", "/dev/zero", "--overwrite"},
		{"optimize", "-T", "5", "-f", "branin", "-q", "--trace", "/dev/zero"},
		{"export", "--study", s, "--out", "/dev/full", "--overwrite"},
		{"status", "--study", s, "--trace", fifo, "--overwrite"},
		{"status", "--study", s, "--plot", fifo},
	} {
		wantRun(t, runBKBWithin(t, time.Minute, args...), 2, "not a regular file")
	}
}

// TestOutputSymlinks: an output path that is a symbolic link (to a file, or
// dangling) is refused, with or without --overwrite: the link's target is
// neither replaced nor created.
func TestOutputSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := writeFile(t, dir, "precious.txt", "mine\n")
	link := filepath.Join(dir, "link.csv")
	dangling := filepath.Join(dir, "dangling.md")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "created.md"), dangling); err != nil {
		t.Fatal(err)
	}
	bench := []string{"bench", "--objectives", "branin", "--policies", "random", "--seeds", "1", "--arms", "50", "-T", "5", "--progress", "none"}
	for _, args := range [][]string{
		append(bench, "--csv", link, "--overwrite"),
		append(bench, "--markdown", dangling),
		append(bench, "--markdown", dangling, "--overwrite"),
		{"optimize", "-T", "5", "-f", "branin", "-q", "--trace", link, "--overwrite"},
	} {
		wantRun(t, runBKB(t, nil, args...), 2, "symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "mine\n" {
		t.Errorf("the link's target was replaced: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "created.md")); err == nil {
		t.Error("a dangling link's target was created")
	}
}

// TestOutputAppearsDuringRun: a file (or link) that appears at an output
// path after the check and before the write is not replaced without
// --overwrite; with it, a file is.
func TestOutputAppearsDuringRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := checkOutput("--csv", p, false, ""); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "out.csv", "appeared\n")
	if err := writeFileAtomic(p, []byte("bkb\n")); err == nil || !strings.Contains(err.Error(), "not replaced") {
		t.Errorf("write over a file that appeared: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "appeared\n" {
		t.Errorf("the file that appeared was replaced: %q", b)
	}
	q := filepath.Join(dir, "ok.csv")
	if err := checkOutput("--csv", q, true, ""); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "ok.csv", "old\n")
	if err := writeFileAtomic(q, []byte("new\n")); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	if b, _ := os.ReadFile(q); string(b) != "new\n" {
		t.Errorf("with --overwrite: %q", b)
	}
	target := writeFile(t, dir, "target.txt", "mine\n")
	l := filepath.Join(dir, "late-link.csv")
	if err := checkOutput("--csv", l, true, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, l); err != nil {
		t.Skip(err)
	}
	if err := writeFileAtomic(l, []byte("x\n")); err == nil {
		t.Error("a link that appeared was replaced")
	}
	if b, _ := os.ReadFile(target); string(b) != "mine\n" {
		t.Errorf("a link's target was written: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files left in the directory (temporary files?)", len(entries))
	}
}

// TestFileModesUmask: journals and outputs get mode 0666 less the umask.
func TestFileModesUmask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		umask string
		want  fs.FileMode
	}{{"077", 0o600}, {"022", 0o644}, {"002", 0o664}} {
		dir := t.TempDir()
		s, trace, plot, out := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "t.csv"), filepath.Join(dir, "p.png"), filepath.Join(dir, "e.csv")
		script := "umask " + c.umask + " && \"$0\" optimize --study \"$1\" -T 6 -f branin -q --trace \"$2\" --plot \"$3\" && \"$0\" export --study \"$1\" --out \"$4\""
		if out, err := exec.Command("sh", "-c", script, bkbBin, s, trace, plot, out).CombinedOutput(); err != nil {
			t.Fatalf("umask %s: %v: %s", c.umask, err, out)
		}
		for _, p := range []string{s, trace, plot, out} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != c.want {
				t.Errorf("umask %s: %s has mode %o, want %o", c.umask, filepath.Base(p), got, c.want)
			}
		}
	}
}
