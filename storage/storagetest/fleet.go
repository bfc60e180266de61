package storagetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// Environment of a worker process (see WorkerMain).
const (
	envWorker   = "BKB_STORAGETEST_WORKER" // "1" in a worker process
	envStudy    = "BKB_STORAGETEST_STUDY"
	envBudget   = "BKB_STORAGETEST_BUDGET"
	envLog      = "BKB_STORAGETEST_LOG"
	envBeat     = "BKB_STORAGETEST_BEAT"     // heartbeat interval, "0" for none
	envEvalMax  = "BKB_STORAGETEST_EVAL_MAX" // longest fake evaluation
	envStaleErr = "worker stopped"
)

// WorkerMain is called first thing in TestMain. In a worker process
// started by RunFleet, it runs the worker loop on the storage open returns
// and exits (status 0 when the study reached its budget, 1 on any error);
// in the test process it returns at once.
func WorkerMain(open func() (storage.Storage, error)) {
	if os.Getenv(envWorker) != "1" {
		return
	}
	if err := worker(open); err != nil {
		fmt.Fprintf(os.Stderr, "worker %d: %v\n", os.Getpid(), err)
		os.Exit(1)
	}
	os.Exit(0)
}

// worker is one worker process: ask a new trial (number: one more than the
// largest so far) inside Update while tells plus running trials are below
// the budget, failing the stale trials it is shown; evaluate it (a sleep)
// while heartbeating; tell; log the tell once it is stored.
func worker(open func() (storage.Storage, error)) error {
	name := os.Getenv(envStudy)
	budget, err := strconv.Atoi(os.Getenv(envBudget))
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	beat, err := time.ParseDuration(os.Getenv(envBeat))
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	evalMax, err := time.ParseDuration(os.Getenv(envEvalMax))
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	logf, err := os.OpenFile(os.Getenv(envLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	id := storage.NewWorkerID()
	var seen []storage.Record
	for {
		var (
			mine storage.Record
			done bool
			all  []storage.Record
		)
		_, err := s.Update(ctx, name, len(seen), func(v storage.View) ([]storage.Record, error) {
			mine, done = storage.Record{}, false
			all = append(seen[:len(seen):len(seen)], v.New...)
			st, err := storage.Summarize(all)
			if err != nil {
				return nil, err
			}
			var out []storage.Record
			for _, trial := range v.Stale {
				for _, p := range st.Pending {
					if p.Trial == trial {
						out = append(out, storage.Record{Kind: storage.KindFail, Trial: trial, Arm: p.Arm, X: p.X, Worker: p.Worker, Error: envStaleErr})
					}
				}
			}
			running := len(st.Pending) - len(out)
			if st.Tells+running >= budget {
				done = st.Tells >= budget
				return out, nil
			}
			mine = storage.Record{Kind: storage.KindAsk, Trial: st.NextTrial, Arm: -1, X: []float64{float64(st.NextTrial)}, Worker: id}
			return append(out, mine), nil
		})
		if err != nil {
			return fmt.Errorf("ask: %w", err)
		}
		seen = all
		if done {
			return nil
		}
		if mine.Kind == "" {
			time.Sleep(5 * time.Millisecond) // others are evaluating the rest
			continue
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		if beat > 0 {
			wg.Go(func() {
				tk := time.NewTicker(beat)
				defer tk.Stop()
				for {
					_ = s.Heartbeat(ctx, name, []int{mine.Trial}) // a lapse shows as a stale trial
					select {
					case <-stop:
						return
					case <-tk.C:
					}
				}
			})
		}
		time.Sleep(time.Duration(rand.Int64N(int64(evalMax) + 1)))
		close(stop)
		wg.Wait()
		val := math.Sin(mine.X[0])
		tl := storage.Record{Kind: storage.KindTell, Trial: mine.Trial, Arm: -1, X: mine.X, Y: &val, Worker: id}
		if _, err := s.Update(ctx, name, len(seen), func(v storage.View) ([]storage.Record, error) {
			all = append(seen[:len(seen):len(seen)], v.New...)
			return []storage.Record{tl}, nil
		}); err != nil {
			return fmt.Errorf("tell: %w", err)
		}
		seen = all
		if _, err := fmt.Fprintf(logf, "%d %d %v\n", os.Getpid(), mine.Trial, val); err != nil {
			return err
		}
	}
}

// Fleet configures RunFleet.
type Fleet struct {
	Workers int           // processes at a time
	Budget  int           // successful trials
	Beat    time.Duration // heartbeat interval, 0 for none
	EvalMax time.Duration // longest fake evaluation
	Env     []string      // more environment for the workers
	// Kills is how many workers to kill -9, at random moments, each
	// replaced by a new one.
	Kills int
	// Restart, if not nil, is called once when a third of the budget is
	// told (a server restart).
	Restart func() error
}

// Result is what RunFleet saw.
type Result struct {
	Records   []storage.Record
	Started   int           // worker processes started
	Kills     int           // workers killed
	Stale     int           // trials of killed workers failed as stale
	MaxDetect time.Duration // longest time from a kill to the fail record of its trial
	Elapsed   time.Duration
	Restarted bool
}

// RunFleet runs worker processes (this test binary, which must call
// WorkerMain in TestMain) on the study name of the store open opens, which
// must exist, and checks the outcome: exactly the budget of tells, each
// trial asked once (no duplicate trial numbers, no point evaluated twice),
// no worker error, every tell a worker logged stored once with its value,
// fails only for trials of killed workers and every such trial failed.
func RunFleet(t *testing.T, open func() storage.Storage, name string, f Fleet) Result {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "told.log")
	env := append(os.Environ(), envWorker+"=1", envStudy+"="+name, envBudget+"="+strconv.Itoa(f.Budget),
		envLog+"="+logPath, envBeat+"="+f.Beat.String(), envEvalMax+"="+f.EvalMax.String())
	env = append(env, f.Env...)

	type proc struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
		killed bool
	}
	var (
		mu       sync.Mutex
		procs    = map[int]*proc{}
		killedAt = map[int]time.Time{} // pid -> kill time
		failures []string
		res      Result
	)
	exited := make(chan *proc)
	start := func() {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		p.cmd.Env = env
		p.cmd.Stderr = &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start worker: %v", err)
		}
		mu.Lock()
		procs[p.cmd.Process.Pid] = p
		res.Started++
		mu.Unlock()
		go func() { _ = p.cmd.Wait(); exited <- p }()
	}
	t0 := time.Now()
	for range f.Workers {
		start()
	}
	stopKiller := make(chan struct{})
	var killer sync.WaitGroup
	if f.Kills > 0 {
		killer.Go(func() {
			for res.Kills < f.Kills {
				select {
				case <-stopKiller:
					return
				case <-time.After(time.Duration(15+rand.IntN(50)) * time.Millisecond):
				}
				mu.Lock()
				var live []*proc
				for _, p := range procs {
					if !p.killed {
						live = append(live, p)
					}
				}
				if len(live) > 0 {
					p := live[rand.IntN(len(live))]
					p.killed = true
					killedAt[p.cmd.Process.Pid] = time.Now()
					_ = p.cmd.Process.Signal(syscall.SIGKILL)
					res.Kills++
				}
				mu.Unlock()
			}
		})
	}
	stopWatch := make(chan struct{})
	var watcher sync.WaitGroup
	if f.Restart != nil {
		watcher.Go(func() {
			s := open()
			for {
				select {
				case <-stopWatch:
					return
				case <-time.After(20 * time.Millisecond):
				}
				recs, err := s.Records(context.Background(), name, 0)
				if err != nil {
					continue
				}
				if st, err := storage.Summarize(recs); err == nil && st.Tells >= f.Budget/3 {
					if err := f.Restart(); err != nil {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("restart: %v", err))
						mu.Unlock()
					}
					mu.Lock()
					res.Restarted = true
					mu.Unlock()
					return
				}
			}
		})
	}
	deadline := time.After(5 * time.Minute)
	for running := f.Workers; running > 0; {
		select {
		case p := <-exited:
			running--
			mu.Lock()
			killed := p.killed
			delete(procs, p.cmd.Process.Pid)
			mu.Unlock()
			switch {
			case killed:
				// Replace it: the budget is not reached while a worker was
				// alive to be killed.
				start()
				running++
			case p.cmd.ProcessState.ExitCode() != 0:
				failures = append(failures, fmt.Sprintf("worker %d: %v: %s", p.cmd.Process.Pid, p.cmd.ProcessState, p.stderr.String()))
			}
		case <-deadline:
			mu.Lock()
			for _, p := range procs {
				_ = p.cmd.Process.Kill()
			}
			mu.Unlock()
			t.Fatalf("workers still running after 5 minutes")
		}
	}
	close(stopKiller)
	killer.Wait()
	close(stopWatch)
	watcher.Wait()
	res.Elapsed = time.Since(t0)
	for _, msg := range failures {
		t.Error(msg)
	}

	// The outcome, read back through a new handle.
	s := open()
	recs, err := s.Records(context.Background(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	res.Records = recs
	st, err := storage.Summarize(recs)
	if err != nil {
		t.Fatalf("stored records do not replay: %v", err)
	}
	if st.Tells != f.Budget || len(st.Pending) != 0 || len(st.Waiting) != 0 {
		t.Errorf("%d tells, %d pending, %d waiting; want exactly the budget %d, none pending", st.Tells, len(st.Pending), len(st.Waiting), f.Budget)
	}
	asks := map[int]storage.Record{}
	points := map[float64]int{}
	tells := map[int]float64{}
	for _, r := range recs {
		switch r.Kind {
		case storage.KindAsk:
			if _, dup := asks[r.Trial]; dup {
				t.Errorf("trial %d asked twice", r.Trial)
			}
			asks[r.Trial] = r
			if prev, dup := points[r.X[0]]; dup {
				t.Errorf("trials %d and %d have the same point", prev, r.Trial)
			}
			points[r.X[0]] = r.Trial
		case storage.KindTell:
			tells[r.Trial] = *r.Y
		}
	}
	// Every tell a worker logged (it returned nil) is stored, once, with
	// its value; tells of workers killed before logging may be stored.
	lf, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	logged := 0
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		var pid, trial int
		var val float64
		if _, err := fmt.Sscan(sc.Text(), &pid, &trial, &val); err != nil {
			if len(killedAt) > 0 {
				continue // a line cut by kill -9
			}
			t.Errorf("log line %q: %v", sc.Text(), err)
			continue
		}
		logged++
		if got, ok := tells[trial]; !ok || got != val {
			t.Errorf("logged tell of trial %d (%v) stored as %v (present %v)", trial, val, got, ok)
		}
	}
	if logged > st.Tells {
		t.Errorf("%d tells logged, %d stored", logged, st.Tells)
	}
	// Fails: exactly the trials of killed workers that have no tell.
	for _, r := range recs {
		if r.Kind != storage.KindFail {
			continue
		}
		_, pid, _ := storage.ParseWorkerID(asks[r.Trial].Worker)
		k, killed := killedAt[pid]
		if !killed || r.Error != envStaleErr {
			t.Errorf("trial %d of live worker %d failed: %q", r.Trial, pid, r.Error)
			continue
		}
		res.Stale++
		res.MaxDetect = max(res.MaxDetect, r.Time.Sub(k))
	}
	failed := map[int]bool{}
	for _, r := range recs {
		if r.Kind == storage.KindFail {
			failed[r.Trial] = true
		}
	}
	for trial, a := range asks {
		_, pid, _ := storage.ParseWorkerID(a.Worker)
		if _, killed := killedAt[pid]; killed {
			if _, told := tells[trial]; !told && !failed[trial] {
				t.Errorf("trial %d of killed worker %d neither told nor failed", trial, pid)
			}
		}
	}
	t.Logf("%d workers at a time (%d started, %d killed), budget %d: %d records, %d trials, %d stale trials failed (longest kill-to-fail %v), restart %v, %v",
		f.Workers, res.Started, res.Kills, f.Budget, len(recs), len(asks), res.Stale, res.MaxDetect.Round(time.Millisecond), res.Restarted, res.Elapsed.Round(time.Millisecond))
	return res
}
