// Package serve is the HTTP/JSON face of the study library: `bkb serve`.
// It lists, creates and deletes the studies of a storage, hands out
// trials (ask) and records their outcomes (tell) for clients in any
// language, keeps user attributes, extends budgets, serves its OpenAPI
// document at /openapi.json and a browser dashboard at /.
//
// Every change goes through the study package, so a client of the server
// has the guarantees of a worker: every trial number is handed out once,
// every tell is stored durably before the response, and a server killed
// with kill -9 loses nothing that was acknowledged. A client that asks a
// trial holds a lease on it, renewed by its heartbeats (and by the ask
// itself); when a lease runs out (the client vanished), the trial is
// stale and the next ask hands it out again at the same point (see
// study.Requeue). The ask answers each trial with its lease secret, which
// the trial's heartbeats, reports and tell must present (lease.go); a
// restarted server gives the trials of the one before a grace period from
// its start, in which their clients heartbeat it (leases.go, lease.go).
//
// Security: a server on a loopback address answers anyone on the machine
// (and checks the Host header, so that a web page cannot reach it by DNS
// rebinding); on any other address it requires a bearer token, compared
// in constant time. Requests that change state are refused when a browser
// says they come from another web origin, and bodies must be JSON
// (csrf.go). Configurations naming files or commands of the server's
// machine are refused unless Options.AllowServerFiles (serverfiles.go).
// Request bodies and reading times are bounded; malformed input is a 4xx
// answer with a JSON error; study names are checked with
// storage.CheckStudyName, so that none reaches outside a directory of
// journals; and the strings in Options.Secrets (a database password) are
// masked in every answer and log line. See docs/serve.md for what the
// server does not protect against.
package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// Defaults of Options.
const (
	DefaultMaxBody = 1 << 20
	DefaultGrace   = time.Minute
	// DefaultReadTimeout bounds the time to read a request, headers and
	// body: a client that sends its body slowly (or never) is cut off
	// before a shutdown gives up waiting for it.
	DefaultReadTimeout = 10 * time.Second
	// DefaultShutdownGrace is how long a shutdown waits for the requests
	// under way before it closes their connections.
	DefaultShutdownGrace = 15 * time.Second
	// MaxAsk bounds the number of trials one ask request hands out.
	MaxAsk = 256
	// MaxSeconds bounds the evaluation time a tell records (about 116
	// days): a larger one is a client's mistake, and sums of such times
	// (a study's total, a cost model) would overflow to +Inf.
	MaxSeconds = 1e7
)

// Options configure a Server.
type Options struct {
	// Storage holds the studies. Listing, creating and deleting studies
	// need a storage.Catalog; attributes a storage.Attributes.
	Storage storage.Storage
	// Describe names the storage for /api/info and logs (a URL without
	// its password).
	Describe string
	// Token, when not empty, is required of every API request as
	// "Authorization: Bearer TOKEN". Required off loopback (see Check).
	Token string
	// MaxBody bounds a request body in bytes (default DefaultMaxBody).
	MaxBody int64
	// Grace is how long a trial handed out may go without a heartbeat from
	// its client before it is handed out again (default DefaultGrace).
	Grace time.Duration
	// Secrets are strings masked ("***") in every answer and log line
	// (say ":PASSWORD@" for the password of a database URL).
	Secrets []string
	// Mask, when not nil, also masks every answer and log line (after
	// Secrets).
	Mask func(string) string
	// Logf receives log lines (default: none).
	Logf func(format string, args ...any)
	// Worker identifies this server in the trials it hands out (default
	// storage.NewWorkerID()). Its last part is marked as a server's
	// ("host:pid:serve-nonce"): the next server gives the clients of such
	// trials a grace period to heartbeat it, and hands out at once the
	// trials of a program that stopped.
	Worker string
	// Now is the clock of leases (default time.Now), for tests.
	Now func() time.Time
	// AllowOrigins are the web origins ("https://host:port") whose pages
	// may call the API (CORS); by default none: requests that change
	// state are refused when a browser says they come from another origin
	// (see csrf.go).
	AllowOrigins []string
	// ReadTimeout bounds the reading of a request (default
	// DefaultReadTimeout); ShutdownGrace how long Serve waits, once its
	// context ends, for the requests under way (default
	// DefaultShutdownGrace). A shutdown never waits longer: what is left
	// is closed, and Serve returns nil (every tell answered was stored).
	ReadTimeout, ShutdownGrace time.Duration
	// AllowServerFiles lets a configuration sent to POST /api/studies
	// name files and commands of the server's machine (csv arms, a plugin
	// objective); by default they are refused (see serverfiles.go).
	AllowServerFiles bool
}

// Server serves the API and the dashboard. Create it with New.
type Server struct {
	opt    Options
	leases *leased
	mux    *http.ServeMux
	token  [sha256.Size]byte
	// secrets are Options.Secrets, longest first.
	secrets []string
	// origins are Options.AllowOrigins, normalized.
	origins []string
	keyState

	mu      sync.Mutex
	studies map[string]*study.Study
	slices  map[string]sliceEntry // GP slices by study, parameter and points
}

// sliceEntry is a GP slice computed at a version of its study: a page
// polling a running study asks for it again at every completed trial,
// and an exact GP on a thousand trials takes a while.
type sliceEntry struct {
	version string
	slice   study.Slice
}

// New returns a server for opt.
func New(opt Options) (*Server, error) {
	if opt.Storage == nil {
		return nil, errors.New("serve: no storage")
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.Grace <= 0 {
		opt.Grace = DefaultGrace
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	if opt.Worker == "" {
		opt.Worker = storage.NewWorkerID()
	}
	opt.Worker = serverWorkerID(opt.Worker)
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = DefaultReadTimeout
	}
	if opt.ShutdownGrace <= 0 {
		opt.ShutdownGrace = DefaultShutdownGrace
	}
	origins, err := checkOrigins(opt.AllowOrigins)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, studies: map[string]*study.Study{}, slices: map[string]sliceEntry{}, origins: origins}
	s.keys = map[string][]byte{}
	s.leases = newLeased(opt.Storage, opt.Grace, opt.Now, opt.Worker)
	if opt.Token != "" {
		s.token = sha256.Sum256([]byte(opt.Token))
	}
	for _, sec := range opt.Secrets {
		if sec != "" {
			s.secrets = append(s.secrets, sec)
		}
	}
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
	s.routes()
	return s, nil
}

// Loopback reports whether the listening address addr (host:port) is on a
// loopback interface only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses to serve on a non-loopback address without a token.
func CheckAddr(addr, token string) error {
	if !Loopback(addr) && token == "" {
		return fmt.Errorf("serve: %s is not a loopback address: a token is required (--token-file) so that only your clients reach the studies", addr)
	}
	return nil
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting connections and waits (up to Options.ShutdownGrace) for the
// requests under way, so that every tell answered is stored; connections
// still open then are closed. Reading a request is bounded by
// Options.ReadTimeout (its headers by half of it), writing its answer by
// five minutes (an ask of a long study replays it first), and an idle
// connection is closed after a minute: no client, slow or gone, holds the
// server or its shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckAddr(ln.Addr().String(), s.opt.Token); err != nil {
		return err
	}
	hs := &http.Server{Handler: s,
		ReadHeaderTimeout: s.opt.ReadTimeout / 2,
		ReadTimeout:       s.opt.ReadTimeout,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       time.Minute,
		ErrorLog:          log.New(logWriter{s}, "", 0)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.opt.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.opt.Logf("shutdown: requests still under way after %v: their connections are closed", s.opt.ShutdownGrace)
		err = hs.Close()
	}
	if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	// The checkpoints get their own grace: a shutdown that waited out
	// slow requests has spent sctx's.
	cctx, ccancel := context.WithTimeout(context.Background(), s.opt.ShutdownGrace)
	defer ccancel()
	s.checkpoint(cctx)
	return err
}

// checkpoint saves a snapshot of every cached study that asked since its
// newest one (study.Checkpoint), so that a restarted server restores the
// studies instead of replaying their last asks.
func (s *Server) checkpoint(ctx context.Context) {
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.studies))
	studies := make([]*study.Study, len(names))
	for i, n := range names {
		studies[i] = s.studies[n]
	}
	s.mu.Unlock()
	for i, st := range studies {
		if err := st.Checkpoint(ctx); err != nil {
			s.opt.Logf("shutdown: study %s: snapshot not saved: %v (a restart replays its last asks)", names[i], s.mask(err.Error()))
		}
	}
}

// logWriter passes the http.Server's own messages (a TLS handshake, a
// malformed request) to Options.Logf, masked.
type logWriter struct{ s *Server }

func (l logWriter) Write(p []byte) (int, error) {
	l.s.opt.Logf("%s", l.s.mask(strings.TrimSpace(string(p))))
	return len(p), nil
}

// ServeHTTP implements http.Handler. A panic in a handler is answered
// with a 500 and one masked log line, never a crash or a stack on stderr.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.opt.Logf("%s %s: internal error: %s", r.Method, r.URL.Path, s.mask(fmt.Sprint(v)))
			s.fail(w, http.StatusInternalServerError, "internal error (see the server's log)")
		}
	}()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if s.opt.Token == "" && !loopbackHost(r.Host) {
		s.fail(w, http.StatusForbidden, "the Host header %q is not a loopback name: without a token this server answers only localhost", r.Host)
		return
	}
	if s.crossSite(w, r) {
		return
	}
	if s.opt.Token != "" && needsToken(r.URL.Path) {
		auth := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		got := sha256.Sum256([]byte(tok))
		if !ok || subtle.ConstantTimeCompare(got[:], s.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="bkb"`)
			s.fail(w, http.StatusUnauthorized, "missing or wrong token (send Authorization: Bearer TOKEN)")
			return
		}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
	}
	s.mux.ServeHTTP(w, r)
}

// needsToken reports whether path serves study data (the dashboard's
// static files do not).
func needsToken(path string) bool {
	return strings.HasPrefix(path, "/api/")
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var errConflict = errors.New("conflict")

// routes registers the API.
func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/info", s.info)
	m.HandleFunc("GET /api/studies", s.listStudies)
	m.HandleFunc("POST /api/studies", s.createStudy)
	m.HandleFunc("GET /api/studies/{name}", s.getStudy)
	m.HandleFunc("DELETE /api/studies/{name}", s.deleteStudy)
	m.HandleFunc("POST /api/studies/{name}/ask", s.ask)
	m.HandleFunc("GET /api/studies/{name}/trials", s.trials)
	m.HandleFunc("GET /api/studies/{name}/trials/{trial}", s.oneTrial)
	m.HandleFunc("GET /api/studies/{name}/best", s.best)
	m.HandleFunc("POST /api/studies/{name}/trials/{trial}/tell", s.tell)
	m.HandleFunc("POST /api/studies/{name}/trials/{trial}/heartbeat", s.heartbeat)
	m.HandleFunc("POST /api/studies/{name}/trials/{trial}/report", s.report)
	m.HandleFunc("GET /api/studies/{name}/trials/{trial}/should-prune", s.shouldPrune)
	m.HandleFunc("PUT /api/studies/{name}/attrs", s.setAttr)
	m.HandleFunc("POST /api/studies/{name}/budget", s.extend)
	m.HandleFunc("GET /api/studies/{name}/predict", s.predict)
	m.HandleFunc("GET /openapi.json", s.openapi)
	m.HandleFunc(apiFallback, s.noRoute)
	s.dashboardRoutes(m)
	s.mux = m
}

// load returns the study name, loaded once and kept; refresh reads what
// other processes stored since.
func (s *Server) load(ctx context.Context, name string, refresh bool) (*study.Study, error) {
	s.mu.Lock()
	st, ok := s.studies[name]
	s.mu.Unlock()
	var budget int
	if !ok || refresh {
		var err error
		if budget, err = s.storedBudget(ctx, name); err != nil {
			return nil, err
		}
	}
	if ok && refresh && budget > 0 && budget != st.Config().Budget {
		// Extended since it was loaded (by another server on the same
		// storage): the budget in force is the stored one.
		s.forget(name, false)
		ok = false
	}
	if ok {
		if refresh {
			if err := st.Refresh(ctx); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	st, err := study.Load(ctx, s.leases, name, study.Options{Worker: s.opt.Worker, Budget: budget})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.studies[name]; ok {
		return old, nil
	}
	s.studies[name] = st
	return st, nil
}

// forget drops a cached study (deleted, or its budget changed); with
// leases, the leases of its trials too (deleted).
func (s *Server) forget(name string, leases bool) {
	s.mu.Lock()
	delete(s.studies, name)
	for k := range s.slices {
		if strings.HasPrefix(k, name+"\x00") {
			delete(s.slices, k)
		}
	}
	if leases {
		delete(s.keys, name) // a study made again under the name gets a new key
	}
	s.mu.Unlock()
	if leases {
		s.leases.forget(name)
	}
}

// reportPrefix starts the keys of a trial's intermediate values.
const reportPrefix = "bkb.intermediate."
