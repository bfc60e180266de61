//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHugeInputs: a space file of 100,000 nested '[' (200 KB) and an arms
// CSV of 2,000,000 columns (4 MB) are refused with exit 2 at once: the
// nesting cap and the column cap stop the reading early. The peak memory
// of the process (its maximum resident set) is measured, not wall time:
// under 50 MB above that of the same binary refusing a one-line bad
// command (bkb is the test binary here, whose own size is not the input's
// doing).
func TestHugeInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := exec.Command(bkbBin, "optimize", "--no-such-flag")
	_ = base.Run()
	var baseKB int64
	if ru, ok := base.ProcessState.SysUsage().(*syscall.Rusage); ok {
		baseKB = ru.Maxrss
	}
	deep := writeFile(t, dir, "deep.json", strings.Repeat("[", 100_000))
	wide := writeFile(t, dir, "wide.csv", strings.Repeat("0,", 2_000_000)+"0\n")
	wideHeader := writeFile(t, dir, "wideh.csv", strings.Repeat("a,", 2_000_000)+"a\n1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create-study", "--study", filepath.Join(dir, "a.jsonl"), "--space", deep, "-T", "5"}, "nested deeper than 64 levels"},
		{[]string{"optimize", "--space", deep, "-T", "5", "--", "true"}, "nested deeper than 64 levels"},
		{[]string{"optimize", "--arms-file", wide, "-T", "5", "--", "true"}, "longer than"},
		{[]string{"optimize", "--arms-file", wideHeader, "-T", "5", "--", "true"}, "longer than"},
	} {
		cmd := exec.Command(bkbBin, c.args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		wantRun(t, runResult{code: code, stderr: errb.String()}, 2, c.want)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss-baseKB > 50<<10 { // kB on Linux
			t.Errorf("bkb %v: peak resident set %d MB, %d MB above a refused flag's, want under 50", c.args[:1], ru.Maxrss>>10, (ru.Maxrss-baseKB)>>10)
		}
	}
}
