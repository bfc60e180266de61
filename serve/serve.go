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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
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
	// storage.NewWorkerID()).
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
	return err
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

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
	// Code is a machine-readable kind: "complete" when the budget is used
	// up, else empty.
	Code    string `json:"code,omitempty"`
	Pending int    `json:"pending,omitempty"`
}

// mask hides the secrets in a message, the longest first (so that an
// escaped form is replaced whole).
func (s *Server) mask(msg string) string {
	for _, sec := range s.secrets {
		msg = strings.ReplaceAll(msg, sec, "***")
	}
	if s.opt.Mask != nil {
		msg = s.opt.Mask(msg)
	}
	return msg
}

func (s *Server) fail(w http.ResponseWriter, code int, format string, args ...any) {
	s.reply(w, code, apiError{Error: fmt.Sprintf(format, args...)})
}

// reply writes v as JSON, with the secrets masked.
func (s *Server) reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`)
	}
	if len(s.secrets) > 0 || s.opt.Mask != nil {
		b = []byte(s.mask(string(b)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b)
	w.Write([]byte{'\n'})
}

// replyErr maps a library error to a status.
func (s *Server) replyErr(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var mbe *http.MaxBytesError
	body := apiError{Error: err.Error()}
	switch {
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
		body.Error = fmt.Sprintf("request body larger than %d bytes", mbe.Limit)
	case errors.As(err, new(badRequest)):
		code = http.StatusBadRequest
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, study.ErrNoTrial):
		code = http.StatusNotFound
	case errors.Is(err, storage.ErrExists):
		code = http.StatusConflict
	case errors.Is(err, study.ErrComplete):
		code, body.Code = http.StatusConflict, "complete"
	case errors.Is(err, study.ErrValueRange):
		code = http.StatusBadRequest
	case errors.Is(err, errConflict), errors.Is(err, study.ErrNotPending):
		code = http.StatusConflict
	case r.Context().Err() != nil:
		code = 499
	}
	if code >= 500 {
		s.opt.Logf("%s %s: %s", r.Method, r.URL.Path, s.mask(err.Error()))
	}
	s.reply(w, code, body)
}

// badRequest marks a client's mistake.
type badRequest struct{ error }

func badf(format string, args ...any) error { return badRequest{fmt.Errorf(format, args...)} }

var errConflict = errors.New("conflict")

// decode reads a JSON body into v: unknown fields and trailing data are
// errors, and an empty body is an empty object.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badf("malformed JSON body: %v", err)
	}
	if dec.More() {
		return badf("malformed JSON body: data after the JSON value")
	}
	return nil
}

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

// name returns the checked study name of a request.
func name(r *http.Request) (string, error) {
	n := r.PathValue("name")
	if err := storage.CheckStudyName(n); err != nil {
		return "", badRequest{err}
	}
	return n, nil
}

// trialNumber returns the trial number of a request.
func trialNumber(r *http.Request) (int, error) {
	t, err := strconv.Atoi(r.PathValue("trial"))
	if err != nil || t < 0 {
		return 0, badf("trial %q: want a trial number >= 0", r.PathValue("trial"))
	}
	return t, nil
}

// nameAndTrial returns the checked study name and the trial number of a
// request on one trial.
func nameAndTrial(r *http.Request) (string, int, error) {
	n, err := name(r)
	if err != nil {
		return "", 0, err
	}
	t, err := trialNumber(r)
	return n, t, err
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

// budgetKey is the study attribute that holds an extended budget.
const budgetKey = study.BudgetAttr

// reportPrefix starts the keys of a trial's intermediate values.
const reportPrefix = "bkb.intermediate."

// storedBudget returns the extended budget of a study, 0 if none.
func (s *Server) storedBudget(ctx context.Context, name string) (int, error) {
	return StoredBudget(ctx, s.opt.Storage, name)
}

// StoredBudget returns the budget a study was extended to (POST
// /api/studies/{name}/budget, or study.Study.Extend through any door): see
// study.StoredBudget. study.Load puts it in force itself.
func StoredBudget(ctx context.Context, st storage.Storage, name string) (int, error) {
	return study.StoredBudget(ctx, st, name)
}

// Info is the answer of GET /api/info.
type Info struct {
	Storage    string  `json:"storage"`
	Catalog    bool    `json:"catalog"`
	Attributes bool    `json:"attributes"`
	Grace      float64 `json:"heartbeat_grace_seconds"`
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	_, cat := storage.As[storage.Catalog](s.opt.Storage)
	_, at := storage.As[storage.Attributes](s.opt.Storage)
	s.reply(w, http.StatusOK, Info{Storage: s.opt.Describe, Catalog: cat, Attributes: at, Grace: s.opt.Grace.Seconds()})
}

// Summary describes a study.
type Summary struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Direction is the direction of the first objective; Directions
	// has every objective's (one entry for a study of one objective).
	Direction   study.Direction   `json:"direction"`
	Directions  []study.Direction `json:"directions"`
	Constraints int               `json:"constraints,omitempty"`
	// ParetoFront holds the numbers of the trials on the Pareto front of
	// the complete feasible trials, and Hypervolume its hypervolume
	// against Reference (see study.DefaultReference), for a study of
	// several objectives with a feasible complete trial.
	ParetoFront []int          `json:"pareto_front,omitempty"`
	Hypervolume *float64       `json:"hypervolume,omitempty"`
	Reference   []float64      `json:"reference_point,omitempty"`
	Policy      string         `json:"policy"`
	Budget      int            `json:"budget"`
	Counts      map[string]int `json:"counts"`
	Best        *TrialJSON     `json:"best,omitempty"`
	// Version changes whenever the study does (its number of trials and
	// completed trials): the dashboard refetches trials when it changes.
	Version string       `json:"version"`
	Error   string       `json:"error,omitempty"` // a study that cannot be loaded
	Space   *study.Space `json:"space,omitempty"`
	Attrs   []AttrJSON   `json:"attrs,omitempty"`
	// Importance is each parameter's share of the fitted GP's ARD
	// relevance (see importance); absent before the first fit.
	Importance map[string]float64 `json:"importance,omitempty"`
	// Config is the stored configuration (GET of one study only).
	Config *study.Config `json:"config,omitempty"`
}

// TrialJSON is a trial as the API shows it.
type TrialJSON struct {
	Number int            `json:"trial"`
	State  study.State    `json:"state"`
	Params map[string]any `json:"params"`
	Value  *float64       `json:"value,omitempty"`
	// Values are every objective's values (several objectives),
	// Constraints the constraint values (feasible when all are <= 0) of
	// a complete trial; Infeasible marks one with a constraint value > 0.
	Values      []float64 `json:"values,omitempty"`
	Constraints []float64 `json:"constraints,omitempty"`
	Infeasible  bool      `json:"infeasible,omitempty"`
	// Error is a failed trial's message.
	Error   string         `json:"error,omitempty"`
	Seconds float64        `json:"seconds,omitempty"`
	Time    time.Time      `json:"time"`
	Attrs   map[string]any `json:"attrs,omitempty"`
	// Intermediate holds the reported values by step.
	Intermediate map[string]float64 `json:"intermediate,omitempty"`
}

// AttrJSON is an attribute as the API shows it.
type AttrJSON struct {
	Trial int             `json:"trial"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	Time  time.Time       `json:"time"`
}

func trialJSON(t study.TrialResult) TrialJSON {
	out := TrialJSON{Number: t.Number, State: t.State, Params: t.Params, Error: t.Error, Seconds: t.Seconds, Time: t.Time}
	if t.State == study.Complete && !math.IsNaN(t.Value) {
		v := t.Value
		out.Value = &v
		out.Values, out.Constraints, out.Infeasible = t.Values, t.Constraints, t.Infeasible
	}
	for _, sv := range t.Intermediate {
		if out.Intermediate == nil {
			out.Intermediate = map[string]float64{}
		}
		out.Intermediate[strconv.Itoa(sv.Step)] = sv.Value
	}
	return out
}

// summary describes st; full adds the space, attributes, importance and
// configuration.
func (s *Server) summary(ctx context.Context, st *study.Study, full bool) Summary {
	cfg := st.Config()
	sum := Summary{Name: st.Name(), Created: st.Header().Created, Direction: cfg.Direction, Policy: cfg.Policy, Budget: cfg.Budget,
		Counts: map[string]int{}, Directions: cfg.ObjectiveDirections(), Constraints: cfg.Constraints}
	trials := st.Trials()
	done := 0
	for _, t := range trials {
		sum.Counts[string(t.State)]++
		if t.State == study.Complete || t.State == study.Failed || t.State == study.Pruned {
			done++
		}
	}
	sum.Version = fmt.Sprintf("%d.%d", len(trials), done)
	if b, ok := st.Best(); ok {
		tj := trialJSON(b)
		sum.Best = &tj
	}
	setFront(&sum, cfg, trials)
	if full {
		sum.Space = &cfg.Space
		sum.Config = &cfg
		if at, ok := storage.As[storage.Attributes](s.opt.Storage); ok {
			if attrs, err := at.Attrs(ctx, st.Name()); err == nil {
				for _, a := range attrs {
					if a.Trial == -1 && !strings.HasPrefix(a.Key, hiddenAttrPrefix) {
						sum.Attrs = append(sum.Attrs, AttrJSON(a))
					}
				}
			}
		}
		sum.Importance = importance(cfg.Space, st.Info().Fits)
	}
	return sum
}

// importance is each parameter's share of the ARD relevance of the last
// hyperparameter fit: with length scales l_j on the encoded unit box, a
// coordinate's relevance is 1/l_j^2 (the curvature of the kernel along
// it, the squared scaled distance across the parameter's whole range: a
// short length scale means the objective changes fast along that
// parameter; Rasmussen and Williams 2006, section 5.1). A categorical's
// relevance is that of switching between two of its choices, which moves
// two one-hot coordinates: 1/l_a^2 + 1/l_b^2 averaged over the pairs,
// that is (2/k) times the sum over its k coordinates. The shares sum to
// 1; nil without an ARD fit. It measures how fast the objective changes,
// not by how much: a categorical whose choices the GP finds uncorrelated
// weighs much even if their values differ little.
func importance(sp study.Space, fits []study.FitResult) map[string]float64 {
	if len(fits) == 0 {
		return nil
	}
	ls := fits[len(fits)-1].LengthScales
	if len(ls) != sp.EncodedDim() {
		return nil
	}
	out := map[string]float64{}
	total := 0.0
	j := 0
	for _, p := range sp.Params {
		w := 1
		if p.Type == study.TypeCategorical {
			w = len(p.Choices)
		}
		r := 0.0
		for k := 0; k < w; k++ {
			r += 1 / (ls[j+k] * ls[j+k])
		}
		if w > 1 {
			r *= 2 / float64(w)
		}
		j += w
		out[p.Name] = r
		total += r
	}
	if total <= 0 || math.IsNaN(total) || math.IsInf(total, 0) {
		return nil
	}
	for k := range out {
		out[k] /= total
	}
	return out
}

func (s *Server) catalog(w http.ResponseWriter) (storage.Catalog, bool) {
	cat, ok := storage.As[storage.Catalog](s.opt.Storage)
	if !ok {
		s.fail(w, http.StatusNotImplemented, "this storage holds one study: it cannot list, create or delete studies (serve a directory with --dir, or PostgreSQL)")
	}
	return cat, ok
}

func (s *Server) listStudies(w http.ResponseWriter, r *http.Request) {
	var hs []storage.Header
	var err error
	if cat, ok := storage.As[storage.Catalog](s.opt.Storage); ok {
		hs, err = cat.ListStudies(r.Context())
	} else {
		// A storage of one study (a journal file): that study.
		var h storage.Header
		if h, err = s.opt.Storage.Study(r.Context(), ""); err == nil {
			hs = []storage.Header{h}
		}
	}
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	out := make([]Summary, 0, len(hs))
	for _, h := range hs {
		if storage.CheckStudyName(h.Name) != nil {
			out = append(out, Summary{Name: h.Name, Created: h.Created, Error: "a name the API cannot address (letters, digits, '.', '_' and '-' only)"})
			continue
		}
		st, err := s.load(r.Context(), h.Name, true)
		if err != nil {
			out = append(out, Summary{Name: h.Name, Created: h.Created, Error: s.mask(err.Error())})
			continue
		}
		out = append(out, s.summary(r.Context(), st, false))
	}
	s.reply(w, http.StatusOK, map[string]any{"studies": out})
}

// CreateRequest is the body of POST /api/studies.
type CreateRequest struct {
	Name string `json:"name"`
	// Config is the new study's configuration; without a "version" it
	// is of study.CurrentVersion (study.Config's decoding leaves a
	// missing version to Normalize; only a stored one is version 1).
	Config study.Config `json:"config"`
}

func (s *Server) createStudy(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.catalog(w); !ok {
		return
	}
	var req CreateRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	if err := storage.CheckStudyName(req.Name); err != nil {
		s.replyErr(w, r, badRequest{err})
		return
	}
	if !s.opt.AllowServerFiles {
		if err := serverFiles(&req.Config); err != nil {
			s.replyErr(w, r, err)
			return
		}
	}
	st, err := study.Create(r.Context(), s.leases, req.Name, req.Config, study.Options{Worker: s.opt.Worker})
	if err != nil {
		if !errors.Is(err, storage.ErrExists) && r.Context().Err() == nil {
			err = badRequest{err} // the configuration
		}
		s.replyErr(w, r, err)
		return
	}
	s.mu.Lock()
	s.studies[req.Name] = st
	s.mu.Unlock()
	s.reply(w, http.StatusCreated, s.summary(r.Context(), st, true))
}

func (s *Server) getStudy(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, s.summary(r.Context(), st, true))
}

func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) {
	cat, ok := s.catalog(w)
	if !ok {
		return
	}
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	if err := cat.DeleteStudy(r.Context(), n); err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.forget(n, true)
	s.reply(w, http.StatusOK, map[string]string{"deleted": n})
}

// AskRequest is the body of POST /api/studies/{name}/ask.
type AskRequest struct {
	// N is the number of trials to hand out (default 1 when absent, at
	// most MaxAsk; 0 is an error, not a trial).
	N *int `json:"n"`
}

// Asked is one trial handed out.
type Asked struct {
	Number int            `json:"trial"`
	Params map[string]any `json:"params"`
	X      []float64      `json:"x"`
	// Lease is the trial's secret: its heartbeats, reports and tell must
	// present it (header X-BKB-Lease or their "lease" field; lease.go).
	Lease string `json:"lease"`
}

// AskResponse is the answer of an ask: fewer trials than asked for when
// the budget runs out.
type AskResponse struct {
	Trials []Asked `json:"trials"`
	// HeartbeatSeconds is how often the client should heartbeat a trial
	// it evaluates (a third of the grace).
	HeartbeatSeconds float64 `json:"heartbeat_seconds"`
}

func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req AskRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	want := 1
	if req.N != nil {
		want = *req.N
	}
	if want < 1 || want > MaxAsk {
		s.replyErr(w, r, badf("n = %d: want 1 to %d trials", want, MaxAsk))
		return
	}
	st, err := s.load(r.Context(), n, false)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	key, err := s.studyKey(r.Context(), n)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	// Trials whose client stopped heartbeating: the study handed them out
	// through this server, so it must be told they are abandoned before
	// it hands them out again.
	for _, t := range s.leases.expired(n) {
		st.Release(t)
	}
	resp := AskResponse{Trials: []Asked{}, HeartbeatSeconds: s.opt.Grace.Seconds() / 3}
	for range want {
		t, err := st.Ask(r.Context())
		if err != nil {
			if len(resp.Trials) > 0 && errors.Is(err, study.ErrComplete) {
				break
			}
			if errors.Is(err, study.ErrComplete) {
				s.reply(w, http.StatusConflict, apiError{Error: s.mask(err.Error()), Code: "complete", Pending: countState(st, study.Pending)})
				return
			}
			s.replyErr(w, r, err)
			return
		}
		s.leases.renew(n, t.Number)
		resp.Trials = append(resp.Trials, Asked{Number: t.Number, Params: t.Params, X: t.X})
	}
	asked := map[int]time.Time{}
	for _, t := range st.Trials() {
		asked[t.Number] = t.Time
	}
	for i := range resp.Trials {
		resp.Trials[i].Lease = leaseOf(key, n, resp.Trials[i].Number, asked[resp.Trials[i].Number])
	}
	s.reply(w, http.StatusOK, resp)
}

func countState(st *study.Study, state study.State) int {
	n := 0
	for _, t := range st.Trials() {
		if t.State == state {
			n++
		}
	}
	return n
}

// TellRequest is the body of a tell: a value, or a failure.
type TellRequest struct {
	Value *float64 `json:"value"`
	// Failed, when not empty, records the trial as failed with this reason.
	Failed string `json:"failed"`
	// Seconds is the evaluation time (default: since the ask).
	Seconds float64 `json:"seconds"`
	// Values are every objective's values, instead of Value, for a study
	// with several objectives.
	Values []float64 `json:"values,omitempty"`
	// Constraints are the constraint values of a constrained study
	// (feasible when every one is <= 0).
	Constraints []float64 `json:"constraints,omitempty"`
	// Pruned records the trial as pruned (stopped early, as a report's
	// "prune" said) instead of a value or a failure.
	Pruned bool `json:"pruned,omitempty"`
	// Lease is the trial's lease from the ask (or send the X-BKB-Lease
	// header), required while the trial is pending.
	Lease string `json:"lease,omitempty"`
}

func (s *Server) tell(w http.ResponseWriter, r *http.Request) {
	n, trial, err := nameAndTrial(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req TellRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	given := 0
	for _, b := range []bool{req.Value != nil, req.Values != nil, req.Failed != "", req.Pruned} {
		if b {
			given++
		}
	}
	if given != 1 {
		s.replyErr(w, r, badf(`want exactly one of "value", "values", "failed" and "pruned"`))
		return
	}
	if !(req.Seconds >= 0) || req.Seconds > MaxSeconds {
		s.replyErr(w, r, badf("seconds = %v: want a finite time >= 0 and at most %g", req.Seconds, float64(MaxSeconds)))
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	// A pending trial takes its outcome from its lease holder only; a
	// completed one answers a retry (accepted if the same) or a conflict,
	// and changes nothing.
	if t, ok := trialResult(st, trial); ok && t.State == study.Pending && !s.checkLease(r.Context(), w, r, n, t, givenLease(r, req.Lease)) {
		return
	}
	o := study.Outcome{Failed: req.Failed, Seconds: req.Seconds, Values: req.Values, Constraints: req.Constraints}
	if req.Value != nil {
		o.Value = *req.Value
	}
	tell := func() error { return st.TellOutcome(r.Context(), trial, o) }
	if req.Pruned {
		tell = func() error { return st.Prune(r.Context(), trial) }
	}
	if err := tell(); err != nil {
		if !errors.Is(err, study.ErrNoTrial) && !errors.Is(err, study.ErrValueRange) && r.Context().Err() == nil && strings.Contains(err.Error(), "already") {
			err = fmt.Errorf("%w: %v", errConflict, err)
		} else if errors.Is(err, study.ErrOutcome) || strings.Contains(err.Error(), "not finite") || strings.Contains(err.Error(), "never asked") {
			err = badRequest{err}
		}
		s.replyErr(w, r, err)
		return
	}
	s.leases.drop(n, trial)
	t, _ := trialOf(st, trial)
	s.reply(w, http.StatusOK, t)
}

func trialOf(st *study.Study, trial int) (TrialJSON, bool) {
	for _, t := range st.Trials() {
		if t.Number == trial {
			return trialJSON(t), true
		}
	}
	return TrialJSON{}, false
}

// HeartbeatRequest is the optional body of a heartbeat.
type HeartbeatRequest struct {
	// Lease is the trial's lease from the ask (or send the X-BKB-Lease
	// header).
	Lease string `json:"lease,omitempty"`
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	n, trial, err := nameAndTrial(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req HeartbeatRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	// The study as this server last saw it: a heartbeat is frequent and
	// must be quick. If the trial is not pending there with this lease,
	// another process may have changed it since: read what is new.
	st, err := s.load(r.Context(), n, false)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	t, ok := trialResult(st, trial)
	if valid, err := s.leaseValid(r.Context(), n, t, givenLease(r, req.Lease)); !ok || t.State != study.Pending || !valid || err != nil {
		if err := st.Refresh(r.Context()); err != nil {
			s.replyErr(w, r, err)
			return
		}
		t, ok = trialResult(st, trial)
	}
	if !ok {
		s.replyErr(w, r, fmt.Errorf("study %s has no trial %d: %w", n, trial, study.ErrNoTrial))
		return
	}
	if t.State != study.Pending {
		s.reply(w, http.StatusConflict, apiError{Error: fmt.Sprintf("trial %d is %s, not pending", trial, t.State)})
		return
	}
	if !s.checkLease(r.Context(), w, r, n, t, givenLease(r, req.Lease)) {
		return
	}
	s.leases.renew(n, trial)
	if err := s.opt.Storage.Heartbeat(r.Context(), n, []int{trial}); err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"trial": trial, "state": t.State})
}

// ReportRequest is the body of a report: an intermediate value.
type ReportRequest struct {
	Step  int      `json:"step"`
	Value *float64 `json:"value"`
	// Lease is the trial's lease from the ask (or send the X-BKB-Lease
	// header).
	Lease string `json:"lease,omitempty"`
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	n, trial, err := nameAndTrial(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req ReportRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	if req.Value == nil || math.IsNaN(*req.Value) || math.IsInf(*req.Value, 0) || req.Step < 0 {
		s.replyErr(w, r, badf(`a report needs "step" >= 0 and a finite "value"`))
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	if t, ok := trialResult(st, trial); ok && t.State == study.Pending && !s.checkLease(r.Context(), w, r, n, t, givenLease(r, req.Lease)) {
		return
	}
	// A durable report record; the study's pruner decides from the
	// stored values whether the trial should stop.
	prune, err := st.Report(r.Context(), trial, req.Step, *req.Value)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.leases.renew(n, trial)
	s.reply(w, http.StatusOK, map[string]any{"trial": trial, "step": req.Step, "prune": prune})
}

func (s *Server) trials(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	out, err := s.trialList(r.Context(), st, -1)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"trials": out})
}

func (s *Server) best(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	b, ok := st.Best()
	if !ok {
		s.fail(w, http.StatusNotFound, "study %s has no complete trial yet", n)
		return
	}
	s.reply(w, http.StatusOK, trialJSON(b))
}

// AttrRequest is the body of PUT /api/studies/{name}/attrs.
type AttrRequest struct {
	// Trial is the trial number, or -1 (the default when absent) for the
	// study.
	Trial *int            `json:"trial"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

func (s *Server) setAttr(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req AttrRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	if strings.HasPrefix(req.Key, "bkb.") {
		s.replyErr(w, r, badf("attribute key %q: keys starting with \"bkb.\" are the toolkit's", req.Key))
		return
	}
	a := storage.Attr{Trial: -1, Key: req.Key, Value: req.Value}
	if req.Trial != nil {
		a.Trial = *req.Trial
	}
	if err := storage.CheckAttr(a); err != nil {
		s.replyErr(w, r, badRequest{err})
		return
	}
	at, ok := storage.As[storage.Attributes](s.opt.Storage)
	if !ok {
		s.fail(w, http.StatusNotImplemented, "this storage keeps no attributes")
		return
	}
	if a.Trial >= 0 {
		st, err := s.load(r.Context(), n, true)
		if err != nil {
			s.replyErr(w, r, err)
			return
		}
		if _, ok := trialOf(st, a.Trial); !ok {
			s.replyErr(w, r, fmt.Errorf("study %s has no trial %d: %w", n, a.Trial, study.ErrNoTrial))
			return
		}
	}
	if err := at.SetAttr(r.Context(), n, a); err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, AttrJSON{Trial: a.Trial, Key: a.Key, Value: a.Value})
}

// BudgetRequest is the body of POST /api/studies/{name}/budget.
type BudgetRequest struct {
	Budget int `json:"budget"`
}

func (s *Server) extend(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	var req BudgetRequest
	if err := decode(r, &req); err != nil {
		s.replyErr(w, r, err)
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	trials := len(st.Trials())
	if req.Budget < max(trials, 1) {
		s.replyErr(w, r, badf("budget %d: want at least the %d trials the study has (and at least 1)", req.Budget, trials))
		return
	}
	at, ok := storage.As[storage.Attributes](s.opt.Storage)
	if !ok {
		s.fail(w, http.StatusNotImplemented, "this storage keeps no attributes, where an extended budget is kept")
		return
	}
	v, _ := json.Marshal(req.Budget)
	if err := at.SetAttr(r.Context(), n, storage.Attr{Trial: -1, Key: budgetKey, Value: v}); err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.forget(n, false) // the trials handed out keep their leases
	st, err = s.load(r.Context(), n, false)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, s.summary(r.Context(), st, false))
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	n, err := name(r)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	st, err := s.load(r.Context(), n, true)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	param := r.URL.Query().Get("param")
	points := 64
	if p := r.URL.Query().Get("points"); p != "" {
		if points, err = strconv.Atoi(p); err != nil || points < 2 || points > 1024 {
			s.replyErr(w, r, badf("points=%q: want 2 to 1024", p))
			return
		}
	}
	version := s.summary(r.Context(), st, false).Version
	key := fmt.Sprintf("%s\x00%s\x00%d", n, param, points)
	s.mu.Lock()
	e, ok := s.slices[key]
	s.mu.Unlock()
	if ok && e.version == version {
		s.reply(w, http.StatusOK, e.slice)
		return
	}
	sl, err := slice(st, param, points)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.mu.Lock()
	s.slices[key] = sliceEntry{version, sl}
	s.mu.Unlock()
	s.reply(w, http.StatusOK, sl)
}

func isNoTrial(err error) bool { return errors.Is(err, study.ErrNoTrial) }
