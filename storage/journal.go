// Package storage keeps the events of optimization studies behind the
// [Storage] interface. Its embedded default is the durable journal: a
// JSON-lines file whose first line is a [Header] and whose other lines are
// [Record] values appended, and fsynced, as they happen. A study killed at
// any moment can be resumed from its journal: [Open] returns every record,
// [Summarize] turns them into completed trials, pending asks and the next
// trial number.
//
// Example journal:
//
//	{"version":1,"created":"2025-01-02T03:04:05Z","config":{"policy":"bkb"}}
//	{"kind":"ask","trial":0,"arm":12,"x":[0.5,1],"time":"2025-01-02T03:04:06Z"}
//	{"kind":"tell","trial":0,"arm":12,"x":[0.5,1],"y":0.83,"time":"2025-01-02T03:04:08Z","seconds":2.01}
//	{"kind":"ask","trial":1,"arm":3,"x":[0.1,2],"time":"2025-01-02T03:04:08Z"}
//	{"kind":"fail","trial":1,"arm":3,"x":[0.1,2],"error":"plugin timed out","time":"2025-01-02T03:05:08Z","seconds":60}
//	{"kind":"ask","trial":2,"arm":5,"x":[0.7,1],"time":"2025-01-02T03:05:09Z"}
//	{"kind":"report","trial":2,"arm":5,"x":[0.7,1],"step":1,"y":2.5,"time":"2025-01-02T03:05:10Z"}
//	{"kind":"prune","trial":2,"arm":5,"x":[0.7,1],"step":1,"y":2.5,"time":"2025-01-02T03:05:10Z","seconds":1}
//
// # Locking
//
// A Journal returned by [Create] or [Open] holds an exclusive advisory lock
// (flock(2) on the journal file itself on Linux, macOS and the BSDs) until
// [Journal.Close]; a second Create/Open of the same file, from this or
// another process, fails with [ErrLocked]. The kernel releases the lock when
// the process dies, so a crash never leaves a stale lock. On other systems
// the lock is a lock file next to the journal (path + ".lock", created with
// O_EXCL and removed by Close), which a crash can leave behind: remove it by
// hand once no process uses the journal. [Read] and [ReadFile] take no lock
// and may run while a writer appends.
package storage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Version is the journal format version written by Create.
const Version = 1

// Record kinds.
const (
	KindAsk  = "ask"  // a point was handed out for evaluation (pending)
	KindTell = "tell" // an evaluation completed with value Y
	KindFail = "fail" // an evaluation failed with Error
	// KindEnqueue reserves a trial for a given point, to be handed out by
	// an ask of the same trial and point before any new suggestion (a warm
	// start, or a trial of a stopped worker evaluated again).
	KindEnqueue = "enqueue"
	// KindReport is an intermediate value Y of a pending trial at Step (a
	// learning curve's point), read by pruners.
	KindReport = "report"
	// KindPrune completes a trial as pruned: stopped early on its
	// intermediate values. It may carry the Step and Y of the last report.
	KindPrune = "prune"
)

// ErrLocked is returned by Create and Open when another Journal (in this or
// another process) has the file open.
var ErrLocked = errors.New("journal is in use by another process")

// Header is the first line of a journal.
type Header struct {
	Version int             `json:"version"`        // format version, 1
	Created time.Time       `json:"created"`        // creation time (UTC)
	Name    string          `json:"name,omitempty"` // the study's name in its storage
	Config  json.RawMessage `json:"config"`         // opaque study configuration, owned by the caller
}

// Record is one event of a study.
type Record struct {
	Kind  string    `json:"kind"`  // KindAsk, KindTell, KindFail, KindEnqueue, KindReport or KindPrune
	Trial int       `json:"trial"` // 0-based trial number
	Arm   int       `json:"arm"`   // arm index, -1 if the point is not an arm
	X     []float64 `json:"x"`     // the point
	// Params are the point's parameters by name, each in its own type
	// (written by the study layer for people and plugins; replay uses X).
	Params json.RawMessage `json:"params,omitempty"`
	// Worker identifies the process that asked the trial
	// ("host:pid:nonce"), so that a trial whose worker died can be found.
	Worker  string    `json:"worker,omitempty"`
	Y       *float64  `json:"y,omitempty"`       // the value; tell only
	Error   string    `json:"error,omitempty"`   // the failure; fail only
	Time    time.Time `json:"time"`              // when the event happened
	Seconds float64   `json:"seconds,omitempty"` // evaluation duration
	// Values are the values of every objective of a study with several
	// objectives (tell only; Y is then Values[0]).
	Values []float64 `json:"values,omitempty"`
	// Constraints are the constraint values c_j(x) of a constrained study
	// (tell only): the point is feasible when every one is <= 0.
	Constraints []float64 `json:"constraints,omitempty"`
	// Step is the step of an intermediate value (report; prune: the last
	// reported step), >= 0.
	Step int `json:"step,omitempty"`
}

// Validate checks one record on its own: a known kind, Trial >= 0,
// Arm >= -1, a non-empty finite X, a finite Y present for tell and report,
// optional for prune and absent otherwise, no Error except on fail, a
// finite, non-negative Seconds, Step >= 0, zero except on report and
// prune, and finite Values (led by Y) and Constraints on tell records
// only.
func (r Record) Validate() error {
	switch r.Kind {
	case KindAsk, KindTell, KindFail, KindEnqueue, KindReport, KindPrune:
	case "":
		return errors.New(`missing "kind"`)
	default:
		return fmt.Errorf("unknown kind %q (want ask, tell, fail, enqueue, report or prune)", r.Kind)
	}
	if r.Step < 0 {
		return fmt.Errorf("negative step %d", r.Step)
	}
	if r.Step != 0 && r.Kind != KindReport && r.Kind != KindPrune {
		return fmt.Errorf(`%s with "step"`, r.Kind)
	}
	if r.Trial < 0 {
		return fmt.Errorf("negative trial %d", r.Trial)
	}
	if r.Arm < -1 {
		return fmt.Errorf("arm %d (want an index >= 0, or -1)", r.Arm)
	}
	if len(r.X) == 0 {
		return errors.New(`missing "x"`)
	}
	for i, v := range r.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("x[%d] = %v is not finite", i, v)
		}
	}
	switch {
	case (r.Kind == KindTell || r.Kind == KindReport) && r.Y == nil:
		return fmt.Errorf(`%s without "y"`, r.Kind)
	case r.Kind != KindTell && r.Kind != KindReport && r.Kind != KindPrune && r.Y != nil:
		return fmt.Errorf(`%s with "y"`, r.Kind)
	case r.Y != nil && (math.IsNaN(*r.Y) || math.IsInf(*r.Y, 0)):
		return fmt.Errorf("y = %v is not finite", *r.Y)
	case r.Kind != KindFail && r.Error != "":
		return fmt.Errorf(`%s with "error"`, r.Kind)
	case math.IsNaN(r.Seconds) || math.IsInf(r.Seconds, 0) || r.Seconds < 0:
		return fmt.Errorf("seconds = %v (want a finite value >= 0)", r.Seconds)
	case r.Kind != KindTell && (r.Values != nil || r.Constraints != nil):
		return fmt.Errorf(`%s with "values" or "constraints"`, r.Kind)
	case r.Values != nil && (len(r.Values) < 2 || r.Values[0] != *r.Y):
		return fmt.Errorf(`"values" %v (want two or more, the first equal to "y" %v)`, r.Values, *r.Y)
	}
	for i, v := range r.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("values[%d] = %v is not finite", i, v)
		}
	}
	for i, v := range r.Constraints {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("constraints[%d] = %v is not finite", i, v)
		}
	}
	return nil
}

// LineError is a problem at one line of a journal.
type LineError struct {
	Path string // file name, "" when reading from an io.Reader
	Line int    // 1-based line number
	Err  error
}

// Error formats the error as "path:line: err" (or "line N: err").
func (e *LineError) Error() string {
	if e.Path == "" {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return e.Path + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// parsed is the result of parsing a journal.
type parsed struct {
	header    Header
	records   []Record
	lines     []int  // line number of each record
	validEnd  int64  // offset just past the last complete, valid line
	dropped   string // description of a dropped truncated final line, "" if none
	needsLF   bool   // the last kept line lacks its '\n'
	totalSize int64
}

// parse reads a journal. A final line without '\n' that does not parse or
// validate is dropped (it is the trace of an interrupted write) and
// reported in dropped; any other bad line is a *LineError.
func parse(path string, r io.Reader) (*parsed, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	p := &parsed{}
	var off int64
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("%s: read: %w", displayPath(path), rerr)
		}
		if len(line) == 0 {
			break // EOF
		}
		start := off
		off += int64(len(line))
		complete := line[len(line)-1] == '\n'
		lerr := func(err error) error { return &LineError{Path: path, Line: lineNo, Err: err} }
		body := bytes.TrimSpace(line)
		if lineNo == 1 {
			h, err := parseHeader(body)
			if err != nil {
				if len(body) == 0 {
					return nil, lerr(errors.New("empty first line: a journal starts with a header"))
				}
				if !complete {
					err = fmt.Errorf("%w (the header line is incomplete)", err)
				}
				return nil, lerr(err)
			}
			p.header = h
		} else if len(body) > 0 {
			rec, err := parseRecord(body)
			if err != nil {
				if !complete {
					p.dropped = fmt.Sprintf("%s: dropped an incomplete final line (%d bytes, left by an interrupted write): %v",
						fmtLine(path, lineNo), len(line), err)
					p.validEnd = start
					break
				}
				return nil, lerr(fmt.Errorf("invalid record: %w", err))
			}
			p.records = append(p.records, rec)
			p.lines = append(p.lines, lineNo)
		}
		p.validEnd = off
		p.needsLF = !complete
		if rerr == io.EOF {
			break
		}
	}
	p.totalSize = off
	if off == 0 {
		return nil, fmt.Errorf("%s: empty journal: no header", displayPath(path))
	}
	return p, nil
}

func displayPath(path string) string {
	if path == "" {
		return "journal"
	}
	return path
}

func fmtLine(path string, line int) string {
	if path == "" {
		return "line " + strconv.Itoa(line)
	}
	return path + ":" + strconv.Itoa(line)
}

func parseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) == 0 || b[0] != '{' {
		return h, errors.New("invalid header: not a JSON object")
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("invalid header: %w", err)
	}
	var probe struct {
		Kind *string `json:"kind"`
	}
	_ = json.Unmarshal(b, &probe) // b is valid JSON here
	switch {
	case probe.Kind != nil:
		return h, errors.New("invalid header: the first line is a record; a journal starts with a header")
	case h.Version == 0:
		return h, errors.New(`invalid header: missing "version"`)
	case h.Version != Version:
		return h, fmt.Errorf("unsupported journal version %d (this program reads version %d)", h.Version, Version)
	}
	return h, nil
}

func parseRecord(b []byte) (Record, error) {
	if b[0] != '{' {
		return Record{}, errors.New("not a JSON object")
	}
	r, err := decodeRecord(b)
	if err != nil {
		return r, err
	}
	return r, r.Validate()
}

// Read parses a journal: the header and every record, each validated with
// Record.Validate. Like Open, it ignores an incomplete last line (no '\n')
// that does not parse, so it can read a journal while a writer appends to
// it; a bad line elsewhere is a *LineError naming the line. Read does not
// check the records against each other: see Summarize.
func Read(r io.Reader) (Header, []Record, error) {
	p, err := parse("", r)
	if err != nil {
		return Header{}, nil, err
	}
	return p.header, p.records, nil
}

// ReadFile is Read on the named file; errors name the file. It takes no
// lock.
func ReadFile(path string) (Header, []Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	p, err := parse(path, f)
	if err != nil {
		return Header{}, nil, err
	}
	return p.header, p.records, nil
}

// Journal is a journal open for appending. Its methods are safe for
// concurrent use.
type Journal struct {
	mu        sync.Mutex
	f         *os.File
	path      string
	header    Header
	size      int64 // length of the valid content
	tracker   *tracker
	recovered string
	unlock    func() error
	closed    bool
}

// Create creates a new journal at path, writes h as its header and locks it.
// It fails if path exists. A zero h.Version becomes Version, a zero
// h.Created the current time, and a nil h.Config "null".
func Create(path string, h Header) (*Journal, error) {
	if h.Version == 0 {
		h.Version = Version
	}
	if h.Version != Version {
		return nil, fmt.Errorf("storage: create %s: unsupported version %d", path, h.Version)
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	h.Created = h.Created.UTC()
	if len(h.Config) == 0 {
		h.Config = json.RawMessage("null")
	}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: header: %w", path, err)
	}
	line = append(line, '\n')

	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o666) // less the umask
	if err != nil {
		return nil, fmt.Errorf("storage: create journal: %w", err)
	}
	unlock, err := lock(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("storage: create %s: %w", path, err)
	}
	fail := func(err error) (*Journal, error) {
		_ = unlock()
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("storage: create %s: %w", path, err)
	}
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	syncDir(path)
	// Re-read the header as Open would, so that Header() is the same.
	h, _ = parseHeader(bytes.TrimSpace(line))
	return &Journal{f: f, path: path, header: h, size: int64(len(line)), tracker: newTracker(), unlock: unlock}, nil
}

// syncDir fsyncs the directory holding path so that a new file survives a
// crash; failures are ignored (not all systems support it).
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Open opens an existing journal for appending, locks it and returns its
// records. An incomplete final line left by an interrupted write is dropped
// and the file truncated back to the last complete line (see Recovered); a
// final complete record that only lacks its '\n' gets one. Open fails on a
// malformed line elsewhere (a *LineError naming the line) and on records
// that contradict each other (see Summarize), so that appends continue a
// consistent study.
func Open(path string) (*Journal, []Record, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("storage: open journal: %w", err)
	}
	unlock, err := lock(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	fail := func(err error) (*Journal, []Record, error) {
		_ = unlock()
		_ = f.Close()
		return nil, nil, err
	}
	p, err := parse(path, f)
	if err != nil {
		return fail(err)
	}
	tr := newTracker()
	for i, r := range p.records {
		if err := tr.add(r); err != nil {
			return fail(&LineError{Path: path, Line: p.lines[i], Err: err})
		}
	}
	j := &Journal{f: f, path: path, header: p.header, size: p.validEnd, tracker: tr, unlock: unlock}
	if p.dropped != "" {
		if err := f.Truncate(p.validEnd); err != nil {
			return fail(fmt.Errorf("storage: %s: truncate incomplete final line: %w", path, err))
		}
		j.recovered = p.dropped
	}
	if p.needsLF {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return fail(fmt.Errorf("storage: %s: terminate final line: %w", path, err))
		}
		j.size++
		if j.recovered == "" {
			j.recovered = fmt.Sprintf("%s: added the missing newline after the final record", path)
		}
	}
	if j.recovered != "" {
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("storage: %s: %w", path, err))
		}
	}
	return j, p.records, nil
}

// Recovered describes the repair Open made to the file (an incomplete final
// line dropped, or a missing final newline added), or returns "" when the
// journal was intact. Callers should show it to the user as a warning.
func (j *Journal) Recovered() string { return j.recovered }

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// Header returns the journal's header.
func (j *Journal) Header() Header {
	h := j.header
	h.Config = append(json.RawMessage(nil), h.Config...)
	return h
}

// State returns the Summarize of all records in the journal, including
// those appended since it was opened.
func (j *Journal) State() State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.tracker.state()
}

// Append validates r, checks it against the records before it (see
// Summarize: no second completion of a trial, no ask after completion,
// matching points, one dimension), writes it as one line and fsyncs the
// file, so the record is durable when Append returns. A zero r.Time is set
// to the current time. A rejected record leaves the journal unchanged; a
// failed write is rolled back (the file is truncated to its previous size).
func (j *Journal) Append(r Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return fmt.Errorf("storage: append to %s: journal is closed", j.path)
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if err := r.Validate(); err != nil {
		return fmt.Errorf("storage: append to %s: invalid %s record for trial %d: %w", j.path, r.Kind, r.Trial, err)
	}
	if err := j.tracker.check(r); err != nil {
		return fmt.Errorf("storage: append to %s: %w", j.path, err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("storage: append to %s: %w", j.path, err)
	}
	line = append(line, '\n')
	if _, err := j.f.Write(line); err != nil {
		_ = j.f.Truncate(j.size)
		return fmt.Errorf("storage: append to %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("storage: append to %s: sync: %w", j.path, err)
	}
	j.size += int64(len(line))
	_ = j.tracker.add(r) // cannot fail: checked above
	return nil
}

// Close releases the lock and closes the file. Calling it again returns nil.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	uerr := j.unlock()
	if err := j.f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", j.path, err)
	}
	if uerr != nil {
		return fmt.Errorf("storage: close %s: unlock: %w", j.path, uerr)
	}
	return nil
}
