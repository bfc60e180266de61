//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// served is a `bkb serve` process started by a test.
type served struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
	done chan error
}

// startServe runs `bkb serve args...` on a free loopback port and waits
// for its "serving" line.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bkbBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, logs: &bytes.Buffer{}, done: make(chan error, 1)}
	t.Cleanup(func() { cmd.Process.Kill(); <-s.done })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n")
			if i := strings.Index(line, " at http://"); i >= 0 {
				u := strings.Fields(line[i+4:])[0]
				urls <- strings.TrimSuffix(u, "/")
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case s.url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("bkb serve did not start: %s", s.logs)
	}
	return s
}

// call sends a JSON request to the server and decodes the answer.
func call(t *testing.T, method, url string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
	return resp.StatusCode
}

// askTell asks one trial over HTTP and tells it a value.
func askTell(t *testing.T, base, name string, value float64) int {
	t.Helper()
	var a struct {
		Trials []struct {
			Trial int
			Lease string
		} `json:"trials"`
	}
	if code := call(t, "POST", base+"/api/studies/"+name+"/ask", map[string]int{"n": 1}, &a); code != 200 || len(a.Trials) != 1 {
		t.Fatalf("ask: status %d, %+v", code, a)
	}
	n := a.Trials[0].Trial
	if code := call(t, "POST", fmt.Sprintf("%s/api/studies/%s/trials/%d/tell", base, name, n), map[string]any{"value": value, "lease": a.Trials[0].Lease}, nil); code != 200 {
		t.Fatalf("tell: status %d", code)
	}
	return n
}

// TestServeKill9: a server killed with kill -9 loses nothing it
// acknowledged; the next server gives the trial its client was evaluating
// one grace period from its start (the client's lease still works there),
// then hands it out again at the same point with a new lease (the old one
// no longer works); a SIGTERM stops it gracefully.
func TestServeKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServe(t, "--dir", dir)
	cfg := map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}, "budget": 6, "seed": 1}
	if code := call(t, "POST", srv.url+"/api/studies", map[string]any{"name": "k9", "config": cfg}, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	type askAnswer struct {
		Trials []struct {
			Trial  int
			Params map[string]float64
			Lease  string
		} `json:"trials"`
	}
	var a askAnswer
	call(t, "POST", srv.url+"/api/studies/k9/ask", map[string]int{"n": 3}, &a)
	for _, tr := range a.Trials[:2] {
		if code := call(t, "POST", fmt.Sprintf("%s/api/studies/k9/trials/%d/tell", srv.url, tr.Trial), map[string]any{"value": tr.Params["x"], "lease": tr.Lease}, nil); code != 200 {
			t.Fatalf("tell: %d", code)
		}
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	<-srv.done
	srv.done <- nil

	srv2 := startServe(t, "--dir", dir, "--heartbeat-grace", "1s")
	var trials struct {
		Trials []struct {
			Trial int
			State string
			Value *float64
		}
	}
	call(t, "GET", srv2.url+"/api/studies/k9/trials", nil, &trials)
	if len(trials.Trials) != 3 || trials.Trials[0].State != "complete" || trials.Trials[1].State != "complete" || trials.Trials[2].State != "pending" {
		t.Fatalf("after kill -9: %+v", trials)
	}
	old := a.Trials[2]
	hb := fmt.Sprintf("%s/api/studies/k9/trials/2/heartbeat", srv2.url)
	if code := call(t, "POST", hb, map[string]string{"lease": old.Lease}, nil); code != 200 {
		t.Fatalf("the killed server's client heartbeats the new server with its lease: %d, want 200", code)
	}
	if code := call(t, "POST", hb, map[string]string{"lease": strings.Repeat("0", 32)}, nil); code != 403 {
		t.Fatalf("a heartbeat with a wrong lease: %d, want 403", code)
	}
	// The client stops; once its lease has run out, trial 2 is handed out
	// again (asks meanwhile hand out new trials).
	var again askAnswer
	deadline := time.Now().Add(30 * time.Second)
	for {
		again = askAnswer{}
		code := call(t, "POST", srv2.url+"/api/studies/k9/ask", nil, &again)
		if code == 200 && len(again.Trials) == 1 && again.Trials[0].Trial == 2 || time.Now().After(deadline) {
			break
		}
		if code == 200 && again.Trials[0].Trial < 3 || code != 200 && code != 409 {
			t.Fatalf("ask: %d %+v", code, again)
		}
		time.Sleep(100 * time.Millisecond) // 409 (the budget's other trials are out) or a new trial
	}
	if len(again.Trials) != 1 || again.Trials[0].Trial != 2 || again.Trials[0].Params["x"] != old.Params["x"] || again.Trials[0].Lease == old.Lease {
		t.Fatalf("the killed server's pending trial 2 (x = %v) was not handed out again with a new lease: %+v", old.Params["x"], again)
	}
	tell := fmt.Sprintf("%s/api/studies/k9/trials/2/tell", srv2.url)
	if code := call(t, "POST", tell, map[string]any{"value": 0.5, "lease": old.Lease}, nil); code != 403 {
		t.Fatalf("a tell with the lease of the client that vanished: %d, want 403", code)
	}
	if code := call(t, "POST", tell, map[string]any{"value": 0.5, "lease": again.Trials[0].Lease}, nil); code != 200 {
		t.Fatalf("tell: %d", code)
	}
	srv2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-srv2.done:
		if err != nil {
			t.Fatalf("bkb serve after SIGTERM: %v\n%s", err, srv2.logs)
		}
		srv2.done <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("bkb serve did not stop on SIGTERM")
	}
	if !strings.Contains(srv2.logs.String(), "stopped") {
		t.Fatalf("no graceful stop in the log:\n%s", srv2.logs)
	}
}

// TestServePostgres serves a PostgreSQL database: the URL's password never
// appears in the log or an answer, and masking it does not garble other
// text that happens to contain the same letters.
func TestServePostgres(t *testing.T) {
	t.Parallel()
	u := os.Getenv("BKB_POSTGRES_URL")
	if u == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
	}
	pw := ""
	if p, err := url.Parse(u); err == nil && p.User != nil {
		pw, _ = p.User.Password()
	}
	srv := startServe(t, "--storage", u)
	name := fmt.Sprintf("serve25-pg-%08x", rand.Uint32())
	cfg := map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}, "budget": 3, "policy": "bkb"}
	if code := call(t, "POST", srv.url+"/api/studies", map[string]any{"name": name, "config": cfg}, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	defer call(t, "DELETE", srv.url+"/api/studies/"+name, nil, nil)
	askTell(t, srv.url, name, 0.5)
	var sum struct{ Policy string }
	call(t, "GET", srv.url+"/api/studies/"+name, nil, &sum)
	if sum.Policy != "bkb" {
		t.Errorf("policy %q, want bkb (masking garbled it?)", sum.Policy)
	}
	var info struct{ Storage string }
	call(t, "GET", srv.url+"/api/info", nil, &info)
	logs := srv.logs.String()
	if pw != "" && (strings.Contains(info.Storage, ":"+pw+"@") || strings.Contains(logs, ":"+pw+"@")) {
		t.Fatalf("the password appears: info %q, log:\n%s", info.Storage, logs)
	}
	if !strings.Contains(info.Storage, ":***@") {
		t.Errorf("storage described as %q, want the password masked", info.Storage)
	}
	// A URL that cannot be parsed: the error does not echo the password.
	var out, errb bytes.Buffer
	run(context.Background(), []string{"studies", "--storage", "postgres://u:Zq9s3cret@h:notaport/db"}, &out, &errb)
	if strings.Contains(out.String()+errb.String(), "Zq9s3cret") {
		t.Fatalf("the password printed: %s", errb.String())
	}
}

// TestServePostgresGrace: after a kill -9, a server on PostgreSQL hands
// out again the trial of a client that vanished once its own
// --heartbeat-grace has passed (counted from its start), not after the
// storage's default minute.
func TestServePostgresGrace(t *testing.T) {
	t.Parallel()
	u := os.Getenv("BKB_POSTGRES_URL")
	if u == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
	}
	srv := startServe(t, "--storage", u, "--heartbeat-grace", "1s")
	name := fmt.Sprintf("serve-grace-%08x", rand.Uint32())
	cfg := map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}, "budget": 3, "policy": "random"}
	if code := call(t, "POST", srv.url+"/api/studies", map[string]any{"name": name, "config": cfg}, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var a struct{ Trials []struct{ Trial int } }
	if code := call(t, "POST", srv.url+"/api/studies/"+name+"/ask", nil, &a); code != 200 || len(a.Trials) != 1 {
		t.Fatalf("ask: %d %+v", code, a)
	}
	srv.cmd.Process.Signal(syscall.SIGKILL) // the client vanishes too
	<-srv.done
	srv.done <- nil
	srv2 := startServe(t, "--storage", u, "--heartbeat-grace", "1s")
	defer call(t, "DELETE", srv2.url+"/api/studies/"+name, nil, nil)
	start := time.Now()
	for {
		var again struct{ Trials []struct{ Trial int } }
		code := call(t, "POST", srv2.url+"/api/studies/"+name+"/ask", nil, &again)
		if code == 200 && len(again.Trials) == 1 && again.Trials[0].Trial == a.Trials[0].Trial {
			break
		}
		if code != 200 && code != 409 {
			t.Fatalf("ask: %d", code)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("trial %d of the vanished client not handed out again %v after the restart (--heartbeat-grace 1s)", a.Trials[0].Trial, time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
