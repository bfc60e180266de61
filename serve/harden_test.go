package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// raw sends a request with the given headers and body and returns the
// status, the headers and the body of the answer.
func (c *client) raw(method, path string, header map[string]string, body string) (int, http.Header, string) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestCrossSite: a token-less loopback server refuses every request that
// changes state when a browser says it comes from another site (Origin,
// Sec-Fetch-Site), and any body not declared as JSON; it sends no CORS
// header unless origins are allowed, and then only to them.
func TestCrossSite(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	c.must("POST", "/api/studies", map[string]any{"name": "S", "config": testConfig(50)}, nil, http.StatusCreated)
	host := strings.TrimPrefix(c.base, "http://")
	jsonType := map[string]string{"Content-Type": "application/json"}
	with := func(h map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range jsonType {
			out[k] = v
		}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		body               string
		want               int
	}{
		// curl -X POST -H 'Origin: http://evil.example' -H 'Content-Type: text/plain' --data '{"n":1}' .../api/studies/S/ask
		{"evil text/plain", "POST", "/api/studies/S/ask", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, `{"n":1}`, 403},
		{"evil json", "POST", "/api/studies/S/ask", with(map[string]string{"Origin": "http://evil.example"}), `{"n":1}`, 403},
		{"other port", "POST", "/api/studies/S/ask", with(map[string]string{"Origin": "http://127.0.0.1:1"}), `{"n":1}`, 403},
		{"null origin", "POST", "/api/studies/S/ask", with(map[string]string{"Origin": "null"}), `{"n":1}`, 403},
		{"cross-site fetch", "POST", "/api/studies/S/ask", with(map[string]string{"Sec-Fetch-Site": "cross-site"}), `{"n":1}`, 403},
		{"same-site fetch", "POST", "/api/studies/S/ask", with(map[string]string{"Sec-Fetch-Site": "same-site"}), `{"n":1}`, 403},
		{"evil delete", "DELETE", "/api/studies/S", map[string]string{"Origin": "http://evil.example"}, "", 403},
		{"evil attrs", "PUT", "/api/studies/S/attrs", with(map[string]string{"Origin": "https://evil.example"}), `{"key":"k","value":1}`, 403},
		{"evil create", "POST", "/api/studies", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, `name=x`, 403},
		{"text/plain", "POST", "/api/studies/S/ask", map[string]string{"Content-Type": "text/plain"}, `{"n":1}`, 415},
		{"form", "POST", "/api/studies/S/budget", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, `--x--`, 415},
		{"no type", "POST", "/api/studies/S/ask", nil, `{"n":1}`, 415},
		// What the server's own page or a program sends is served.
		{"same origin", "POST", "/api/studies/S/ask", with(map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}), `{"n":1}`, 200},
		{"json charset", "POST", "/api/studies/S/ask", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"n":1}`, 200},
		{"no body", "POST", "/api/studies/S/ask", nil, "", 200},
		{"read from elsewhere", "GET", "/api/studies/S", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 200},
	} {
		code, h, body := c.raw(tc.method, tc.path, tc.header, tc.body)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, code, tc.want, body)
		}
		for k := range h {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: CORS header %s sent without --allow-origin", tc.name, k)
			}
		}
	}
	var trials struct{ Trials []serve.TrialJSON }
	c.must("GET", "/api/studies/S/trials", nil, &trials, 200)
	if len(trials.Trials) != 3 {
		t.Fatalf("%d trials handed out, want the 3 of the served asks", len(trials.Trials))
	}

	// Allowed origins: the preflight is answered, their requests carry
	// the CORS headers; other origins are still refused.
	if _, err := serve.New(serve.Options{Storage: storage.NewMemory(), AllowOrigins: []string{"*"}}); err == nil {
		t.Error(`AllowOrigins "*" accepted`)
	}
	app := "http://app.example:3000"
	a, _ := newServer(t, serve.Options{AllowOrigins: []string{app + "/"}})
	a.must("POST", "/api/studies", map[string]any{"name": "S", "config": testConfig(5)}, nil, http.StatusCreated)
	code, h, _ := a.raw("OPTIONS", "/api/studies/S/ask", map[string]string{"Origin": app, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, "")
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != app || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "X-BKB-Lease") {
		t.Errorf("preflight of an allowed origin: %d %v", code, h)
	}
	code, h, body := a.raw("POST", "/api/studies/S/ask", map[string]string{"Origin": app, "Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, `{"n":1}`)
	if code != 200 || h.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("ask from an allowed origin: %d %v %s", code, h, body)
	}
	code, h, _ = a.raw("POST", "/api/studies/S/ask", map[string]string{"Origin": "http://app.example:3001", "Content-Type": "application/json"}, `{"n":1}`)
	if code != 403 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("ask from another origin: %d %v", code, h)
	}
}

// TestLeases: heartbeat, report and tell of a pending trial need the
// lease its ask answered; a trial a worker evaluates (asked by the
// library, as `bkb worker` does) is out of the API's reach, and neither
// a heartbeat nor its lapse hands it to an HTTP client; a trial handed out
// again has a new lease; the key of the leases is never shown.
func TestLeases(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newServer(t, serve.Options{Storage: d, Grace: time.Minute, Now: clock})
	c.must("POST", "/api/studies", map[string]any{"name": "L", "config": testConfig(6)}, nil, http.StatusCreated)
	var a asked
	c.must("POST", "/api/studies/L/ask", map[string]any{"n": 2}, &a, 200)
	t0, t1 := a.Trials[0], a.Trials[1]
	if len(t0.Lease) != 32 || t0.Lease == t1.Lease {
		t.Fatalf("leases %q and %q", t0.Lease, t1.Lease)
	}
	path := func(trial int, what string) string { return fmt.Sprintf("/api/studies/L/trials/%d/%s", trial, what) }
	// A bkb worker's trial, asked through the library on the same storage.
	w, err := study.Load(context.Background(), d, "L")
	if err != nil {
		t.Fatal(err)
	}
	wt, err := w.Ask(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		path  string
		body  any
		hdr   string
		want  int
		trial int
	}{
		{"heartbeat without a lease", path(t0.Trial, "heartbeat"), nil, "", 403, 0},
		{"heartbeat with another trial's lease", path(t0.Trial, "heartbeat"), map[string]any{"lease": t1.Lease}, "", 403, 0},
		{"tell without a lease", path(t0.Trial, "tell"), map[string]any{"value": -1e9}, "", 403, 0},
		{"tell with a made-up lease", path(t0.Trial, "tell"), map[string]any{"value": -1e9, "lease": strings.Repeat("ab", 16)}, "", 403, 0},
		{"fail without a lease", path(t0.Trial, "tell"), map[string]any{"failed": "x"}, "", 403, 0},
		{"prune without a lease", path(t0.Trial, "tell"), map[string]any{"pruned": true}, "", 403, 0},
		{"report without a lease", path(t0.Trial, "report"), map[string]any{"step": 1, "value": 1}, "", 403, 0},
		{"heartbeat of the worker's trial", path(wt.Number, "heartbeat"), map[string]any{"lease": t0.Lease}, "", 403, 0},
		{"tell of the worker's trial", path(wt.Number, "tell"), map[string]any{"value": -1e9, "lease": t0.Lease}, "", 403, 0},
		{"report on the worker's trial", path(wt.Number, "report"), map[string]any{"step": 1, "value": 1}, t1.Lease, 403, 0},
		{"heartbeat with the header", path(t0.Trial, "heartbeat"), nil, t0.Lease, 200, 0},
		{"report with the field", path(t1.Trial, "report"), map[string]any{"step": 1, "value": 2, "lease": t1.Lease}, "", 200, 0},
	} {
		code, _, body := c.raw("POST", tc.path, map[string]string{"Content-Type": "application/json", serve.LeaseHeader: tc.hdr}, jsonString(t, tc.body))
		if code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, code, tc.want, body)
		}
	}
	var trials struct{ Trials []serve.TrialJSON }
	c.must("GET", "/api/studies/L/trials", nil, &trials, 200)
	for _, tr := range trials.Trials {
		if tr.State != study.Pending {
			t.Errorf("trial %d is %s after the refused requests, want pending", tr.Number, tr.State)
		}
	}
	// The worker's trial outlives the grace without an HTTP heartbeat and
	// is not handed out; trial 1's client vanished: it is, with a new
	// lease, and the old one no longer works.
	advance(40 * time.Second)
	c.must("POST", path(t0.Trial, "heartbeat"), map[string]any{"lease": t0.Lease}, nil, 200)
	advance(40 * time.Second)
	var again asked
	c.must("POST", "/api/studies/L/ask", map[string]any{"n": 2}, &again, 200)
	if len(again.Trials) != 2 || again.Trials[0].Trial != t1.Trial || again.Trials[0].Lease == t1.Lease || again.Trials[1].Trial == wt.Number || again.Trials[1].Trial == t0.Trial {
		t.Fatalf("after trial %d's client vanished: %+v (the worker has trial %d)", t1.Trial, again, wt.Number)
	}
	c.must("POST", path(t1.Trial, "tell"), map[string]any{"value": 1, "lease": t1.Lease}, nil, 403)
	c.must("POST", path(t1.Trial, "tell"), map[string]any{"value": 1, "lease": again.Trials[0].Lease}, nil, 200)
	// A retried tell of a complete trial changes nothing: no lease needed.
	c.must("POST", path(t1.Trial, "tell"), map[string]any{"value": 1}, nil, 200)
	c.must("POST", path(t1.Trial, "tell"), map[string]any{"value": 2}, nil, http.StatusConflict)
	if err := w.Tell(context.Background(), wt.Number, 0.5); err != nil {
		t.Fatalf("the worker's tell: %v", err)
	}

	// The key: not in the study's attributes as the API shows them, and
	// not settable.
	raw := c.must("GET", "/api/studies/L", nil, nil, 200)
	if strings.Contains(raw, "bkb.serve") {
		t.Fatalf("the lease key is shown: %s", raw)
	}
	c.must("PUT", "/api/studies/L/attrs", map[string]any{"key": "bkb.serve.key", "value": "00"}, nil, http.StatusBadRequest)

	// A new server on the storage (a restart) takes the leases it handed
	// out before.
	c2, _ := newServer(t, serve.Options{Storage: d, Grace: time.Minute, Now: clock})
	c2.must("POST", path(t0.Trial, "heartbeat"), map[string]any{"lease": t0.Lease}, nil, 200)
	c2.must("POST", path(t0.Trial, "tell"), map[string]any{"value": 3, "lease": t1.Lease}, nil, 403)
	c2.must("POST", path(t0.Trial, "tell"), map[string]any{"value": 3, "lease": t0.Lease}, nil, 200)

	// Another server stored its key over this one's (two servers handing
	// out a study's first trials at once): its leases are taken here too.
	other := fmt.Sprintf("%q", strings.Repeat("5a", 32))
	if err := d.SetAttr(context.Background(), "L", storage.Attr{Trial: -1, Key: "bkb.serve.key", Value: json.RawMessage(other)}); err != nil {
		t.Fatal(err)
	}
	c3, _ := newServer(t, serve.Options{Storage: d, Grace: time.Minute, Now: clock})
	var a3 asked
	c3.must("POST", "/api/studies/L/ask", nil, &a3, 200)
	c2.must("POST", path(a3.Trials[0].Trial, "heartbeat"), map[string]any{"lease": a3.Trials[0].Lease}, nil, 200)
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServerFiles: a configuration sent over HTTP that names a file of
// the server's machine (csv arms) or a command (a plugin objective) is
// refused with 400 and a message that echoes nothing of the file, unless
// the server allows server files.
func TestServerFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.csv")
	if err := os.WriteFile(secret, []byte("TOPSECRET-LINE-1\nhunter2,hunter3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "arms.csv")
	if err := os.WriteFile(good, []byte("x,y\n0.1,0.2\n0.5,0.5\n0.9,0.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	space := map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}, map[string]any{"name": "y", "low": 0, "high": 1}}}
	cfg := func(extra map[string]any) map[string]any {
		c := map[string]any{"space": space, "budget": 3}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	pwned := filepath.Join(dir, "pwned")
	plugin := map[string]any{"kind": "plugin", "command": []string{"sh", "-c", "touch " + pwned}, "dir": dir}
	refused := []map[string]any{
		{"arms": map[string]any{"kind": "csv", "file": secret}},
		{"arms": map[string]any{"file": secret}},
		{"arms": map[string]any{"kind": "CSV", "file": "/etc/passwd"}},
		{"objective": plugin},
		{"objective": map[string]any{"kind": "builtin", "name": "branin", "command": []string{"true"}}},
		{"objective": map[string]any{"command": []string{"true"}}},
		{"objective": map[string]any{"kind": "anything"}},
		{"objective": "sh -c true"},
	}
	for _, allow := range []bool{false, true} {
		d, err := storage.OpenDir(filepath.Join(dir, fmt.Sprint(allow)))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := newServer(t, serve.Options{Storage: d, AllowServerFiles: allow})
		for i, extra := range refused {
			code, raw := c.do("POST", "/api/studies", map[string]any{"name": fmt.Sprint("s", i), "config": cfg(extra)}, nil)
			if strings.Contains(raw, "TOPSECRET") || strings.Contains(raw, "hunter") || strings.Contains(raw, "root:") {
				t.Errorf("allow=%v, config %v: the answer echoes a file: %s", allow, extra, raw)
			}
			if !allow && (code != http.StatusBadRequest || !strings.Contains(raw, "config.arms") && !strings.Contains(raw, "config.objective")) {
				t.Errorf("config %v: %d %s, want 400 naming the field", extra, code, raw)
			}
		}
		// Safe objectives are accepted.
		c.must("POST", "/api/studies", map[string]any{"name": "builtin", "config": cfg(map[string]any{"objective": map[string]any{"kind": "builtin", "name": "branin"}})}, nil, http.StatusCreated)
		c.must("POST", "/api/studies", map[string]any{"name": "external", "config": cfg(map[string]any{"objective": map[string]any{"kind": "external"}})}, nil, http.StatusCreated)
		want := http.StatusBadRequest
		if allow {
			want = http.StatusCreated
		}
		c.must("POST", "/api/studies", map[string]any{"name": "csv", "config": cfg(map[string]any{"arms": map[string]any{"kind": "csv", "file": good}})}, nil, want)
		c.must("POST", "/api/studies", map[string]any{"name": "plugin", "config": cfg(map[string]any{"objective": plugin})}, nil, want)
		var list struct{ Studies []serve.Summary }
		c.must("GET", "/api/studies", nil, &list, 200)
		if n := len(list.Studies); allow && n < 4 || !allow && n != 2 {
			t.Errorf("allow=%v: %d studies stored", allow, n)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a command sent over HTTP ran")
	}
}

// TestMethods: a wrong method on an API path is a 405 with an Allow
// header naming the right ones; an unknown path is a 404.
func TestMethods(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	c.must("POST", "/api/studies", map[string]any{"name": "m", "config": testConfig(3)}, nil, http.StatusCreated)
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/api/studies/m/ask", "POST"},
		{"DELETE", "/api/studies", "GET, HEAD, POST"},
		{"PATCH", "/api/studies/m", "GET, HEAD, DELETE"},
		{"GET", "/api/studies/m/trials/0/tell", "POST"},
		{"POST", "/api/studies/m/attrs", "PUT"},
	} {
		code, h, body := c.raw(tc.method, tc.path, nil, "")
		if code != http.StatusMethodNotAllowed || h.Get("Allow") != tc.allow || !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s: %d, Allow %q, %s; want 405, Allow %q", tc.method, tc.path, code, h.Get("Allow"), body, tc.allow)
		}
	}
	if code, _, _ := c.raw("GET", "/api/nope", nil, ""); code != http.StatusNotFound {
		t.Errorf("unknown path: %d, want 404", code)
	}
}

// TestSymlinkedJournal: a journal in the directory that is a symbolic
// link is not a study: 404 (or 400 for a create), never a 500, and its
// target is untouched.
func TestSymlinkedJournal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "studies")
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A real journal elsewhere, linked into the directory.
	other, err := storage.OpenDir(filepath.Join(root, "other"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"space": map[string]any{"params": []any{map[string]any{"name": "x", "low": 0, "high": 1}}}})
	var sc study.Config
	json.Unmarshal(cfg, &sc)
	if _, err := study.Create(context.Background(), other, "target", sc); err != nil {
		t.Fatal(err)
	}
	target, _ := other.JournalPath("target")
	before, _ := os.ReadFile(target)
	if err := os.Symlink(target, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	c, _ := newServer(t, serve.Options{Storage: d})
	for _, tc := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/api/studies/link", nil, 404},
		{"GET", "/api/studies/link/trials", nil, 404},
		{"POST", "/api/studies/link/ask", nil, 404},
		{"DELETE", "/api/studies/link", nil, 404},
		{"PUT", "/api/studies/link/attrs", map[string]any{"key": "k", "value": 1}, 404},
		{"POST", "/api/studies", map[string]any{"name": "link", "config": testConfig(3)}, 400},
	} {
		c.must(tc.method, tc.path, tc.body, nil, tc.want)
	}
	var list struct{ Studies []serve.Summary }
	c.must("GET", "/api/studies", nil, &list, 200)
	if len(list.Studies) != 0 {
		t.Errorf("listed: %+v", list.Studies)
	}
	if after, _ := os.ReadFile(target); string(after) != string(before) {
		t.Fatal("the link's target changed")
	}
}

// TestShutdownSlowClient: a client that sends its body slowly, or its
// headers, cannot hold a shutdown: Serve returns nil within the shutdown
// grace, whether the read timeout cuts the client first or the grace
// runs out and its connection is closed.
func TestShutdownSlowClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		read, grace time.Duration
		partial     string
	}{
		{"slow body, read timeout", 300 * time.Millisecond, 5 * time.Second, "POST /api/studies/s/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"},
		{"slow body, grace", time.Minute, 500 * time.Millisecond, "POST /api/studies/s/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"},
		{"slow headers", 300 * time.Millisecond, 5 * time.Second, "POST /api/studies/s/ask HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, err := serve.New(serve.Options{Storage: storage.NewMemory(), ReadTimeout: tc.read, ShutdownGrace: tc.grace})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, ln) }()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.partial); err != nil {
				t.Fatal(err)
			}
			// A complete request on another connection: once it is
			// answered, the slow one has been accepted and is being read.
			if resp, err := http.Get("http://" + ln.Addr().String() + "/api/info"); err != nil {
				t.Fatal(err)
			} else {
				resp.Body.Close()
			}
			start := time.Now()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Serve: %v, want nil", err)
				}
			case <-time.After(tc.grace + 5*time.Second):
				t.Fatalf("Serve still running %v after its context ended (grace %v)", time.Since(start), tc.grace)
			}
			if el := time.Since(start); el > tc.grace+2*time.Second {
				t.Errorf("shutdown took %v with a grace of %v", el, tc.grace)
			}
		})
	}
}
