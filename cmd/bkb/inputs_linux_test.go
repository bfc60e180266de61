//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// peakRSSFile, when set in the environment, turns the test binary into a
// spawner (see init): it runs its arguments as a command, writes the
// command's peak resident set in kB to that file and exits with its code.
const peakRSSFile = "BKB_TEST_PEAK_RSS_FILE"

// init is the spawner of peakRSS. A child started by os/exec shares its
// parent's memory until it executes (vfork), and Linux counts the
// parent's high-water resident set in the child's (exec records the old
// memory map's peak): measured from the test process, whose in-process
// runs of bkb grow it, a small command reads as 100+ MB. From this small
// process the command's own peak is what wait4 reports.
func init() {
	path := os.Getenv(peakRSSFile)
	if path == "" || len(os.Args) < 2 {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, peakRSSFile+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = 125
	}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			_ = os.WriteFile(path, []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644)
		}
	}
	os.Exit(code)
}

// TestHugeInputs: a space file of 100,000 nested '[' (200 KB) and an arms
// CSV of 2,000,000 columns (4 MB) are refused with exit 2 at once: the
// nesting cap and the column cap stop the reading early. The peak memory
// of the process (its maximum resident set, through the spawner above) is
// measured, not wall time: under 50 MB above that of the same binary
// refusing a one-line bad command (bkb is the test binary here, whose own
// size is not the input's doing).
func TestHugeInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	peak := func(args ...string) (code int, stderr string, kB int64) {
		out := filepath.Join(t.TempDir(), "rss")
		cmd := exec.Command(os.Args[0], append([]string{bkbBin}, args...)...)
		cmd.Env = append(os.Environ(), peakRSSFile+"="+out)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		b, rerr := os.ReadFile(out)
		if rerr != nil {
			t.Fatalf("bkb %v: no peak memory measured: %v (%s)", args, rerr, errb.String())
		}
		kB, _ = strconv.ParseInt(string(b), 10, 64)
		return code, errb.String(), kB
	}
	_, _, baseKB := peak("optimize", "--no-such-flag")
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
		code, stderr, kB := peak(c.args...)
		wantRun(t, runResult{code: code, stderr: stderr}, 2, c.want)
		if kB-baseKB > 50<<10 { // kB on Linux
			t.Errorf("bkb %v: peak resident set %d MB, %d MB above a refused flag's, want under 50", c.args[:1], kB>>10, (kB-baseKB)>>10)
		}
	}
}
