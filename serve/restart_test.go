package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/study"
)

// goneWorker returns a worker id of this host whose process is gone (a
// child that exited): a server with it is, for the journal, a server
// that was killed, while it runs in this test's process.
func goneWorker(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true(1): %v", err)
	}
	id := storage.NewWorkerID()
	host, _, ok := storage.ParseWorkerID(id)
	if !ok {
		t.Fatalf("worker id %q", id)
	}
	return fmt.Sprintf("%s:%d:%s", host, cmd.ProcessState.Pid(), id[strings.LastIndexByte(id, ':')+1:])
}

// fleetClient is an HTTP client of the restart test: it retries while no
// server answers (a restart), as the Python client does.
type fleetClient struct {
	t    *testing.T
	base string
	http *http.Client
}

// post sends a JSON request until a server answers it (at most 30 s),
// and returns the status and the body.
func (c *fleetClient) post(path string, body any) (int, []byte) {
	b, _ := json.Marshal(body)
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.http.Do(req)
		if err == nil {
			raw, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode < 500 {
				return resp.StatusCode, raw
			}
		}
		if time.Now().After(deadline) {
			c.t.Errorf("POST %s: no server answered within 30 s (last error %v)", path, err)
			return 0, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeRestarts: 16 clients x 50 trials, heartbeating while they
// evaluate, through 3 restarts of the server (killed twice, stopped
// gracefully once), on a directory of journals and a journal file (each
// server a process the journal sees gone) and on PostgreSQL: no trial is evaluated twice, every one is told
// once, and every told value is stored. A restarted server gives the
// trials of the one before a grace period from its start, in which live
// clients heartbeat it and keep their trials (with the leases the earlier
// server gave them).
func TestServeRestarts(t *testing.T) {
	t.Parallel()
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		restarts(t, "r", func() storage.Storage {
			d, err := storage.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}, goneWorker, 1500*time.Millisecond)
	})
	t.Run("journal file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "r.jsonl")
		restarts(t, "r", func() storage.Storage {
			js, err := storage.OpenJournalStore(path)
			if err != nil {
				t.Fatal(err)
			}
			return js
		}, goneWorker, 1500*time.Millisecond)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		u := os.Getenv("BKB_POSTGRES_URL")
		if u == "" {
			t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
		}
		name := fmt.Sprintf("serve-restarts-%08x", rand.Uint32())
		open := func() storage.Storage {
			st, err := postgres.Open(context.Background(), u, postgres.Options{HeartbeatGrace: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		defer func() {
			st := open()
			st.(storage.Catalog).DeleteStudy(context.Background(), name)
			st.Close()
		}()
		restarts(t, name, open, func(*testing.T) string { return "" }, 2*time.Second)
	})
}

// restarts runs TestServeRestarts on the storage open makes (once per
// server), with the server's worker id from worker ("": its own) and the
// heartbeat grace (PostgreSQL's must exceed the latency of a heartbeat
// under the load of the 16 clients on a small machine's database).
func restarts(t *testing.T, name string, open func() storage.Storage, worker func(*testing.T) string, grace time.Duration) {
	const (
		clients = 16
		each    = 50
		budget  = clients * each
	)
	d0 := open()
	sp, _ := study.Box([]string{"x", "y"}, []float64{0, 0}, []float64{1, 1})
	if _, err := study.Create(context.Background(), d0, name, study.Config{Space: sp, Policy: "random", Budget: budget, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	d0.Close()

	// An incarnation of the server on the directory.
	type incarnation struct {
		hs *http.Server
		st storage.Storage
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	start := func(ln net.Listener) *incarnation {
		st := open()
		srv, err := serve.New(serve.Options{Storage: st, Grace: grace, Worker: worker(t)})
		if err != nil {
			t.Fatal(err)
		}
		inc := &incarnation{hs: &http.Server{Handler: srv}, st: st}
		go inc.hs.Serve(ln)
		return inc
	}
	var cur atomic.Pointer[incarnation]
	cur.Store(start(ln))

	var (
		mu     sync.Mutex
		handed = map[int]int{}     // trial -> clients it was handed to
		told   = map[int]float64{} // trial -> value told
		tells  atomic.Int64
	)
	value := func(p map[string]any) float64 {
		x, _ := p["x"].(float64)
		y, _ := p["y"].(float64)
		return (x-0.3)*(x-0.3) + (y-0.7)*(y-0.7)
	}
	runClient := func() {
		c := &fleetClient{t: t, base: "http://" + addr, http: &http.Client{Timeout: 10 * time.Second}}
		for {
			code, raw := c.post("/api/studies/"+name+"/ask", map[string]int{"n": 1})
			if code == http.StatusConflict {
				var e struct {
					Code    string
					Pending int
				}
				json.Unmarshal(raw, &e)
				if e.Code == "complete" && e.Pending == 0 {
					return // every trial is done
				}
				time.Sleep(20 * time.Millisecond) // others' trials are pending
				continue
			}
			if code != 200 {
				t.Errorf("ask: %d %s", code, raw)
				return
			}
			var a struct {
				Trials []struct {
					Trial  int
					Params map[string]any
					Lease  string
				}
			}
			if err := json.Unmarshal(raw, &a); err != nil || len(a.Trials) != 1 {
				t.Errorf("ask: %s", raw)
				return
			}
			tr := a.Trials[0]
			mu.Lock()
			handed[tr.Trial]++
			mu.Unlock()
			// Evaluate: a few ms, or three grace periods for one trial in
			// 50, heartbeating every third of the grace meanwhile.
			eval := 5 * time.Millisecond
			if tr.Trial%50 == 0 {
				eval = 3 * grace
			}
			stop := make(chan struct{})
			var hb sync.WaitGroup
			hb.Add(1)
			go func() {
				defer hb.Done()
				tick := time.NewTicker(grace / 3)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if code, raw := c.post(fmt.Sprintf("/api/studies/%s/trials/%d/heartbeat", name, tr.Trial), map[string]string{"lease": tr.Lease}); code != 200 && code != http.StatusConflict {
							// 409: the tell under way was stored first.
							t.Errorf("heartbeat of trial %d: %d %s", tr.Trial, code, raw)
						}
					}
				}
			}()
			time.Sleep(eval)
			// Heartbeats go on until the tell is answered (a slow answer,
			// or a restart, must not let the trial go stale).
			v := value(tr.Params)
			code, raw = c.post(fmt.Sprintf("/api/studies/%s/trials/%d/tell", name, tr.Trial), map[string]any{"value": v, "lease": tr.Lease})
			close(stop)
			hb.Wait()
			if code != 200 {
				t.Errorf("tell of trial %d: %d %s", tr.Trial, code, raw)
				return
			}
			mu.Lock()
			told[tr.Trial] = v
			mu.Unlock()
			tells.Add(1)
		}
	}

	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() { defer wg.Done(); runClient() }()
	}
	// Three restarts, at a quarter, half and three quarters of the budget:
	// killed (connections cut, nothing waited for), stopped gracefully,
	// killed. The server is down for a tenth of a second each time.
	for i, kill := range []bool{true, false, true} {
		for tells.Load() < int64(budget*(i+1)/4) {
			if t.Failed() {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		old := cur.Load()
		if kill {
			old.hs.Close()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := old.hs.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			cancel()
		}
		old.st.Close()
		time.Sleep(100 * time.Millisecond)
		var ln net.Listener
		for k := 0; ; k++ {
			if ln, err = net.Listen("tcp", addr); err == nil || k == 100 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		cur.Store(start(ln))
	}
	wg.Wait()
	last := cur.Load()
	defer func() { last.hs.Close(); last.st.Close() }()
	if t.Failed() {
		return
	}
	dups := 0
	for trial, n := range handed {
		if n > 1 {
			dups++
			t.Errorf("trial %d was handed to %d clients", trial, n)
		}
	}
	var trials struct{ Trials []serve.TrialJSON }
	c := &client{t: t, base: "http://" + addr, http: &http.Client{Timeout: time.Minute}}
	c.must("GET", "/api/studies/"+name+"/trials", nil, &trials, 200)
	if len(trials.Trials) != budget || len(told) != budget {
		t.Fatalf("%d trials stored, %d told, want the budget %d", len(trials.Trials), len(told), budget)
	}
	for _, tr := range trials.Trials {
		if v, ok := told[tr.Number]; tr.State != study.Complete || tr.Value == nil || !ok || *tr.Value != v {
			t.Fatalf("trial %d: stored %s %v, told %v (%v)", tr.Number, tr.State, tr.Value, v, ok)
		}
	}
	if dups > 0 {
		t.Fatalf("%d duplicate evaluations", dups)
	}
}

// TestServeHandsOutStoppedProgramsTrial: a trial left pending by a program
// that stopped (a Go loop whose process is gone) is handed out by a server
// started after it at once, at the trial's point: a program that stopped
// has no client that could heartbeat the server. A trial that a server
// which stopped handed out waits for its client for the grace period
// (TestServeRestarts): the new server's first ask is a new trial.
func TestServeHandsOutStoppedProgramsTrial(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := study.Box([]string{"x"}, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	gone := goneWorker(t)
	i := strings.LastIndexByte(gone, ':')
	for _, c := range []struct {
		name   string
		worker string // of the process that left the trial pending
		reask  bool   // the server's first ask hands that trial out again
	}{
		{"a program's trial", gone, true},
		{"a server's trial", gone[:i+1] + "serve-" + gone[i+1:], false},
	} {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		st, err := storage.OpenJournalStore(path)
		if err != nil {
			t.Fatal(err)
		}
		program, err := study.Create(ctx, st, "s", study.Config{Space: sp, Seed: 1, Budget: 3}, study.Options{Worker: c.worker})
		if err != nil {
			t.Fatal(err)
		}
		first, err := program.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := program.Tell(ctx, first.Number, 1); err != nil {
			t.Fatal(err)
		}
		left, err := program.Ask(ctx) // never told: the process stops
		if err != nil {
			t.Fatal(err)
		}
		st.Close()

		if st, err = storage.OpenJournalStore(path); err != nil {
			t.Fatal(err)
		}
		srv, err := serve.New(serve.Options{Storage: st, Grace: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		resp, err := ts.Client().Post(ts.URL+"/api/studies/s/ask", "application/json", strings.NewReader(`{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		var asked struct {
			Trials []struct {
				Number int       `json:"trial"`
				X      []float64 `json:"x"`
			} `json:"trials"`
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Close()
		st.Close()
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &asked) != nil || len(asked.Trials) != 1 {
			t.Fatalf("%s: ask: %d %s", c.name, resp.StatusCode, raw)
		}
		got := asked.Trials[0]
		if again := got.Number == left.Number; again != c.reask || again && got.X[0] != left.X[0] {
			t.Errorf("%s: the server handed out trial %d at %v; the pending trial is %d at %v (want it handed out again: %v)", c.name, got.Number, got.X, left.Number, left.X, c.reask)
		}
	}
}
