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
		Trials []struct{ Trial int } `json:"trials"`
	}
	if code := call(t, "POST", base+"/api/studies/"+name+"/ask", map[string]int{"n": 1}, &a); code != 200 || len(a.Trials) != 1 {
		t.Fatalf("ask: status %d, %+v", code, a)
	}
	n := a.Trials[0].Trial
	if code := call(t, "POST", fmt.Sprintf("%s/api/studies/%s/trials/%d/tell", base, name, n), map[string]float64{"value": value}, nil); code != 200 {
		t.Fatalf("tell: status %d", code)
	}
	return n
}

// TestServeKill9: a server killed with kill -9 loses nothing it
// acknowledged, and the trial its client was evaluating is handed out
// again by the next server (the journal sees the old process gone); a
// SIGTERM stops it gracefully.
func TestServeKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServe(t, "--dir", dir)
	cfg := map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}, "budget": 6, "seed": 1}
	if code := call(t, "POST", srv.url+"/api/studies", map[string]any{"name": "k9", "config": cfg}, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var a struct {
		Trials []struct {
			Trial  int
			Params map[string]float64
		} `json:"trials"`
	}
	call(t, "POST", srv.url+"/api/studies/k9/ask", map[string]int{"n": 3}, &a)
	for _, tr := range a.Trials[:2] {
		call(t, "POST", fmt.Sprintf("%s/api/studies/k9/trials/%d/tell", srv.url, tr.Trial), map[string]float64{"value": tr.Params["x"]}, nil)
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	<-srv.done
	srv.done <- nil

	srv2 := startServe(t, "--dir", dir)
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
	var again struct {
		Trials []struct {
			Trial  int
			Params map[string]float64
		} `json:"trials"`
	}
	call(t, "POST", srv2.url+"/api/studies/k9/ask", nil, &again)
	if len(again.Trials) != 1 || again.Trials[0].Trial != 2 || again.Trials[0].Params["x"] != a.Trials[2].Params["x"] {
		t.Fatalf("the killed server's pending trial 2 (x = %v) was not handed out again: %+v", a.Trials[2].Params["x"], again)
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
