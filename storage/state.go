package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// State is what a study's records add up to, as needed to resume it.
type State struct {
	// Completed holds the tell, fail and prune records, one per completed
	// trial, in journal order.
	Completed []Record
	// Pending holds, ordered by trial, the ask records of trials that have
	// neither a tell nor a fail: evaluations that were handed out and never
	// finished (typically because the study was interrupted). A trial
	// asked more than once (its worker stopped and another took it) is
	// held by its latest ask: the trial's owner is the worker that asked it
	// last.
	Pending []Record
	// Waiting holds, ordered by trial, the enqueue records of trials not
	// asked yet: points to hand out before any new suggestion.
	Waiting []Record
	// NextTrial is one more than the largest trial number seen, 0 when
	// there are no records: the number to give the next new trial.
	NextTrial int
	// Tells, Fails and Prunes count the completed trials by outcome.
	Tells, Fails, Prunes int
	// Dim is the number of coordinates of every X, 0 when there are no
	// records.
	Dim int
}

// Observations returns the points and values of the successful trials
// (tell records), in journal order. The slices x[i] are copies.
func (s State) Observations() (x [][]float64, y []float64) {
	x = make([][]float64, 0, s.Tells)
	y = make([]float64, 0, s.Tells)
	for _, r := range s.Completed {
		if r.Kind == KindTell && r.Y != nil {
			x = append(x, slices.Clone(r.X))
			y = append(y, *r.Y)
		}
	}
	return x, y
}

// Summarize replays records (in journal order) into a State. It fails when
// records contradict each other: a trial completed twice (two tells, or a
// tell and a fail), an ask for an already completed trial, a tell or fail
// whose point or arm differs from the trial's ask, two asks of one trial
// with different points, or points of different dimensions. Asking a
// pending trial again with the same point is allowed (a resumed study may
// re-issue it). Each record must also pass Record.Validate. Errors name the
// index of the offending record in records.
func Summarize(records []Record) (State, error) {
	t := newTracker()
	for i, r := range records {
		if err := r.Validate(); err != nil {
			return State{}, fmt.Errorf("storage: records[%d]: invalid %s record for trial %d: %w", i, r.Kind, r.Trial, err)
		}
		if err := t.add(r); err != nil {
			return State{}, fmt.Errorf("storage: records[%d]: %w", i, err)
		}
	}
	return t.state(), nil
}

// tracker maintains a State incrementally; records must be valid.
type tracker struct {
	dim       int
	pending   map[int]Record // trial -> ask
	waiting   map[int]Record // trial -> enqueue, not asked yet
	done      map[int]string // trial -> kind of its completion
	completed []Record
	doneAt    map[int]int // trial -> index of its completion in completed
	next      int
	tells     int
	fails     int
	prunes    int

	// A tentative change (see begin): the scalars and the length of
	// completed before it, and how to restore each map entry it touched,
	// newest last. An update then costs what it changes, not a copy of
	// every trial's state: copying the maps at each update made a
	// 100,000-trial study's storage O(t) per trial, and its garbage kept
	// the collector busy.
	tentative bool
	saved     trackerScalars
	undo      []func()
}

// trackerScalars are the fields of a tracker a rollback restores as they
// were.
type trackerScalars struct{ dim, next, tells, fails, prunes, completed int }

func newTracker() *tracker { return newTrackerFor(0) }

// newTrackerFor returns a tracker sized for about n records (an ask and a
// completion per trial): a command on a long study adds every record at
// once, and maps and a slice grown one record at a time allocated about
// twice the final size on the way (14 MB for the 20,000 records of a
// 10,000-trial study, against a few MB held).
func newTrackerFor(n int) *tracker {
	return &tracker{pending: make(map[int]Record), waiting: make(map[int]Record), done: make(map[int]string, n/2),
		doneAt: make(map[int]int, n/2), completed: make([]Record, 0, n/2)}
}

// check reports whether r may follow the records added so far.
func (t *tracker) check(r Record) error {
	if t.dim != 0 && len(r.X) != t.dim {
		return fmt.Errorf("trial %d: %s x has %d coordinates, earlier records have %d", r.Trial, r.Kind, len(r.X), t.dim)
	}
	if r.Kind == KindEnqueue {
		if _, ok := t.waiting[r.Trial]; ok || t.done[r.Trial] != "" || t.pending[r.Trial].Kind != "" {
			return fmt.Errorf("trial %d: enqueue of a trial that exists", r.Trial)
		}
		if r.Trial < t.next {
			return fmt.Errorf("trial %d: enqueue with a trial number below the next one (%d)", r.Trial, t.next)
		}
		return nil
	}
	if w, ok := t.waiting[r.Trial]; ok {
		if r.Kind != KindAsk {
			return fmt.Errorf("trial %d: %s of an enqueued trial that was never asked", r.Trial, r.Kind)
		}
		if !slices.Equal(w.X, r.X) {
			return fmt.Errorf("trial %d: ask x %v, but the trial was enqueued with x %v", r.Trial, r.X, w.X)
		}
		return nil
	}
	if prev, ok := t.done[r.Trial]; ok {
		if r.Kind == KindReport {
			return fmt.Errorf("trial %d: report after the trial was completed (by a %s)", r.Trial, prev)
		}
		if r.Kind == KindAsk {
			return fmt.Errorf("trial %d: ask after the trial was completed (by a %s)", r.Trial, prev)
		}
		return fmt.Errorf("trial %d: duplicate completion: %s after an earlier %s", r.Trial, r.Kind, prev)
	}
	ask, ok := t.pending[r.Trial]
	if !ok && r.Kind == KindReport {
		return fmt.Errorf("trial %d: report of a trial that was never asked", r.Trial)
	}
	if ok {
		if ask.Arm != r.Arm || !slices.Equal(ask.X, r.X) {
			if r.Kind == KindAsk {
				return fmt.Errorf("trial %d: asked twice with different points (arm %d x %v, then arm %d x %v)", r.Trial, ask.Arm, ask.X, r.Arm, r.X)
			}
			return fmt.Errorf("trial %d: %s for arm %d x %v, but the trial asked arm %d x %v", r.Trial, r.Kind, r.Arm, r.X, ask.Arm, ask.X)
		}
	}
	return nil
}

// add checks r and applies it (a copy: the caller keeps r).
func (t *tracker) add(r Record) error {
	r.X = slices.Clone(r.X)
	if r.Y != nil {
		y := *r.Y
		r.Y = &y
	}
	return t.addOwned(r)
}

// addOwned is add for a record that nothing else refers to (one just
// decoded from a line): it is kept as it is.
func (t *tracker) addOwned(r Record) error {
	if err := t.check(r); err != nil {
		return err
	}
	t.dim = len(r.X)
	t.next = max(t.next, r.Trial+1)
	switch r.Kind {
	case KindEnqueue:
		remember(t, t.waiting, r.Trial)
		t.waiting[r.Trial] = r
	case KindAsk:
		// The latest ask owns the trial: a trial re-asked after its worker
		// stopped is no longer stale once its new worker has it.
		remember(t, t.waiting, r.Trial)
		remember(t, t.pending, r.Trial)
		delete(t.waiting, r.Trial)
		t.pending[r.Trial] = r
	case KindReport:
		// An intermediate value: the trial stays pending.
	default:
		remember(t, t.pending, r.Trial)
		remember(t, t.done, r.Trial)
		remember(t, t.doneAt, r.Trial)
		delete(t.pending, r.Trial)
		t.done[r.Trial] = r.Kind
		t.doneAt[r.Trial] = len(t.completed)
		t.completed = append(t.completed, r)
		switch r.Kind {
		case KindTell:
			t.tells++
		case KindPrune:
			t.prunes++
		default:
			t.fails++
		}
	}
	return nil
}

// state returns a snapshot that does not share slices with t.
func (t *tracker) state() State {
	s := State{
		Completed: slices.Clone(t.completed),
		Pending:   make([]Record, 0, len(t.pending)),
		NextTrial: t.next,
		Tells:     t.tells,
		Fails:     t.fails,
		Prunes:    t.prunes,
		Dim:       t.dim,
	}
	for _, r := range t.pending {
		s.Pending = append(s.Pending, r)
	}
	for _, r := range t.waiting {
		s.Waiting = append(s.Waiting, r)
	}
	byTrial := func(a, b Record) int { return a.Trial - b.Trial }
	slices.SortFunc(s.Pending, byTrial)
	slices.SortFunc(s.Waiting, byTrial)
	return s
}

// begin starts a tentative change: the records added from here on can be
// taken back together by rollback, until commit keeps them.
func (t *tracker) begin() {
	t.tentative = true
	t.saved = trackerScalars{t.dim, t.next, t.tells, t.fails, t.prunes, len(t.completed)}
	t.undo = t.undo[:0]
}

// remember notes how to restore m[k] if the tentative change is rolled
// back; outside one it does nothing.
func remember[V any](t *tracker, m map[int]V, k int) {
	if !t.tentative {
		return
	}
	old, had := m[k]
	t.undo = append(t.undo, func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// commit keeps the tentative change; without one it does nothing.
func (t *tracker) commit() {
	t.tentative = false
	clear(t.undo)
	t.undo = t.undo[:0]
}

// rollback takes back the tentative change, leaving t as it was at begin;
// without one it does nothing.
func (t *tracker) rollback() {
	if !t.tentative {
		return
	}
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	s := t.saved
	clear(t.completed[s.completed:]) // drop the references the slice kept
	t.dim, t.next, t.tells, t.fails, t.prunes, t.completed = s.dim, s.next, s.tells, s.fails, s.prunes, t.completed[:s.completed]
	t.commit()
}

// completion returns the tell or fail record that completed trial, if any.
func (t *tracker) completion(trial int) (Record, bool) {
	i, ok := t.doneAt[trial]
	if !ok {
		return Record{}, false
	}
	return t.completed[i], true
}

// sameCompletion reports whether a and b are the same completion of a
// trial: equal in every field except Time (a retried tell is rebuilt with a
// new time, or none).
func sameCompletion(a, b Record) bool {
	if a.Kind != b.Kind || a.Trial != b.Trial || a.Arm != b.Arm || a.Step != b.Step || !slices.Equal(a.X, b.X) ||
		a.Error != b.Error || a.Seconds != b.Seconds || a.Worker != b.Worker || !sameJSON(a.Params, b.Params) ||
		!slices.Equal(a.Values, b.Values) || !slices.Equal(a.Constraints, b.Constraints) {
		return false
	}
	if (a.Y == nil) != (b.Y == nil) {
		return false
	}
	return a.Y == nil || *a.Y == *b.Y
}

// sameJSON compares two JSON texts by value, so that a storage that
// re-encodes them (whitespace, key order) still compares equal; empty and
// "null" are the same.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if len(a) == 0 {
		a = json.RawMessage("null")
	}
	if len(b) == 0 {
		b = json.RawMessage("null")
	}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// admit checks the records out that an Update's function returned against
// the study's records (summarized by t) and against each other, all before
// any is kept: all or none. A zero Time becomes now. A tell or fail
// identical to the stored completion of its trial (see sameCompletion) is
// a no-op: it is left out of add, and result holds the stored record in
// its place. add lists the records to append. On success t holds them as
// a tentative change: the caller commits it once they are stored, or
// rolls it back; on error t is as it was.
func admit(t *tracker, out []Record, now time.Time) (add, result []Record, err error) {
	t.rollback() // a change its caller left open is not stored
	t.begin()
	result = make([]Record, len(out))
	for i, r := range out {
		if r.Time.IsZero() {
			r.Time = now
		}
		r.Time = r.Time.UTC()
		if err := r.Validate(); err != nil {
			t.rollback()
			return nil, nil, fmt.Errorf("invalid %s record for trial %d: %w", r.Kind, r.Trial, err)
		}
		if r.Kind == KindTell || r.Kind == KindFail || r.Kind == KindPrune {
			if prev, ok := t.completion(r.Trial); ok && sameCompletion(prev, r) {
				result[i] = prev
				continue
			}
		}
		if err := t.add(r); err != nil {
			t.rollback()
			return nil, nil, err
		}
		add = append(add, r)
		result[i] = r
	}
	return add, result, nil
}

// Ledger is a study's records with what they add up to, kept up to date
// record by record: for implementations of [Storage] outside this package,
// which must check the records an Update appends against the study's
// (see Summarize and Storage.Update) without replaying them all each time.
// A Ledger is not safe for concurrent use.
type Ledger struct {
	records   []Record
	t         *tracker
	tentative int // records[tentative:] are an open Admit's; -1 without one
}

// NewLedger returns the ledger of a study without records.
func NewLedger() *Ledger { return &Ledger{t: newTracker(), tentative: -1} }

// Add appends records read from a store, checking each as Summarize does;
// on error the ledger holds the records before the offending one.
func (l *Ledger) Add(recs ...Record) error {
	l.Rollback()
	if len(l.records) == 0 && len(recs) > 64 {
		l.t = newTrackerFor(len(recs))
	}
	l.records = slices.Grow(l.records, len(recs))
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("storage: record %d: invalid %s record for trial %d: %w", len(l.records), r.Kind, r.Trial, err)
		}
		if err := l.t.add(r); err != nil {
			return fmt.Errorf("storage: record %d: %w", len(l.records), err)
		}
		l.records = append(l.records, r)
	}
	return nil
}

// Adopt is Add for a slice handed over: an empty ledger keeps recs as
// its own records instead of copying them (the caller must not use recs
// afterwards), which spares a copy of a long study's records.
func (l *Ledger) Adopt(recs []Record) error {
	l.Rollback()
	if len(l.records) == 0 && len(recs) > 0 {
		// Add appends each record where it is read from.
		l.records = recs[:0]
	}
	return l.Add(recs...)
}

// Len returns the number of records.
func (l *Ledger) Len() int { return len(l.records) }

// Records returns a copy of the records from index from on (clamped to
// [0, Len()]).
func (l *Ledger) Records(from int) []Record {
	return slices.Clone(l.records[min(max(from, 0), len(l.records)):])
}

// Pending returns the ask records of the pending trials (asked, neither
// told nor failed), ordered by trial.
func (l *Ledger) Pending() []Record {
	out := make([]Record, 0, len(l.t.pending))
	for _, r := range l.t.pending {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Record) int { return a.Trial - b.Trial })
	return out
}

// Admit checks the records an Update's function returned, as
// Storage.Update specifies: a zero Time becomes now, every record is
// validated against the study's records and the ones before it, all
// before any is kept, and a tell or fail equal (but for Time) to the
// stored completion of its trial is a no-op, with the stored record in its
// place in result. add lists the records to store. On success l holds them
// as a tentative change, which costs what it changes, not a copy of the
// study: call Commit once they are stored, or Rollback; until then Len
// and Records count them. On error l is as it was. An Add, Adopt or Admit
// rolls back a change left open.
func (l *Ledger) Admit(out []Record, now time.Time) (add, result []Record, err error) {
	l.Rollback()
	add, result, err = admit(l.t, out, now)
	if err != nil {
		return nil, nil, err
	}
	l.tentative = len(l.records)
	l.records = append(l.records, add...)
	return add, result, nil
}

// Commit keeps the records of the last Admit; without an open change it
// does nothing.
func (l *Ledger) Commit() {
	l.t.commit()
	l.tentative = -1
}

// Rollback takes back the records of the last Admit, leaving l as it was
// before it; without an open change it does nothing.
func (l *Ledger) Rollback() {
	if l.tentative < 0 {
		return
	}
	l.t.rollback()
	clear(l.records[l.tentative:])
	l.records = l.records[:l.tentative]
	l.tentative = -1
}
