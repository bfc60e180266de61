//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// killFleet is a run of bkb worker processes on one study, killed with
// SIGKILL at random moments and replaced, on a noisy objective (two
// evaluations of one point differ, so a trial told twice would show).
type killFleet struct {
	where   []string // --study FILE, or --storage URL --study NAME
	budget  int
	procs   int    // worker processes at a time
	inProc  int    // --workers of each
	kills   int    // SIGKILLs to send
	stale   string // --stale
	grace   time.Duration
	records func(t *testing.T) []storage.Record
	// outage, if not nil, runs once a third of the budget is told, while
	// the kills go on.
	outage func() error
}

// killFigures is what a killFleet run saw.
type killFigures struct {
	kills, started, evals, lostEvals, reasked, extras, tells, fails, late int
	outage                                                                bool
	elapsed                                                               time.Duration
}

func (f killFigures) String() string {
	return fmt.Sprintf("%d processes started, %d killed; %d evaluations (%d by killed workers); %d trials told, %d failed; %d re-asked after a kill, %d extra trials of late values, %d late-result lines; outage %v; %v",
		f.started, f.kills, f.evals, f.lostEvals, f.tells, f.fails, f.reasked, f.extras, f.late, f.outage, f.elapsed.Round(time.Millisecond))
}

// run runs the fleet and checks what issue-free workers must guarantee:
// every process that was not killed exits 0; exactly the budget of trials,
// each finished once, none pending; a trial asked again only after the
// worker that had it was killed; failed trials only of killed workers
// (--stale fail), none with --stale requeue.
func (k killFleet) run(t *testing.T) killFigures {
	t.Helper()
	dir := t.TempDir()
	evalLog := filepath.Join(dir, "evals.log")
	env := append(os.Environ(), "BKB_TEST_PLUGIN=noisy", "BKB_TEST_SLEEP=25ms", "BKB_TEST_EVALLOG="+evalLog)
	args := append([]string{"worker", "--progress", "none", "--stale", k.stale, "--workers", strconv.Itoa(k.inProc)}, k.where...)
	if k.grace > 0 {
		args = append(args, "--grace", k.grace.String())
	}
	type proc struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
		killed bool
	}
	var (
		mu     sync.Mutex
		live   = map[int]*proc{}
		killed = map[int]bool{}
		fig    killFigures
		fails  []string
		lateN  int
	)
	exited := make(chan *proc, 64)
	start := func() {
		p := &proc{cmd: exec.Command(bkbBin, args...)}
		p.cmd.Env = env
		p.cmd.Stderr = &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start worker: %v", err)
		}
		live[p.cmd.Process.Pid] = p
		fig.started++
		go func() { _ = p.cmd.Wait(); exited <- p }()
	}
	t0 := time.Now()
	mu.Lock()
	for range k.procs {
		start()
	}
	mu.Unlock()
	rng := rand.New(rand.NewPCG(uint64(k.budget), uint64(k.kills)))
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { // the killer
		for fig.kills < k.kills {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(30+rng.IntN(90)) * time.Millisecond):
			}
			mu.Lock()
			var cands []*proc
			for _, p := range live {
				if !p.killed {
					cands = append(cands, p)
				}
			}
			if len(cands) > 0 {
				p := cands[rng.IntN(len(cands))]
				p.killed = true
				killed[p.cmd.Process.Pid] = true
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				fig.kills++
				start() // a replacement: the budget is not reached while a worker was alive to be killed
			}
			mu.Unlock()
		}
	})
	if k.outage != nil {
		bg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				st, err := storage.Summarize(k.records(t))
				if err == nil && st.Tells >= k.budget/3 {
					if err := k.outage(); err != nil {
						mu.Lock()
						fails = append(fails, "outage: "+err.Error())
						mu.Unlock()
					}
					mu.Lock()
					fig.outage = true
					mu.Unlock()
					return
				}
			}
		})
	}
	deadline := time.After(4 * time.Minute)
	for {
		mu.Lock()
		n := len(live)
		mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case p := <-exited:
			mu.Lock()
			delete(live, p.cmd.Process.Pid)
			if !p.killed && p.cmd.ProcessState.ExitCode() != 0 {
				fails = append(fails, fmt.Sprintf("worker %d: %v: %s", p.cmd.Process.Pid, p.cmd.ProcessState, p.stderr.String()))
			}
			if !p.killed {
				lateN += strings.Count(p.stderr.String(), "is kept as trial") + strings.Count(p.stderr.String(), "is dropped")
			}
			mu.Unlock()
		case <-deadline:
			mu.Lock()
			for _, p := range live {
				_ = p.cmd.Process.Kill()
			}
			mu.Unlock()
			t.Fatalf("workers still running after 4 minutes")
		}
	}
	close(stop)
	bg.Wait()
	fig.elapsed = time.Since(t0)
	fig.late = lateN
	for _, f := range fails {
		t.Error(f)
	}

	recs := k.records(t)
	st, err := storage.Summarize(recs)
	if err != nil {
		t.Fatalf("the records do not replay: %v", err)
	}
	fig.tells, fig.fails = st.Tells, st.Fails
	if st.NextTrial != k.budget || st.Tells+st.Fails != k.budget || len(st.Pending) != 0 || len(st.Waiting) != 0 {
		t.Errorf("%d trials, %d told, %d failed, %d pending, %d waiting; want exactly the budget %d finished, none pending",
			st.NextTrial, st.Tells, st.Fails, len(st.Pending), len(st.Waiting), k.budget)
	}
	pid := func(worker string) int { _, p, _ := storage.ParseWorkerID(worker); return p }
	owner := map[int]string{}
	finished := map[int]int{}
	enqueued := map[int]bool{}
	for _, r := range recs {
		switch r.Kind {
		case storage.KindEnqueue:
			enqueued[r.Trial] = true
		case storage.KindAsk:
			if prev, ok := owner[r.Trial]; ok {
				if !killed[pid(prev)] {
					t.Errorf("trial %d asked again by %s while its worker %s was alive", r.Trial, r.Worker, prev)
				}
				fig.reasked++
			} else if enqueued[r.Trial] {
				fig.extras++
			}
			owner[r.Trial] = r.Worker
		case storage.KindTell, storage.KindFail:
			finished[r.Trial]++
			if r.Kind == storage.KindFail && (k.stale == "requeue" || !killed[pid(owner[r.Trial])]) {
				t.Errorf("trial %d of worker %s failed: %s", r.Trial, owner[r.Trial], r.Error)
			}
		}
	}
	for trial, n := range finished {
		if n != 1 {
			t.Errorf("trial %d finished %d times", trial, n)
		}
	}
	if k.outage == nil && fig.extras > 0 {
		t.Errorf("%d extra trials: a worker's value arrived late though no worker lost its heartbeats", fig.extras)
	}
	// Evaluations, from the plugins' log: one line per evaluation, naming
	// the bkb process.
	if f, err := os.Open(evalLog); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p, err := strconv.Atoi(sc.Text())
			if err != nil {
				continue // a line cut by a kill
			}
			fig.evals++
			if killed[p] {
				fig.lostEvals++
			}
		}
		f.Close()
	}
	// Every evaluation by a worker that was not killed is a stored trial.
	if kept := fig.evals - fig.lostEvals; kept > st.Tells {
		t.Errorf("%d evaluations by workers that were not killed, %d trials told: a result was lost", kept, st.Tells)
	}
	if fig.kills < k.kills {
		t.Errorf("%d kills, want %d (the study ended first)", fig.kills, k.kills)
	}
	return fig
}

// killSize is the budget and number of kills of a kill test: several kills
// in -short (CI), 20+ otherwise.
func killSize() (budget, kills int) {
	if testing.Short() {
		return 50, 6
	}
	return 160, 22
}

// TestKillWorkersJournal: 4 bkb worker processes (2 evaluations in flight
// each) on one journal study, killed with SIGKILL at random moments and
// replaced, on a noisy objective, with --stale fail and --stale requeue:
// exactly the budget, no trial evaluated twice unless the worker that had
// it was killed, nothing pending, every surviving worker exits 0.
func TestKillWorkersJournal(t *testing.T) {
	t.Parallel()
	budget, kills := killSize()
	for _, stale := range []string{"fail", "requeue"} {
		t.Run(stale, func(t *testing.T) {
			t.Parallel()
			s := filepath.Join(t.TempDir(), "killed.jsonl")
			if r := runBKB(t, nil, "create-study", "--study", s, "--lower", "-5,0", "--upper", "10,15", "-n", "256", "-T", strconv.Itoa(budget), "--", testExe(t)); r.code != 0 {
				t.Fatalf("create-study: %s", r.stderr)
			}
			fig := killFleet{where: []string{"--study", s}, budget: budget, procs: 4, inProc: 2, kills: kills, stale: stale,
				records: func(t *testing.T) []storage.Record { return readJournal(t, s) }}.run(t)
			t.Logf("journal, --stale %s, budget %d: %v", stale, budget, fig)
		})
	}
}

// pgKillStudy creates a study for a kill test in PostgreSQL and returns
// its flags and a reader of its records.
func pgKillStudy(t *testing.T, url, name string, budget int) ([]string, func(*testing.T) []storage.Record) {
	t.Helper()
	if r := runBKB(t, nil, "create-study", "--storage", url, "--study", name, "--lower", "-5,0", "--upper", "10,15", "-n", "256", "-T", strconv.Itoa(budget), "--", testExe(t)); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	st, err := postgres.Open(context.Background(), url, postgres.Options{RetryTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = st.Pool().Exec(context.Background(), "DELETE FROM bkb_studies WHERE name = $1", name)
		st.Close()
	})
	return []string{"--storage", url, "--study", name}, func(t *testing.T) []storage.Record {
		recs, err := st.Records(context.Background(), name, 0)
		if err != nil {
			t.Fatalf("records: %v", err)
		}
		return recs
	}
}

// TestKillWorkersPostgres: TestKillWorkersJournal against PostgreSQL,
// where a killed worker's trial is found by its missing heartbeats
// (--grace 2s).
func TestKillWorkersPostgres(t *testing.T) {
	url := os.Getenv("BKB_POSTGRES_URL")
	if url == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one)")
	}
	t.Parallel()
	budget, kills := killSize()
	for _, stale := range []string{"fail", "requeue"} {
		t.Run(stale, func(t *testing.T) {
			t.Parallel()
			where, recs := pgKillStudy(t, url, fmt.Sprintf("f19kill-%s-%d", stale, time.Now().UnixNano()), budget)
			fig := killFleet{where: where, budget: budget, procs: 4, inProc: 2, kills: kills, stale: stale, grace: 2 * time.Second, records: recs}.run(t)
			t.Logf("PostgreSQL, --stale %s, budget %d, --grace 2s: %v", stale, budget, fig)
		})
	}
}

// TestKillWorkersPostgresOutage: the PostgreSQL kill test with the server
// stopped for 12 s in the middle of the run (twice the --grace of 6 s):
// the workers wait for it, no live worker's trial is taken for stopped,
// nothing is lost and no worker exits non-zero. It stops and starts the
// server with BKB_POSTGRES_RESTART_CMD, its last word replaced by stop and
// start (pg_ctlcluster VERSION CLUSTER restart, as .ci/run sets it).
func TestKillWorkersPostgresOutage(t *testing.T) {
	url := os.Getenv("BKB_POSTGRES_URL")
	restart := os.Getenv("BKB_POSTGRES_RESTART_CMD")
	switch {
	case url == "":
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one)")
	case restart == "" || !strings.HasSuffix(restart, " restart"):
		t.Skip("BKB_POSTGRES_RESTART_CMD is not set (or does not end in restart): not allowed to stop the server")
	case testing.Short():
		t.Skip("stops the server for 12 s: run without -short")
	}
	budget, kills := killSize()
	base := strings.TrimSuffix(restart, "restart")
	for _, stale := range []string{"fail", "requeue"} {
		t.Run(stale, func(t *testing.T) {
			where, recs := pgKillStudy(t, url, fmt.Sprintf("f19outage-%s-%d", stale, time.Now().UnixNano()), budget)
			outage := func() error {
				if out, err := exec.Command("sh", "-c", base+"stop").CombinedOutput(); err != nil {
					return fmt.Errorf("%sstop: %v: %s", base, err, out)
				}
				<-time.After(12 * time.Second) // the outage itself
				if out, err := exec.Command("sh", "-c", base+"start").CombinedOutput(); err != nil {
					return fmt.Errorf("%sstart: %v: %s", base, err, out)
				}
				return nil
			}
			fig := killFleet{where: where, budget: budget, procs: 6, inProc: 1, kills: kills, stale: stale, grace: 6 * time.Second, records: recs, outage: outage}.run(t)
			if !fig.outage {
				t.Error("the server was not stopped during the run")
			}
			t.Logf("PostgreSQL, --stale %s, budget %d, --grace 6s, 12 s outage: %v", stale, budget, fig)
		})
	}
}

// TestKillResumeWorkers: optimize --workers 4 on a noisy objective, killed
// with SIGKILL, then resumed with --workers 4: each trial the killed run
// left pending is asked again once (not by every worker of the resumed
// run), the resumed run exits 0, and the study has exactly its budget.
func TestKillResumeWorkers(t *testing.T) {
	t.Parallel()
	const budget = 40
	path := filepath.Join(t.TempDir(), "nw.jsonl")
	env := append(os.Environ(), "BKB_TEST_PLUGIN=noisy", "BKB_TEST_SLEEP=40ms")
	cmd := exec.Command(bkbBin, append(pluginArgs(t, path, budget), "--workers", "4")...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte(`"kind":"tell"`)) >= 10 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no evaluations after 60 s: %s", stderr.String())
		}
		<-time.After(5 * time.Millisecond) // polling the journal
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	killed := cmd.Process.Pid
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=noisy", "BKB_TEST_SLEEP=40ms"}, "optimize", "--study", path, "--resume", "--workers", "4", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	recs := readJournal(t, path)
	st, err := storage.Summarize(recs)
	if err != nil || st.NextTrial != budget || st.Tells != budget || len(st.Pending) != 0 {
		t.Fatalf("after the resume: %d trials, %d told, %d pending (%v); want %d told", st.NextTrial, st.Tells, len(st.Pending), err, budget)
	}
	asks := map[int][]string{}
	for _, rec := range recs {
		if rec.Kind == storage.KindAsk {
			asks[rec.Trial] = append(asks[rec.Trial], rec.Worker)
		}
	}
	reasked := 0
	for trial, ws := range asks {
		if len(ws) > 2 {
			t.Errorf("trial %d asked %d times", trial, len(ws))
		}
		if len(ws) == 2 {
			reasked++
			if _, pid, _ := storage.ParseWorkerID(ws[0]); pid != killed {
				t.Errorf("trial %d asked again, though its first worker %s was not the killed run", trial, ws[0])
			}
		}
	}
	if reasked == 0 {
		t.Error("no trial was left pending by the killed run (the kill came too late)")
	}
	t.Logf("%d trials left pending by the kill, each asked again once", reasked)
}
