//go:build e2e

package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// trialPoints returns, per trial number, the point of the trial's ask in
// the journal at path, and checks that every trial is completed exactly
// once and asked again only at its own point.
func trialPoints(t *testing.T, path string, budget int) [][]float64 {
	t.Helper()
	pts := make([][]float64, budget)
	done := make([]int, budget)
	for _, r := range readJournal(t, path) {
		if r.Trial < 0 || r.Trial >= budget {
			t.Fatalf("trial %d outside the budget %d", r.Trial, budget)
		}
		switch r.Kind {
		case storage.KindAsk:
			if pts[r.Trial] != nil && !samePoint(pts[r.Trial], r.X) {
				t.Fatalf("trial %d asked at two points", r.Trial)
			}
			pts[r.Trial] = r.X
		case storage.KindTell, storage.KindFail:
			done[r.Trial]++
		}
	}
	for i, n := range done {
		if n != 1 {
			t.Fatalf("trial %d completed %d times", i, n)
		}
	}
	return pts
}

func samePoint(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestKillDuringSnapshot kills `bkb optimize` with SIGKILL in the middle of
// writing its engine snapshot (the first, second, third or fourth file of
// a save, a chunk or the list, written to its temporary file and not yet
// renamed: the process stops there, stopSnapshotEnv, and says so), again
// and again, resuming each time:
// every resume starts from a snapshot that is whole (or replays), and the
// finished study asks exactly the points of an uninterrupted run.
func TestKillDuringSnapshot(t *testing.T) {
	budget, kills := 240, 6
	if testing.Short() {
		budget, kills = 160, 3
	}
	dir := t.TempDir()
	args := func(path string, resume bool) []string {
		if resume {
			return []string{"optimize", "--study", path, "--resume", "--json", "--progress", "none"}
		}
		return []string{"optimize", "-f", "hartmann6", "-T", strconv.Itoa(budget), "--study", path, "--json", "--progress", "none"}
	}
	ref := filepath.Join(dir, "ref.jsonl")
	if r := runBKB(t, nil, args(ref, false)...); r.code != 0 {
		t.Fatalf("reference run: exit %d\n%s", r.code, r.stderr)
	}
	want := trialPoints(t, ref, budget)

	path := filepath.Join(dir, "killed.jsonl")
	stopped := filepath.Join(dir, ".killed.jsonl.snapshot.tmp-*.stopped")
	killed := 0
	for run := 0; killed < kills && run < 2*kills; run++ {
		cmd := exec.Command(bkbBin, args(path, run > 0)...)
		// Each run stops at another write: the first, second or third
		// chunk of its first save, or its list.
		cmd.Env = append(os.Environ(), stopSnapshotEnv+"="+strconv.Itoa(1+run%4))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		deadline := time.Now().Add(60 * time.Second)
		hit := false
	poll:
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				break poll
			default:
			}
			if m, _ := filepath.Glob(stopped); len(m) > 0 {
				// The process waits at the write: no race with it.
				cmd.Process.Signal(syscall.SIGKILL)
				for _, f := range m {
					os.Remove(f)
				}
				hit = true
				break
			}
			time.Sleep(time.Millisecond)
		}
		if !hit {
			cmd.Process.Signal(syscall.SIGKILL) // at the deadline
		}
		<-exited
		if hit {
			killed++
		}
		if strings.Contains(stderr.String(), "panic") {
			t.Fatalf("run %d panicked:\n%s", run, stderr.String())
		}
		if !hit && cmd.ProcessState.ExitCode() == 0 {
			break // finished without writing a snapshot
		}
	}
	// Leftover temporary files of killed writes are removed by the next
	// save; finish the study.
	r := runBKB(t, nil, args(path, true)...)
	if r.code != 0 {
		t.Fatalf("final resume: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "snapshot not used") {
		t.Errorf("a snapshot was not used after %d kills during writes:\n%s", killed, r.stderr)
	}
	got := trialPoints(t, path, budget)
	for i := range want {
		if !samePoint(got[i], want[i]) {
			t.Fatalf("trial %d: %v after %d kills during snapshot writes, %v uninterrupted", i, got[i], killed, want[i])
		}
	}
	if killed == 0 {
		t.Fatalf("no kill landed during a snapshot write")
	}
	if _, err := os.Stat(storage.SnapshotPath(path)); err != nil {
		t.Errorf("no snapshot beside the journal: %v", err)
	}
	t.Logf("%d kills during snapshot writes", killed)
}
