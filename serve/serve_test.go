package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
)

// testConfig is a small mixed space: a float, an integer and a
// categorical parameter.
func testConfig(budget int) map[string]any {
	return map[string]any{
		"space": map[string]any{"params": []any{
			map[string]any{"name": "x", "low": -2, "high": 2},
			map[string]any{"name": "n", "type": "int", "low": 1, "high": 5},
			map[string]any{"name": "c", "type": "categorical", "choices": []any{"a", "b", "c"}},
		}},
		"budget": budget,
		"seed":   7,
	}
}

// objective is minimized at x = 0.5, n = 3, c = "b".
func objective(p map[string]any) float64 {
	x, n := p["x"].(float64), p["n"].(float64)
	v := (x-0.5)*(x-0.5) + 0.1*(n-3)*(n-3)
	if p["c"] != "b" {
		v += 0.5
	}
	return v
}

// client calls a test server.
type client struct {
	t     testing.TB
	base  string
	token string
	http  *http.Client
}

func newServer(t testing.TB, opt serve.Options) (*client, *serve.Server) {
	t.Helper()
	if opt.Storage == nil {
		opt.Storage = storage.NewMemory()
	}
	srv, err := serve.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &client{t: t, base: ts.URL, token: opt.Token, http: ts.Client()}, srv
}

// do sends a request and decodes the answer into out (when not nil); it
// returns the status and the raw body.
func (c *client) do(method, path string, body any, out any) (int, string) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	if resp.StatusCode >= 400 {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			c.t.Errorf("%s %s: status %d without a JSON error: %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, string(raw)
}

func (c *client) must(method, path string, body, out any, want int) string {
	c.t.Helper()
	code, raw := c.do(method, path, body, out)
	if code != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, raw)
	}
	return raw
}

type asked struct {
	Trials []struct {
		Trial  int            `json:"trial"`
		Params map[string]any `json:"params"`
		Lease  string         `json:"lease"`
	} `json:"trials"`
}

func TestAPI(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"memory", "dir"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var st storage.Storage = storage.NewMemory()
			if kind == "dir" {
				d, err := storage.OpenDir(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				st = d
			}
			c, _ := newServer(t, serve.Options{Storage: st})
			c.must("POST", "/api/studies", map[string]any{"name": "demo", "config": testConfig(12)}, nil, http.StatusCreated)
			c.must("POST", "/api/studies", map[string]any{"name": "demo", "config": testConfig(12)}, nil, http.StatusConflict)
			c.must("POST", "/api/studies", map[string]any{"name": "bad", "config": map[string]any{"space": map[string]any{}}}, nil, http.StatusBadRequest)

			// Ask in batches of 5, tell every trial: exactly the budget.
			seen := map[int]bool{}
			for {
				var a asked
				code, raw := c.do("POST", "/api/studies/demo/ask", map[string]any{"n": 5}, &a)
				if code == http.StatusConflict {
					if !strings.Contains(raw, `"code":"complete"`) {
						t.Fatalf("409 without code complete: %s", raw)
					}
					break
				}
				if code != http.StatusOK {
					t.Fatalf("ask: %d %s", code, raw)
				}
				for _, tr := range a.Trials {
					if seen[tr.Trial] {
						t.Fatalf("trial %d handed out twice", tr.Trial)
					}
					seen[tr.Trial] = true
					if _, ok := tr.Params["c"].(string); !ok {
						t.Fatalf("categorical param %v is not a string", tr.Params["c"])
					}
					if n := tr.Params["n"].(float64); n != math.Trunc(n) {
						t.Fatalf("int param %v", n)
					}
					c.must("POST", fmt.Sprintf("/api/studies/demo/trials/%d/report", tr.Trial), map[string]any{"step": 1, "value": 9.5, "lease": tr.Lease}, nil, 200)
					c.must("POST", fmt.Sprintf("/api/studies/demo/trials/%d/heartbeat", tr.Trial), map[string]any{"lease": tr.Lease}, nil, 200)
					v := objective(tr.Params)
					c.must("POST", fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Trial), map[string]any{"value": v, "lease": tr.Lease}, nil, 200)
					// A retried tell is accepted; another value is a conflict.
					c.must("POST", fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Trial), map[string]any{"value": v, "lease": tr.Lease}, nil, 200)
					c.must("POST", fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Trial), map[string]any{"value": v + 1, "lease": tr.Lease}, nil, http.StatusConflict)
				}
			}
			if len(seen) != 12 {
				t.Fatalf("%d trials handed out, want the budget 12", len(seen))
			}
			var trials struct {
				Trials []serve.TrialJSON `json:"trials"`
			}
			c.must("GET", "/api/studies/demo/trials", nil, &trials, 200)
			best := math.Inf(1)
			for _, tr := range trials.Trials {
				if tr.State != "complete" || tr.Value == nil || tr.Intermediate["1"] != 9.5 {
					t.Fatalf("trial %+v", tr)
				}
				best = min(best, *tr.Value)
			}
			var b serve.TrialJSON
			c.must("GET", "/api/studies/demo/best", nil, &b, 200)
			if *b.Value != best {
				t.Fatalf("best %v, want %v", *b.Value, best)
			}

			// Budget extension, attributes.
			c.must("POST", "/api/studies/demo/budget", map[string]any{"budget": 5}, nil, http.StatusBadRequest)
			c.must("POST", "/api/studies/demo/budget", map[string]any{"budget": 14}, nil, 200)
			var a asked
			c.must("POST", "/api/studies/demo/ask", map[string]any{"n": 5}, &a, 200)
			if len(a.Trials) != 2 || a.Trials[0].Trial != 12 {
				t.Fatalf("after extending to 14: %+v", a)
			}
			c.must("PUT", "/api/studies/demo/attrs", map[string]any{"key": "owner", "value": "ann"}, nil, 200)
			c.must("PUT", "/api/studies/demo/attrs", map[string]any{"key": "note", "trial": 3, "value": map[string]any{"ok": true}}, nil, 200)
			c.must("PUT", "/api/studies/demo/attrs", map[string]any{"key": "note", "trial": 99, "value": 1}, nil, http.StatusNotFound)
			c.must("PUT", "/api/studies/demo/attrs", map[string]any{"key": "bkb.budget", "value": 1}, nil, http.StatusBadRequest)
			var sum serve.Summary
			c.must("GET", "/api/studies/demo", nil, &sum, 200)
			if sum.Budget != 14 || sum.Counts["complete"] != 12 || sum.Counts["pending"] != 2 || len(sum.Attrs) != 2 {
				t.Fatalf("summary %+v", sum)
			}
			if sum.Importance != nil {
				var total float64
				for _, v := range sum.Importance {
					total += v
				}
				if math.Abs(total-1) > 1e-9 {
					t.Fatalf("importance %v sums to %v", sum.Importance, total)
				}
			}
			c.must("GET", "/api/studies/demo/trials", nil, &trials, 200)
			if note, _ := trials.Trials[3].Attrs["note"].(map[string]any); note["ok"] != true {
				t.Fatal("trial attribute missing")
			}
			var sl struct {
				X, Mean, SD []float64
				Labels      []string
			}
			c.must("GET", "/api/studies/demo/predict?param=x&points=9", nil, &sl, 200)
			if len(sl.X) != 9 || len(sl.Mean) != 9 || len(sl.SD) != 9 {
				t.Fatalf("slice %+v", sl)
			}
			c.must("GET", "/api/studies/demo/predict?param=c", nil, &sl, 200)
			if !slices.Equal(sl.Labels, []string{"a", "b", "c"}) {
				t.Fatalf("categorical slice labels %v", sl.Labels)
			}
			c.must("GET", "/api/studies/demo/predict?param=nope", nil, nil, http.StatusBadRequest)

			var list struct{ Studies []serve.Summary }
			c.must("GET", "/api/studies", nil, &list, 200)
			if len(list.Studies) != 1 || list.Studies[0].Name != "demo" {
				t.Fatalf("list %+v", list)
			}
			c.must("DELETE", "/api/studies/demo", nil, nil, 200)
			c.must("GET", "/api/studies/demo", nil, nil, http.StatusNotFound)
			c.must("DELETE", "/api/studies/demo", nil, nil, http.StatusNotFound)
		})
	}
}

// TestVanishedClient: a trial whose client stops heartbeating is handed
// out again, at the same point, once the grace has passed; one that
// heartbeats is not.
func TestVanishedClient(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c, _ := newServer(t, serve.Options{Grace: time.Minute, Now: clock})
	c.must("POST", "/api/studies", map[string]any{"name": "v", "config": testConfig(3)}, nil, http.StatusCreated)
	var a asked
	c.must("POST", "/api/studies/v/ask", map[string]any{"n": 3}, &a, 200)
	if len(a.Trials) != 3 {
		t.Fatalf("asked %+v", a)
	}
	c.must("POST", "/api/studies/v/ask", nil, nil, http.StatusConflict)
	advance(40 * time.Second)
	c.must("POST", "/api/studies/v/trials/1/heartbeat", map[string]any{"lease": a.Trials[1].Lease}, nil, 200) // trial 1's client is alive
	c.must("POST", "/api/studies/v/trials/2/tell", map[string]any{"value": 1, "lease": a.Trials[2].Lease}, nil, 200)
	advance(40 * time.Second) // trial 0: 80 s without a sign of life
	// Extending the budget reloads the study; the leases stay.
	c.must("POST", "/api/studies/v/budget", map[string]any{"budget": 4}, nil, 200)
	var again asked
	c.must("POST", "/api/studies/v/ask", nil, &again, 200)
	if len(again.Trials) != 1 || again.Trials[0].Trial != 0 || fmt.Sprint(again.Trials[0].Params) != fmt.Sprint(a.Trials[0].Params) {
		t.Fatalf("after trial 0's client vanished, ask gave %+v, want trial 0 at %v", again, a.Trials[0].Params)
	}
	var fresh asked
	c.must("POST", "/api/studies/v/ask", nil, &fresh, 200) // the extension's new trial
	if len(fresh.Trials) != 1 || fresh.Trials[0].Trial != 3 {
		t.Fatalf("after the extension, ask gave %+v, want trial 3", fresh)
	}
	c.must("POST", "/api/studies/v/ask", nil, nil, http.StatusConflict) // trial 1 is alive
}

// TestSecurity checks the list: a token off loopback, 401 for a
// wrong one, 413 for an oversized body, 400 for malformed JSON, study
// names that would leave the directory refused, no secret in answers.
func TestSecurity(t *testing.T) {
	t.Parallel()
	if err := serve.CheckAddr("0.0.0.0:8080", ""); err == nil {
		t.Error("0.0.0.0 without a token accepted")
	}
	if err := serve.CheckAddr("192.168.1.5:8080", ""); err == nil {
		t.Error("a LAN address without a token accepted")
	}
	for _, a := range []string{"127.0.0.1:8080", "[::1]:80", "localhost:1"} {
		if err := serve.CheckAddr(a, ""); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	if err := serve.CheckAddr("0.0.0.0:8080", "s3cret"); err != nil {
		t.Error(err)
	}

	dir := t.TempDir()
	studies := filepath.Join(dir, "studies")
	d, err := storage.OpenDir(studies)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	const password = "pa55w0rd-Zq"
	c, _ := newServer(t, serve.Options{Storage: d, Token: "tok-123", MaxBody: 4096, Secrets: []string{password},
		Describe: "postgres://bkb:***@db/x",
		Logf:     func(f string, a ...any) { logMu.Lock(); fmt.Fprintf(&logs, f+"\n", a...); logMu.Unlock() }})
	c.must("POST", "/api/studies", map[string]any{"name": "s", "config": testConfig(5)}, nil, http.StatusCreated)

	// Tokens.
	bad := *c
	bad.token = ""
	bad.must("GET", "/api/studies", nil, nil, http.StatusUnauthorized)
	bad.token = "tok-124"
	bad.must("GET", "/api/studies", nil, nil, http.StatusUnauthorized)
	bad.token = "Tok-123"
	bad.must("POST", "/api/studies/s/ask", nil, nil, http.StatusUnauthorized)
	c.must("GET", "/api/studies", nil, nil, http.StatusOK)
	bad.token = ""
	bad.must("GET", "/openapi.json", nil, nil, http.StatusOK) // no data in it

	// Bodies.
	c.must("POST", "/api/studies/s/ask", strings.Repeat(" ", 5000)+"{}", nil, http.StatusRequestEntityTooLarge)
	for _, body := range []string{`{`, `{"n": "two"}`, `{"n": 1} x`, `[]`, `{"unknown": 1}`, `nul`} {
		c.must("POST", "/api/studies/s/ask", body, nil, http.StatusBadRequest)
	}
	c.must("POST", "/api/studies/s/ask", `{"n": 100000}`, nil, http.StatusBadRequest)
	c.must("POST", "/api/studies/s/trials/0/tell", `{"value": 1, "failed": "x"}`, nil, http.StatusBadRequest)
	c.must("POST", "/api/studies/s/trials/-1/tell", `{"value": 1}`, nil, http.StatusBadRequest)
	c.must("POST", "/api/studies/s/trials/abc/tell", `{"value": 1}`, nil, http.StatusBadRequest)
	c.must("POST", "/api/studies/s/trials/99/tell", `{"value": 1}`, nil, http.StatusNotFound)

	// Names: nothing outside the directory is read, created or deleted.
	secret := filepath.Join(dir, "secret.jsonl")
	os.WriteFile(secret, []byte(`{"version":1}`+"\n"), 0o600)
	for _, n := range []string{"..%2Fsecret", "%2E%2E", "..", ".hidden", "a%5Cb", "%00", "-x"} {
		code, _ := c.do("GET", "/api/studies/"+n, nil, nil)
		if code != http.StatusBadRequest && code != http.StatusNotFound {
			t.Errorf("GET study %q: status %d, want 400 or 404", n, code)
		}
		code, _ = c.do("DELETE", "/api/studies/"+n, nil, nil)
		if code != http.StatusBadRequest && code != http.StatusNotFound {
			t.Errorf("DELETE study %q: status %d", n, code)
		}
	}
	for _, n := range []string{"../secret", "../../etc/x", "a/b", "..", ".x"} {
		c.must("POST", "/api/studies", map[string]any{"name": n, "config": testConfig(5)}, nil, http.StatusBadRequest)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("the file outside the directory is gone: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("files created outside the study directory: %v", ents)
	}

	// Host header: a loopback server without a token refuses other hosts
	// (DNS rebinding).
	open, _ := newServer(t, serve.Options{})
	req, _ := http.NewRequest("GET", open.base+"/api/studies", nil)
	req.Host = "evil.example:80"
	resp, err := open.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Host header: status %d, want 403", resp.StatusCode)
	}

	// Secrets: an error that carries the password is masked.
	leaky := &leakyStorage{Storage: storage.NewMemory(), secret: password}
	lc, _ := newServer(t, serve.Options{Storage: leaky, Secrets: []string{password},
		Logf: func(f string, a ...any) { logMu.Lock(); fmt.Fprintf(&logs, f+"\n", a...); logMu.Unlock() }})
	_, raw := lc.do("GET", "/api/studies", nil, nil)
	_, raw2 := lc.do("GET", "/api/studies/x", nil, nil)
	_, info := c.do("GET", "/api/info", nil, nil)
	logMu.Lock()
	all := raw + raw2 + info + logs.String()
	logMu.Unlock()
	if strings.Contains(all, password) {
		t.Fatalf("the password appears in an answer or log line:\n%s", all)
	}
	if !strings.Contains(raw, "***") {
		t.Fatalf("the leaky error was not passed on masked: %s", raw)
	}
}

// leakyStorage fails with an error carrying a secret, as a database
// driver might echo a connection string.
type leakyStorage struct {
	storage.Storage
	secret string
}

func (l *leakyStorage) ListStudies(context.Context) ([]storage.Header, error) {
	return nil, fmt.Errorf("connect postgres://bkb:%s@db/x: refused", l.secret)
}

func (l *leakyStorage) DeleteStudy(context.Context, string) error { return nil }

func (l *leakyStorage) Study(context.Context, string) (storage.Header, error) {
	return storage.Header{}, fmt.Errorf("connect postgres://bkb:%s@db/x: refused", l.secret)
}

// TestOpenAPI checks that the checked-in document is valid JSON and
// describes every API route the server answers.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(serve.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("serve.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		i := strings.Index(line, `m.HandleFunc("`)
		if i < 0 {
			continue
		}
		pat := strings.SplitN(line[i+len(`m.HandleFunc("`):], `"`, 2)[0]
		method, path, ok := strings.Cut(pat, " ")
		if !ok {
			continue // the /api/ fallback
		}
		n++
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("route %s %s is not in openapi.json", method, path)
		}
	}
	if n < 14 {
		t.Fatalf("found %d routes in serve.go", n)
	}
}

// TestOneJournal serves a single journal file: the list holds its study,
// which the API reaches by name; creating and deleting are refused.
func TestOneJournal(t *testing.T) {
	t.Parallel()
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newServer(t, serve.Options{Storage: d})
	c.must("POST", "/api/studies", map[string]any{"name": "solo", "config": testConfig(4)}, nil, http.StatusCreated)
	path, _ := d.JournalPath("solo")
	js, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := newServer(t, serve.Options{Storage: js})
	var list struct{ Studies []serve.Summary }
	one.must("GET", "/api/studies", nil, &list, 200)
	if len(list.Studies) != 1 || list.Studies[0].Name != "solo" || list.Studies[0].Budget != 4 {
		t.Fatalf("list %+v", list)
	}
	var a asked
	one.must("POST", "/api/studies/solo/ask", nil, &a, 200)
	one.must("POST", "/api/studies", map[string]any{"name": "other", "config": testConfig(4)}, nil, http.StatusNotImplemented)
	one.must("DELETE", "/api/studies/solo", nil, nil, http.StatusNotImplemented)
}

// panicky is a storage that panics, as a buggy driver might.
type panicky struct{ storage.Storage }

func (panicky) Study(context.Context, string) (storage.Header, error) { panic("driver bug") }

// TestPanic: a panic under a handler is a 500 with a JSON error and one
// log line, and the server keeps answering.
func TestPanic(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logs []string
	c, _ := newServer(t, serve.Options{Storage: panicky{storage.NewMemory()},
		Logf: func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() }})
	c.must("GET", "/api/studies/x", nil, nil, http.StatusInternalServerError)
	c.must("GET", "/api/info", nil, nil, http.StatusOK)
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 || !strings.Contains(logs[0], "driver bug") {
		t.Fatalf("log %q", logs)
	}
}
