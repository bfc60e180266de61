//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// startWorker starts `bkb worker` in the background.
func startWorker(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bkbBin, append([]string{"worker", "--progress", "none"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errb
}

// checkShared asserts what a study shared by workers must hold: exactly
// budget trials, each finished once (complete, or failed only when
// failedOK), no trial number twice, and no point asked while another trial
// at the same point was pending (two workers evaluating it by accident).
func checkShared(t *testing.T, recs []storage.Record, budget int, failedOK bool) (complete, failed int) {
	t.Helper()
	finished := map[int]int{}
	pendingAt := map[string]int{} // point -> pending trial
	askedAt := map[int]string{}
	for _, r := range recs {
		key := fmt.Sprint(r.X)
		switch r.Kind {
		case storage.KindAsk:
			if prev, ok := askedAt[r.Trial]; ok {
				if prev != key {
					t.Errorf("trial %d asked at two points", r.Trial)
				}
				continue // re-asked after its worker stopped
			}
			if other, ok := pendingAt[key]; ok {
				t.Errorf("trial %d asked at %v while trial %d was pending there", r.Trial, r.X, other)
			}
			askedAt[r.Trial], pendingAt[key] = key, r.Trial
		case storage.KindTell, storage.KindFail:
			finished[r.Trial]++
			delete(pendingAt, askedAt[r.Trial])
			if r.Kind == storage.KindTell {
				complete++
			} else {
				failed++
				if !failedOK {
					t.Errorf("trial %d failed: %s", r.Trial, r.Error)
				}
			}
		}
	}
	if len(askedAt) != budget || len(finished) != budget {
		t.Errorf("%d trials asked and %d finished, want %d", len(askedAt), len(finished), budget)
	}
	for trial, n := range finished {
		if n != 1 || trial < 0 || trial >= budget {
			t.Errorf("trial %d finished %d times", trial, n)
		}
	}
	return complete, failed
}

// fleet runs n bkb worker processes on one study and waits for them.
func fleet(t *testing.T, n int, env []string, args ...string) {
	t.Helper()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cmd, errb := startWorker(t, env, args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				t.Errorf("worker: %v\n%s", err, errb)
			}
			if strings.Contains(errb.String(), "deadlock") || strings.Contains(errb.String(), "locked") {
				t.Errorf("worker stderr: %s", errb)
			}
		}()
	}
	wg.Wait()
}

// TestWorkersJournal: 8 worker processes x 50 trials on one journal
// study: exactly the budget, every trial once, no point evaluated twice
// at once, no error reaching a worker.
func TestWorkersJournal(t *testing.T) {
	t.Parallel()
	s := filepath.Join(t.TempDir(), "shared.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", s, "--lower", "-5,0", "--upper", "10,15", "-n", "256", "-T", "400", "--", testExe(t)); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	start := time.Now()
	fleet(t, 8, []string{"BKB_TEST_PLUGIN=branin"}, "--study", s)
	complete, _ := checkShared(t, readJournal(t, s), 400, false)
	t.Logf("8 journal workers: %d trials in %v", complete, time.Since(start).Round(time.Millisecond))
	if r := runBKB(t, nil, "status", "--study", s, "--json"); r.code != 0 || decodeResult(t, r.stdout).Complete != 400 {
		t.Errorf("status: %s", r.stderr)
	}
}

// TestWorkersPostgres: the same against a real PostgreSQL server, then a
// copy of the study to a journal and back.
func TestWorkersPostgres(t *testing.T) {
	url := os.Getenv("BKB_POSTGRES_URL")
	if url == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one)")
	}
	t.Parallel()
	name := fmt.Sprintf("workers-%d", time.Now().UnixNano())
	if r := runBKB(t, nil, "create-study", "--storage", url, "--study", name, "--lower", "-5,0", "--upper", "10,15", "-n", "256", "-T", "400", "--", testExe(t)); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	start := time.Now()
	fleet(t, 8, []string{"BKB_TEST_PLUGIN=branin"}, "--storage", url, "--study", name)
	elapsed := time.Since(start)
	dir := t.TempDir()
	j := filepath.Join(dir, "copy.jsonl")
	if r := runBKB(t, nil, "copy", "--from", url, "--study", name, "--to", j); r.code != 0 {
		t.Fatalf("copy to journal: %s", r.stderr)
	}
	complete, _ := checkShared(t, readJournal(t, j), 400, false)
	t.Logf("8 PostgreSQL workers: %d trials in %v", complete, elapsed.Round(time.Millisecond))
	back := name + "-back"
	if r := runBKB(t, nil, "copy", "--from", j, "--to", url, "--study", back); r.code != 0 {
		t.Fatalf("copy back: %s", r.stderr)
	}
	a := runBKB(t, nil, "status", "--storage", url, "--study", name, "--json", "--top", "3")
	b := runBKB(t, nil, "status", "--storage", url, "--study", back, "--json", "--top", "3")
	ra, rb := decodeResult(t, a.stdout), decodeResult(t, b.stdout)
	if a.code != 0 || b.code != 0 || ra.Complete != 400 || ra.Best.Value != rb.Best.Value || ra.Best.Trial != rb.Best.Trial {
		t.Errorf("status of the study and of its round-trip copy differ: %s %s %s %s", a.stdout, a.stderr, b.stdout, b.stderr)
	}
	out := filepath.Join(dir, "trials.csv")
	if r := runBKB(t, nil, "export", "--storage", url, "--study", name, "--out", out); r.code != 0 {
		t.Errorf("export: %s", r.stderr)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") != 401 {
		t.Errorf("export: %d lines", strings.Count(string(b), "\n"))
	}
}

// TestWorkersKilled: workers on one journal study are killed with SIGKILL
// at random moments (20 kills) and replaced; every completed evaluation is
// stored exactly once, every trial of a killed worker ends failed (it is
// stale as soon as its process is gone) and the study reaches its budget.
func TestWorkersKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 20 workers: about 10 s")
	}
	t.Parallel()
	s := filepath.Join(t.TempDir(), "killed.jsonl")
	const budget = 120
	if r := runBKB(t, nil, "create-study", "--study", s, "--lower", "-5,0", "--upper", "10,15", "-n", "256", "-T", fmt.Sprint(budget), "--", testExe(t)); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	env := []string{"BKB_TEST_PLUGIN=slow", "BKB_TEST_SLEEP=30ms"}
	rng := rand.New(rand.NewPCG(1, 2))
	var live []*exec.Cmd
	var waits sync.WaitGroup
	spawn := func() {
		cmd, _ := startWorker(t, env, "--study", s)
		live = append(live, cmd)
		waits.Add(1)
		go func() { defer waits.Done(); _ = cmd.Wait() }()
	}
	for i := 0; i < 4; i++ {
		spawn()
	}
	kills := 0
	for kills < 20 {
		time.Sleep(time.Duration(40+rng.IntN(120)) * time.Millisecond)
		k := rng.IntN(len(live))
		if live[k].ProcessState == nil {
			_ = live[k].Process.Signal(syscall.SIGKILL)
			kills++
		}
		live = append(live[:k], live[k+1:]...)
		spawn()
	}
	// The last workers finish the budget.
	waits.Wait()
	r := runBKB(t, env, "worker", "--study", s, "--progress", "none")
	if r.code != 0 {
		t.Fatalf("last worker: %s", r.stderr)
	}
	complete, failed := checkShared(t, readJournal(t, s), budget, true)
	for _, rec := range readJournal(t, s) {
		if rec.Kind == storage.KindFail && !strings.Contains(rec.Error, "worker evaluating this trial stopped") {
			t.Errorf("trial %d failed for another reason: %s", rec.Trial, rec.Error)
		}
	}
	t.Logf("%d kills: %d trials complete, %d failed (their workers were killed)", kills, complete, failed)
}
