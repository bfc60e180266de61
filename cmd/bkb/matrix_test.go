package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/study"
)

// The door matrix: one invariant over every way a study is reached. A
// study (a policy, one or several objectives, constraints or a pruner, a
// continuous, mixed, conditional or discrete space, or a fixed arm set) is run in two phases, each through a door
// (the command line's ask/tell, the Go library, HTTP, the Python client,
// bkb worker), on a storage (journal, directory, memory, PostgreSQL), with
// an interruption between them (a restart, a crash that leaves a trial
// pending, a budget extension, the snapshot missing, damaged or stale, a
// copy to another storage). The trials asked must be those of the
// uninterrupted command-line run, bit for bit, every trial evaluated once.
//
// go test -short -run TestDoorMatrix ./cmd/bkb runs matrixShort
// combinations drawn from BKB_MATRIX_SEED (default 1); without -short,
// matrixFull. BKB_MATRIX_N overrides the count; BKB_MATRIX_KIND=K draws
// combinations of kind K only, BKB_MATRIX_SPACE=S of space S only (a new
// kind's or space's sweep).
const (
	matrixShort = 14
	matrixFull  = 80
	// matrixB0 and matrixB1 are the budget at creation and after an
	// extension; matrixK the trials of the first phase. Local steps start
	// at a third of the budget (and at least (d+1)(d+2) = 12 points for
	// d = 2): B0 = 45 starts them at 15; had the extension's budget been
	// read, at 30.
	matrixB0 = 45
	matrixB1 = 60
	matrixK  = 20
)

// scenario is one combination of the matrix.
type scenario struct {
	Policy    string // bkb, gp-ucb, bbkb, random
	Kind      string // single, multi, constrained, pruned, costly
	Space     string // continuous, mixed, conditional, discrete, arms
	DoorA     string // the first phase's door: cli, go, http, python
	DoorB     string // the second phase's: cli, go, http, python, worker
	Store     string // journal, dir, memory, postgres
	Interrupt string // none, restart, crash, extend, snapmissing, snapdamaged, snapstale, copy
}

func (s scenario) String() string {
	return strings.Join([]string{s.Policy, s.Kind, s.Space, s.DoorA + ">" + s.DoorB, s.Store, s.Interrupt}, "/")
}

var (
	matrixPolicies   = []string{"bkb", "gp-ucb", "bbkb", "random"}
	matrixKinds      = []string{"single", "multi", "constrained", "pruned", "costly"}
	matrixSpaces     = []string{"continuous", "mixed", "conditional", "discrete", "arms"}
	matrixDoors      = []string{"cli", "go", "http", "python", "worker"}
	matrixStores     = []string{"journal", "dir", "memory", "postgres"}
	matrixInterrupts = []string{"none", "restart", "crash", "extend", "snapmissing", "snapdamaged", "snapstale", "copy"}
)

// valid reports why a combination cannot be run, "" when it can.
func (s scenario) valid(havePython, havePG bool) string {
	switch {
	case s.DoorA == "worker":
		return "bkb worker runs a study to its budget: a second phase only"
	case s.Store == "postgres" && !havePG:
		return "BKB_POSTGRES_URL not set"
	case (s.DoorA == "python" || s.DoorB == "python") && !havePython:
		return "no python3"
	case s.Store == "memory" && (s.DoorA == "cli" || s.DoorB == "cli" || s.DoorB == "worker" || s.DoorA == "python" || s.DoorB == "python"):
		return "a memory storage lives in one process: the Go library and HTTP only"
	case s.Store == "memory" && (strings.HasPrefix(s.Interrupt, "snap") || s.Interrupt == "crash" || s.Interrupt == "copy"):
		return "a memory storage keeps no snapshot and finds no stopped worker"
	case s.Store == "postgres" && s.Interrupt == "crash" && s.DoorB != "go":
		return "a crashed trial on PostgreSQL is stale after the heartbeat grace: the Go library's handle sets a short one"
	case s.Kind == "pruned" && (s.DoorB == "worker"):
		return "a plugin's prune request races its reply: pruned studies through the library, HTTP, Python and ask/tell"
	case (s.Kind == "multi" || s.Kind == "constrained") && (s.DoorA == "python" || s.DoorB == "python") && !pythonTellsValues():
		return "the Python client tells one value"
	case (s.Kind == "multi" || s.Kind == "constrained") && s.Policy != "bkb" && s.Policy != "random":
		return "constraints and several objectives are modelled by bkb (or random search)"
	case (s.DoorA == "http" || s.DoorA == "python") && s.Store == "journal":
		return "a server on one journal file cannot create a study (create it with the command line)"
	case s.Kind == "costly" && s.Policy != "bkb" && s.Policy != "gp-ucb":
		return "cost-aware asks are bkb's and gp-ucb's"
	case s.Space == "arms" && (s.Kind == "multi" || s.Kind == "constrained") && s.Policy != "random":
		return "constraints and several objectives are modelled on growing candidates (or by random search), not on a fixed arm set"
	case s.Space == "arms" && s.Kind == "costly":
		return "cost-aware asks weigh growing candidates, not a fixed arm set"
	case s.Kind == "costly" && s.DoorB == "worker":
		return "bkb worker times its plugin: a cost-aware study's asks then follow the machine's timing"
	case s.Interrupt == "extend" && s.DoorB == "worker":
		return "bkb worker has no budget of its own: it runs the study's"
	}
	return ""
}

// pythonTellsValues reports whether the Python client tells several values
// (values= in Study.tell).
func pythonTellsValues() bool {
	b, err := os.ReadFile(filepath.Join("..", "..", "clients", "python", "bkb_client", "__init__.py"))
	if err != nil {
		return false
	}
	_, def, _ := bytes.Cut(b, []byte("def tell(self, trial, value=None"))
	line, _, _ := bytes.Cut(def, []byte("\n"))
	return bytes.Contains(line, []byte("values=None"))
}

// drawScenarios draws n valid combinations from seed, each distinct.
func drawScenarios(seed uint64, n int, havePython, havePG bool) (out []scenario, skipped map[string]int) {
	rng := rand.New(rand.NewPCG(seed, 0x6d6174726978)) // "matrix"
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	seen := map[scenario]bool{}
	skipped = map[string]int{}
	for tries := 0; len(out) < n && tries < 200*n; tries++ {
		s := scenario{pick(matrixPolicies), pick(matrixKinds), pick(matrixSpaces), pick(matrixDoors), pick(matrixDoors),
			pick(matrixStores), pick(matrixInterrupts)}
		if k := os.Getenv("BKB_MATRIX_KIND"); k != "" && s.Kind != k {
			continue
		}
		if k := os.Getenv("BKB_MATRIX_SPACE"); k != "" && s.Space != k {
			continue
		}
		if why := s.valid(havePython, havePG); why != "" {
			skipped[why]++
			continue
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, skipped
}

// The objective, the same in Go, in the plugin and in the Python driver:
// sums of rounded products, evaluated left to right, so that every
// language computes the same bits.
func matrixEval(kind string, x []float64) (value float64, values, cons, curve []float64) {
	sq := func(a float64) float64 { return float64(a * a) }
	if len(x) == 4 {
		// The conditional space: a, k (p or q), b when k is p, c when
		// k is q; an inactive coordinate is never read.
		v := x[2]
		if x[1] == 1 {
			v = x[3]
		}
		x = []float64{x[0], v, x[1]}
	}
	f1 := sq(x[0]-0.7) + sq(x[1]-1.3)
	f2 := sq(x[0]+1) + sq(x[1]-3)
	if len(x) > 2 {
		f1 = f1 + sq(x[2]-1)
		f2 = f2 + sq(x[2])
	}
	switch kind {
	case "multi":
		return f1, []float64{f1, f2}, nil, nil
	case "constrained":
		return f1, nil, []float64{0.5 - x[0]}, nil
	case "pruned":
		for s := 0; s < 4; s++ {
			curve = append(curve, f1+float64(float64(4-s)*0.25)*(1+sq(x[1])))
		}
	}
	return f1, nil, nil, curve
}

// matrixArms is the size of the fixed arm set of the matrix's arms space
// (the continuous space's box, candidates fixed): more than the budget,
// so that fresh asks never run out (version 13, TestMatrixArmsSpace).
const matrixArms = 64

// matrixDiscreteSpace is the discrete space of the matrix: 6 x 5 x 3 = 90
// configurations, where a budget of 45-60 trials meets configurations
// asked before (version 12's fresh asks, TestMatrixDiscreteSpace).
const matrixDiscreteSpace = `{"params":[{"name":"a","type":"int","low":-2,"high":3},{"name":"b","type":"int","low":0,"high":4},{"name":"c","type":"categorical","choices":["p","q","r"]}]}`

// matrixSeconds is the evaluation time every door tells: for the costly
// kind (a cost-aware study) 0.25 + (x_1 + 2)^2 seconds, 0.25 to 25.25 s
// across the box, computed as the Python driver does; 1 otherwise.
func matrixSeconds(kind string, x []float64) float64 {
	if kind != "costly" {
		return 1
	}
	return 0.25 + float64((x[0]+2)*(x[0]+2))
}

// matrixEnv is one combination's study: where it lives and what it needs.
type matrixEnv struct {
	t      *testing.T
	sc     scenario
	dir    string
	name   string
	mem    *storage.Memory
	pgURL  string
	cfg    study.Config
	budget int // the budget in force: matrixB0, matrixB1 after an extension
	// copied: the study was copied (bkb copy) to a journal in copy/.
	copied bool
	// shown is what the last phase's door shows of the trials (its own
	// listing: the API's trials, bkb export, the Python client's).
	shown []shownTrial

	mu    sync.Mutex
	evals int // evaluations made in Go (the library and HTTP doors)
}

func (e *matrixEnv) journal() string {
	if e.sc.Store == "dir" {
		return filepath.Join(e.dir, "studies", e.name+storage.JournalExt)
	}
	if e.copied {
		return filepath.Join(e.dir, "copy", e.name+storage.JournalExt)
	}
	return filepath.Join(e.dir, e.name+storage.JournalExt)
}

// open returns a new handle on the study's storage (a new process would
// open its own).
func (e *matrixEnv) open(grace ...bool) storage.Storage {
	e.t.Helper()
	var st storage.Storage
	var err error
	switch e.sc.Store {
	case "journal":
		st, err = storage.OpenJournalStore(e.journal())
	case "dir":
		st, err = storage.OpenDir(filepath.Join(e.dir, "studies"))
	case "memory":
		st = noClose{e.mem}
	case "postgres":
		// Every door on PostgreSQL keeps the commands' local cache
		// (localCacheDir, the test's directory: TestMain).
		opt := postgres.Options{CacheDir: localCacheDir()}
		if len(grace) > 0 && grace[0] {
			opt.HeartbeatGrace = 1e6 // 1 ms: a crashed run's trial is stale at once
		}
		st, err = postgres.Open(context.Background(), e.pgURL, opt)
	}
	if err != nil {
		e.t.Fatalf("%v: open storage: %v", e.sc, err)
	}
	return st
}

// noClose keeps a memory storage alive across the phases' Close.
type noClose struct{ *storage.Memory }

func (noClose) Close() error { return nil }

// where gives the study to the command line.
func (e *matrixEnv) where() []string {
	if e.sc.Store == "postgres" {
		return []string{"--storage", e.pgURL, "--study", e.name}
	}
	return []string{"--study", e.journal()}
}

func (e *matrixEnv) bkb(args ...string) (string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	if code != 0 && code != 3 {
		e.t.Fatalf("%v: bkb %s: exit %d: %s", e.sc, strings.Join(args, " "), code, errb.String())
	}
	return out.String(), code
}

// cliConfig is the study's configuration as command-line flags.
func (e *matrixEnv) cliConfig() []string {
	args := []string{"--space", filepath.Join(e.dir, "space.json"), "--policy", e.sc.Policy, "--seed", "7", "-T", strconv.Itoa(matrixB0)}
	switch e.sc.Kind {
	case "multi":
		args = append(args, "--directions", "minimize,minimize")
	case "constrained":
		args = append(args, "--constraints", "1")
	case "pruned":
		args = append(args, "--pruner", "median")
	case "costly":
		args = append(args, "--cost-aware")
	}
	if e.sc.Space == "arms" {
		args = append(args, "--candidates", "fixed", "--arms", "sobol", "-n", strconv.Itoa(matrixArms))
	}
	return args
}

// points returns the trials' points (nil for numbers without one) and
// checks that every trial is complete or pruned once.
func (e *matrixEnv) points() [][]float64 {
	st := e.open()
	defer st.Close()
	s, err := study.Load(context.Background(), st, e.name)
	if err != nil {
		e.t.Fatalf("%v: load: %v", e.sc, err)
	}
	var out [][]float64
	for _, t := range s.Trials() {
		if t.State != study.Complete && t.State != study.Pruned {
			e.t.Errorf("%v: trial %d is %s (%s): every trial must be evaluated once", e.sc, t.Number, t.State, t.Error)
		}
		out = append(out, t.X)
	}
	return out
}

// evaluations counts the objective's evaluations: in Go, and in the
// plugin's and the Python driver's log.
func (e *matrixEnv) evaluations() int {
	n := e.evals
	if b, err := os.ReadFile(filepath.Join(e.dir, "evals.log")); err == nil {
		n += bytes.Count(b, []byte{'\n'})
	}
	return n
}

// interrupt does what comes between the phases. On a journal it first
// writes the records cache (a study of this size has too few records for
// a command to write one), so that the second phase reads through it,
// and then does to the cache what it does to the snapshot: removes it
// (snapmissing), damages it (snapdamaged) or puts back an older one
// (snapstale).
func (e *matrixEnv) interrupt(stale, staleCache []byte) {
	snap := storage.SnapshotPath(e.journal())
	if e.sc.Store != "memory" && e.sc.Store != "postgres" {
		cache := storage.RecordCachePath(e.journal())
		if err := storage.WriteRecordCache(e.journal()); err != nil {
			e.t.Fatal(err)
		}
		switch e.sc.Interrupt {
		case "snapmissing":
			os.Remove(cache)
		case "snapdamaged":
			if err := flipMiddleByte(cache); err != nil {
				e.t.Fatal(err)
			}
		case "snapstale":
			if staleCache != nil {
				if err := os.WriteFile(cache, staleCache, 0o644); err != nil {
					e.t.Fatal(err)
				}
			}
		}
	}
	if e.sc.Store == "postgres" {
		e.interruptCache()
	}
	switch e.sc.Interrupt {
	case "snapmissing":
		e.dropSnapshot()
	case "snapdamaged":
		// The snapshot's data is in its chunks: one of them is damaged
		// (on PostgreSQL a row of bkb_snapshot_chunks), else, where no
		// chunk was saved yet, its list file.
		if e.sc.Store == "postgres" {
			st := e.open()
			defer st.Close()
			tag, err := st.(*postgres.Store).Pool().Exec(context.Background(), `UPDATE bkb_snapshot_chunks c
				SET data = set_byte(c.data, length(c.data)/2, get_byte(c.data, length(c.data)/2) # 90)
				WHERE c.study_id = (SELECT id FROM bkb_studies WHERE name = $1)
				AND c.hash = (SELECT hash FROM bkb_snapshot_chunks WHERE study_id = c.study_id ORDER BY hash LIMIT 1)`, e.name)
			if err != nil {
				e.t.Fatal(err)
			}
			if tag.RowsAffected() == 0 {
				e.dropSnapshot()
			}
			e.t.Logf("damaged %d snapshot chunk rows", tag.RowsAffected())
			return
		}
		if ents, _ := os.ReadDir(storage.SnapshotChunksPath(e.journal())); len(ents) > 0 {
			chunk := filepath.Join(storage.SnapshotChunksPath(e.journal()), ents[len(ents)/2].Name())
			if err := flipMiddleByte(chunk); err != nil {
				e.t.Fatal(err)
			}
			e.t.Logf("damaged snapshot chunk %s", filepath.Base(chunk))
			return
		}
		// A snapshot is saved when the policy's time makes it pay: where
		// none was, a damaged one is garbage.
		b, err := os.ReadFile(snap)
		if err != nil {
			b = []byte("BKBSNAP1\n{not a snapshot")
		}
		for i := len(b) / 2; i < len(b); i += 97 {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(snap, b, 0o644); err != nil {
			e.t.Fatal(err)
		}
	case "snapstale":
		if stale == nil || e.sc.Store == "postgres" {
			return
		}
		if err := os.WriteFile(snap, stale, 0o644); err != nil {
			e.t.Fatal(err)
		}
	case "copy":
		// The study moves to a new journal (bkb copy), where the second
		// phase continues it.
		from := e.where()
		args := []string{"copy", "--from", from[1]}
		if e.sc.Store == "postgres" {
			args = append(args, "--study", e.name)
		}
		e.sc.Store, e.copied = "journal", true
		if err := os.MkdirAll(filepath.Dir(e.journal()), 0o755); err != nil {
			e.t.Fatal(err)
		}
		e.bkb(append(args, "--to", e.journal())...)
	}
}

// interruptCache does to the local cache of a study on PostgreSQL
// (postgres.Options.CacheDir) what interrupt does to its snapshot: removes
// it (snapmissing) or damages a cached chunk and the cached records
// (snapdamaged); a cache left by the first phase is behind the database
// in every other case.
func (e *matrixEnv) interruptCache() {
	st := e.open()
	defer st.Close()
	dir := st.(*postgres.Store).CacheDir(e.name)
	switch e.sc.Interrupt {
	case "snapmissing":
		os.RemoveAll(dir)
	case "snapdamaged":
		damage := []string{filepath.Join(dir, "records")}
		if chunks, _ := filepath.Glob(filepath.Join(dir, "chunks", "*")); len(chunks) > 0 {
			damage = append(damage, chunks[0])
		}
		for _, f := range damage {
			if info, err := os.Stat(f); err != nil || info.Size() == 0 {
				continue // not cached (too few records, or no snapshot yet)
			}
			if err := flipMiddleByte(f); err != nil {
				e.t.Fatal(err)
			}
			e.t.Logf("damaged the local cache's %s", filepath.Base(f))
		}
	}
}

// flipMiddleByte damages the file at path in place: its middle byte
// changes, its length does not.
func flipMiddleByte(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return fmt.Errorf("%s: empty, nothing to damage", path)
	}
	b[len(b)/2] ^= 0x5a
	return os.WriteFile(path, b, 0o644)
}

func (e *matrixEnv) dropSnapshot() {
	if e.sc.Store == "postgres" {
		st := e.open()
		defer st.Close()
		pg := st.(*postgres.Store)
		if _, err := pg.Pool().Exec(context.Background(), `DELETE FROM bkb_snapshots WHERE study_id = (SELECT id FROM bkb_studies WHERE name = $1)`, e.name); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	if err := os.Remove(storage.SnapshotPath(e.journal())); err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
}

// shownTrial is a trial as a door lists it (the fields every door names
// alike).
type shownTrial struct {
	Trial        int             `json:"trial"`
	State        string          `json:"state"`
	Status       string          `json:"status"` // bkb export's name of the state
	Value        *float64        `json:"value"`
	Values       []float64       `json:"values"`
	Constraints  []float64       `json:"constraints"`
	Intermediate json.RawMessage `json:"intermediate"`
}

// readBack lists the trials through door: what a user of that door sees.
func (e *matrixEnv) readBack(door string) {
	switch door {
	case "go", "":
		st := e.open()
		defer st.Close()
		s, err := study.Load(context.Background(), st, e.name)
		if err != nil {
			e.t.Fatal(err)
		}
		e.shown = nil
		for _, t := range s.Trials() {
			tr := shownTrial{Trial: t.Number, State: string(t.State), Values: t.Values, Constraints: t.Constraints}
			if t.State == study.Complete {
				v := t.Value
				tr.Value = &v
			}
			if len(t.Intermediate) > 0 {
				tr.Intermediate, _ = json.Marshal(t.Intermediate)
			}
			e.shown = append(e.shown, tr)
		}
	case "http":
		st := e.open()
		defer st.Close()
		srv, err := serve.New(serve.Options{Storage: st})
		if err != nil {
			e.t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		defer ts.Close()
		resp, err := ts.Client().Get(ts.URL + "/api/studies/" + e.name + "/trials")
		if err != nil {
			e.t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Trials []shownTrial `json:"trials"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			e.t.Fatal(err)
		}
		e.shown = out.Trials
	case "cli", "worker":
		out, _ := e.bkb(append(append([]string{"export"}, e.where()...), "--out", "-", "--format", "json")...)
		e.shown = nil
		if err := json.Unmarshal([]byte(out), &e.shown); err != nil {
			e.t.Fatalf("%v: bkb export: %v", e.sc, err)
		}
	case "python":
		// Read by the driver at the end of its phase.
	}
}

// checkShown checks what the door listed against the objective at each
// trial's point: every value, objective and constraint, and the
// learning curves of a pruned study.
func (e *matrixEnv) checkShown(door string, pts [][]float64) {
	if len(e.shown) != len(pts) {
		e.t.Errorf("%v: %s lists %d trials, the study has %d", e.sc, door, len(e.shown), len(pts))
		return
	}
	for i, tr := range e.shown {
		state := cmp.Or(tr.State, tr.Status)
		value, values, cons, _ := matrixEval(e.sc.Kind, pts[tr.Trial])
		switch {
		case state == "pruned":
			if e.sc.Kind != "pruned" || len(tr.Intermediate) < 3 {
				e.t.Errorf("%v: %s: trial %d pruned, with intermediate values %s", e.sc, door, tr.Trial, tr.Intermediate)
			}
		case state != "complete":
			e.t.Errorf("%v: %s: trial %d is %q", e.sc, door, tr.Trial, state)
		case tr.Value == nil || math.Float64bits(*tr.Value) != math.Float64bits(value):
			e.t.Errorf("%v: %s: trial %d shows value %v, the objective %v", e.sc, door, tr.Trial, tr.Value, value)
		case !slices.Equal(bitsOf(tr.Values), bitsOf(values)) || !slices.Equal(bitsOf(tr.Constraints), bitsOf(cons)):
			e.t.Errorf("%v: %s: trial %d shows values %v constraints %v, the objective %v %v", e.sc, door, tr.Trial, tr.Values, tr.Constraints, values, cons)
		case e.sc.Kind == "pruned" && len(tr.Intermediate) < 3:
			e.t.Errorf("%v: %s: trial %d shows no learning curve", e.sc, door, tr.Trial)
		}
		if tr.Trial != i {
			e.t.Errorf("%v: %s lists trial %d at %d", e.sc, door, tr.Trial, i)
		}
	}
}

// runScenario runs one combination and returns its points.
func runScenario(t *testing.T, sc scenario, pgURL string) [][]float64 {
	t.Helper()
	e := &matrixEnv{t: t, sc: sc, dir: t.TempDir(), mem: storage.NewMemory(), pgURL: pgURL, budget: matrixB0}
	e.name = "m" + strconv.FormatUint(rand.Uint64()%1e12, 36)
	e.writeFiles()
	e.cfg = e.config()
	e.phase(sc.DoorA, true, matrixK, 0, sc.Interrupt == "crash")
	var stale, staleCache []byte
	if sc.Interrupt == "snapstale" && sc.Store != "memory" && sc.Store != "postgres" {
		// A snapshot older than the records: the study's first one; and
		// a records cache older than the records, which covers the
		// journal's first bytes only.
		stale, _ = os.ReadFile(storage.SnapshotPath(e.journal()))
		if err := storage.WriteRecordCache(e.journal()); err != nil {
			t.Fatal(err)
		}
		staleCache, _ = os.ReadFile(storage.RecordCachePath(e.journal()))
		e.phase("go", false, matrixK+5, 0, false)
	}
	e.interrupt(stale, staleCache)
	extend := 0
	if sc.Interrupt == "extend" {
		e.phase(sc.DoorB, false, matrixB0, 0, false)
		extend, e.budget = matrixB1, matrixB1
	}
	e.phase(sc.DoorB, false, e.budget, extend, false)
	pts := e.points()
	e.readBack(sc.DoorB)
	e.checkShown(sc.DoorB, pts)
	if len(pts) != e.budget {
		t.Errorf("%v: %d trials, want the budget %d", sc, len(pts), e.budget)
	}
	if n := e.evaluations(); n != e.budget {
		t.Errorf("%v: %d evaluations for %d trials: an evaluation lost or repeated", sc, n, e.budget)
	}
	return pts
}

func (e *matrixEnv) writeFiles() {
	space := `{"params":[{"name":"a","type":"float","low":-2,"high":3},{"name":"b","type":"float","low":0,"high":4}]}`
	if e.sc.Space == "conditional" {
		space = `{"params":[{"name":"a","type":"float","low":-2,"high":3},{"name":"k","type":"categorical","choices":["p","q"]},` +
			`{"name":"b","type":"float","low":0,"high":4,"condition":{"parent":"k","values":["p"]}},` +
			`{"name":"c","type":"int","low":0,"high":4,"condition":{"parent":"k","values":["q"]}}]}`
	}
	if e.sc.Space == "mixed" {
		space = `{"params":[{"name":"a","type":"float","low":-2,"high":3},{"name":"b","type":"int","low":0,"high":4},{"name":"c","type":"categorical","choices":["p","q","r"]}]}`
	}
	if e.sc.Space == "discrete" {
		space = matrixDiscreteSpace
	}
	files := map[string]string{"space.json": space, "matrix_plugin.py": matrixPython, "matrix_driver.py": matrixPythonDriver}
	if err := os.MkdirAll(filepath.Join(e.dir, "studies"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(text), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// config is the configuration a Go program or a client gives: what the
// command-line flags of cliConfig say, nothing else.
func (e *matrixEnv) config() study.Config {
	sp, err := study.ReadSpace(bytes.NewReader(mustRead(e.t, filepath.Join(e.dir, "space.json"))))
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := study.Config{Space: sp, Policy: e.sc.Policy, Seed: 7, Budget: matrixB0}
	switch e.sc.Kind {
	case "multi":
		cfg.Directions = []study.Direction{study.Minimize, study.Minimize}
	case "constrained":
		cfg.Constraints = 1
	case "pruned":
		cfg.Pruner.Kind = "median"
	case "costly":
		cfg.CostAware = true
	}
	if e.sc.Space == "arms" {
		cfg.Candidates, cfg.Arms = study.CandidatesFixed, study.Arms{Kind: "sobol", N: matrixArms}
	}
	return cfg
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDoorMatrix checks the invariant on combinations drawn from a seed
// against the reference: the same study through the command line's
// ask/tell on a journal, uninterrupted (with the extension when the
// combination extends).
func TestDoorMatrix(t *testing.T) {
	// Version 11's late phase (a local posterior from a third of the
	// budget, from 1,000 to 5,000 observations) starts at trial 25 here, with
	// 16 near points rebuilt every 8, so that every door, storage and
	// interruption of a bkb study runs through it (every door serves its
	// studies in this process). Not parallel: the thresholds are the
	// engine package's.
	t.Cleanup(engine.LowerLateForTest(25, 16, 8))
	seed := uint64(1)
	if s := os.Getenv("BKB_MATRIX_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	n := matrixFull
	if testing.Short() {
		n = matrixShort
	}
	if s := os.Getenv("BKB_MATRIX_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	_, err := exec.LookPath("python3")
	havePython := err == nil
	pgURL := os.Getenv("BKB_POSTGRES_URL")
	if pgURL != "" {
		// A server that does not answer would make every PostgreSQL row
		// retry its connection for half a minute a command (minutes of
		// silence before a timeout): say so at once.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, pgURL)
		cancel()
		if err != nil {
			t.Fatalf("BKB_POSTGRES_URL is set but its server does not answer (unset it to leave PostgreSQL out): %v", err)
		}
		conn.Close(context.Background())
	}
	scs, skipped := drawScenarios(seed, n, havePython, pgURL != "")
	if only := os.Getenv("BKB_MATRIX_ONLY"); only != "" {
		// One combination, as a failure names it: policy,kind,space,doorA>doorB,store,interrupt.
		f := strings.Split(strings.ReplaceAll(only, ">", ","), ",")
		if len(f) != 7 {
			t.Fatalf("BKB_MATRIX_ONLY=%q: want policy,kind,space,doorA>doorB,store,interrupt", only)
		}
		scs = []scenario{{f[0], f[1], f[2], f[3], f[4], f[5], f[6]}}
	}
	t.Logf("seed %d: %d combinations; draws left out: %v", seed, len(scs), skipped)
	var refMu sync.Mutex
	refs := map[scenario][][]float64{}
	reference := func(t *testing.T, sc scenario) [][]float64 {
		key := scenario{Policy: sc.Policy, Kind: sc.Kind, Space: sc.Space, DoorA: "cli", DoorB: "cli", Store: "journal", Interrupt: "none"}
		if sc.Interrupt == "extend" {
			key.Interrupt = "extend"
		}
		refMu.Lock()
		defer refMu.Unlock()
		if r, ok := refs[key]; ok {
			return r
		}
		r := runScenario(t, key, "")
		refs[key] = r
		return r
	}

	for _, sc := range scs {
		t.Run(strings.ReplaceAll(sc.String(), "/", ","), func(t *testing.T) {
			want := reference(t, sc)
			if sc.Kind == "costly" {
				// A cost-aware study's points must not be the plain
				// policy's: else its rows would check no weighed ask.
				plain := sc
				plain.Kind = "single"
				if p := reference(t, plain); slices.EqualFunc(p, want, slices.Equal) {
					t.Fatalf("%v: the cost-aware reference run asked the plain policy's points: no cost was weighed", sc)
				}
			}
			got := runScenario(t, sc, pgURL)
			for i := range min(len(got), len(want)) {
				if !slices.Equal(bitsOf(got[i]), bitsOf(want[i])) {
					t.Fatalf("%v: trial %d asked %v, the uninterrupted command-line run %v (seed %d)", sc, i, got[i], want[i], seed)
				}
			}
		})
	}
}

func bitsOf(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

// matrixRepeats runs a study of cfg in memory for matrixB0 trials of the
// matrix's objective and returns how many asks repeated a point asked
// before.
func matrixRepeats(t *testing.T, cfg study.Config) int {
	t.Helper()
	cfg.Seed, cfg.Budget = 7, matrixB0
	s, err := study.Create(context.Background(), storage.NewMemory(), "r", cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen, n := map[string]bool{}, 0
	for range matrixB0 {
		tr, err := s.Ask(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint(tr.X)
		if seen[k] {
			n++
		}
		seen[k] = true
		v, _, _, _ := matrixEval("single", tr.X)
		if err := s.Tell(context.Background(), tr.Number, v); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestMatrixArmsSpace: on the matrix's fixed arm set (64 Sobol arms of the
// continuous space's box), with its objective and budget, version 12 asks
// arms it evaluated before and the current version at most one, its test
// of the noise: so the arms rows check fresh asks on a fixed set (version
// 13) through every door.
func TestMatrixArmsSpace(t *testing.T) {
	t.Parallel()
	sp, err := study.Box([]string{"a", "b"}, []float64{-2, 0}, []float64{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"bkb", "gp-ucb", "bbkb"} {
		cfg := func(version int) study.Config {
			return study.Config{Space: sp, Version: version, Policy: policy, Candidates: study.CandidatesFixed, Arms: study.Arms{Kind: "sobol", N: matrixArms}}
		}
		n12, n := matrixRepeats(t, cfg(12)), matrixRepeats(t, cfg(study.CurrentVersion))
		if n12 <= 1 {
			t.Errorf("%s: version 12 repeated %d arms in %d trials: the arms space does not exercise fresh asks", policy, n12, matrixB0)
		}
		if n > 1 {
			t.Errorf("%s: version %d repeated %d arms in %d trials", policy, study.CurrentVersion, n, matrixB0)
		}
		t.Logf("%s: repeated arms in %d trials: version 12 %d, version %d %d", policy, matrixB0, n12, study.CurrentVersion, n)
	}
}

// TestMatrixDiscreteSpace: on the matrix's discrete space, with its
// objective and budget, version 11 asks configurations it evaluated before
// and the current version (the one the matrix runs) at most one, its test of
// the noise: so the discrete rows check fresh asks through every door.
func TestMatrixDiscreteSpace(t *testing.T) {
	t.Parallel()
	sp, err := study.ReadSpace(strings.NewReader(matrixDiscreteSpace))
	if err != nil {
		t.Fatal(err)
	}
	n11, n := matrixRepeats(t, study.Config{Space: sp, Version: 11}), matrixRepeats(t, study.Config{Space: sp, Version: study.CurrentVersion})
	if n11 <= 1 {
		t.Errorf("version 11 repeated %d configurations in %d trials: the discrete space does not exercise fresh asks", n11, matrixB0)
	}
	if n > 1 {
		t.Errorf("version %d repeated %d configurations in %d trials", study.CurrentVersion, n, matrixB0)
	}
	t.Logf("repeated configurations in %d trials: version 11 %d, version %d %d", matrixB0, n11, study.CurrentVersion, n)
}
