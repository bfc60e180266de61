//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestServeKill9Fleet: 16 clients x 50 trials on a journal through 3
// restarts of a `bkb serve` process (kill -9, SIGTERM, kill -9), the
// clients heartbeating while they evaluate and retrying while no server
// answers: no trial is evaluated twice, every trial of the budget is told
// once, and every told value is stored. The journal sees each killed
// server's process gone; the next server gives its trials the grace from
// its start, in which their clients heartbeat it with their leases.
func TestServeKill9Fleet(t *testing.T) {
	t.Parallel()
	const (
		clients = 16
		each    = 50
		budget  = clients * each
		grace   = time.Second
	)
	dir := t.TempDir()
	args := []string{"--dir", dir, "--heartbeat-grace", grace.String()}
	var srv atomic.Pointer[served]
	srv.Store(startServe(t, args...))
	cfg := map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}, "budget": budget, "policy": "random", "seed": 1}
	if code := call(t, "POST", srv.Load().url+"/api/studies", map[string]any{"name": "f", "config": cfg}, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	// post sends a request to whichever server runs, until one answers.
	post := func(path string, body any) (int, []byte) {
		b, _ := json.Marshal(body)
		deadline := time.Now().Add(60 * time.Second)
		for {
			req, _ := http.NewRequest("POST", srv.Load().url+path, bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err == nil {
				raw, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr == nil && resp.StatusCode < 500 {
					return resp.StatusCode, raw
				}
			}
			if time.Now().After(deadline) {
				t.Errorf("POST %s: no server answered within 60 s", path)
				return 0, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var (
		mu     sync.Mutex
		handed = map[int]int{}
		told   = map[int]float64{}
		tells  atomic.Int64
	)
	client := func() {
		for !t.Failed() {
			code, raw := post("/api/studies/f/ask", map[string]int{"n": 1})
			if code == http.StatusConflict {
				var e struct {
					Code    string
					Pending int
				}
				json.Unmarshal(raw, &e)
				if e.Code == "complete" && e.Pending == 0 {
					return
				}
				time.Sleep(50 * time.Millisecond)
				continue
			}
			var a struct {
				Trials []struct {
					Trial  int
					Params map[string]float64
					Lease  string
				}
			}
			if code != 200 || json.Unmarshal(raw, &a) != nil || len(a.Trials) != 1 {
				t.Errorf("ask: %d %s", code, raw)
				return
			}
			tr := a.Trials[0]
			mu.Lock()
			handed[tr.Trial]++
			mu.Unlock()
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
						if code, raw := post(fmt.Sprintf("/api/studies/f/trials/%d/heartbeat", tr.Trial), map[string]string{"lease": tr.Lease}); code != 200 && code != http.StatusConflict {
							t.Errorf("heartbeat of trial %d: %d %s", tr.Trial, code, raw)
						}
					}
				}
			}()
			eval := 5 * time.Millisecond
			if tr.Trial%50 == 0 {
				eval = 3 * grace
			}
			time.Sleep(eval)
			v := tr.Params["x"] * tr.Params["x"]
			code, raw = post(fmt.Sprintf("/api/studies/f/trials/%d/tell", tr.Trial), map[string]any{"value": v, "lease": tr.Lease})
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
		go func() { defer wg.Done(); client() }()
	}
	for i, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGKILL} {
		for tells.Load() < int64(budget*(i+1)/4) && !t.Failed() {
			time.Sleep(10 * time.Millisecond)
		}
		old := srv.Load()
		old.cmd.Process.Signal(sig)
		err := <-old.done
		old.done <- nil
		if sig == syscall.SIGTERM && err != nil {
			t.Errorf("bkb serve after SIGTERM: %v\n%s", err, old.logs)
		}
		srv.Store(startServe(t, args...))
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for trial, n := range handed {
		if n > 1 {
			t.Errorf("trial %d was handed to %d clients", trial, n)
		}
	}
	var trials struct {
		Trials []struct {
			Trial int
			State string
			Value *float64
		}
	}
	call(t, "GET", srv.Load().url+"/api/studies/f/trials", nil, &trials)
	if len(trials.Trials) != budget || len(told) != budget {
		t.Fatalf("%d trials stored, %d told, want the budget %d", len(trials.Trials), len(told), budget)
	}
	for _, tr := range trials.Trials {
		if v, ok := told[tr.Trial]; tr.State != "complete" || tr.Value == nil || !ok || *tr.Value != v {
			t.Fatalf("trial %d: stored %s %v, told %v (%v)", tr.Trial, tr.State, tr.Value, v, ok)
		}
	}
}
