package storage

import (
	"fmt"
	"slices"
)

// State is what a study's records add up to, as needed to resume it.
type State struct {
	// Completed holds the tell and fail records, one per completed trial,
	// in journal order.
	Completed []Record
	// Pending holds, ordered by trial, the ask records of trials that have
	// neither a tell nor a fail: evaluations that were handed out and never
	// finished (typically because the study was interrupted).
	Pending []Record
	// Waiting holds, ordered by trial, the enqueue records of trials not
	// asked yet: points to hand out before any new suggestion.
	Waiting []Record
	// NextTrial is one more than the largest trial number seen, 0 when
	// there are no records: the number to give the next new trial.
	NextTrial int
	// Tells and Fails count the completed trials by outcome.
	Tells, Fails int
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
	next      int
	tells     int
	fails     int
}

func newTracker() *tracker {
	return &tracker{pending: make(map[int]Record), waiting: make(map[int]Record), done: make(map[int]string)}
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
		if r.Kind == KindAsk {
			return fmt.Errorf("trial %d: ask after the trial was completed (by a %s)", r.Trial, prev)
		}
		return fmt.Errorf("trial %d: duplicate completion: %s after an earlier %s", r.Trial, r.Kind, prev)
	}
	if ask, ok := t.pending[r.Trial]; ok {
		if ask.Arm != r.Arm || !slices.Equal(ask.X, r.X) {
			if r.Kind == KindAsk {
				return fmt.Errorf("trial %d: asked twice with different points (arm %d x %v, then arm %d x %v)", r.Trial, ask.Arm, ask.X, r.Arm, r.X)
			}
			return fmt.Errorf("trial %d: %s for arm %d x %v, but the trial asked arm %d x %v", r.Trial, r.Kind, r.Arm, r.X, ask.Arm, ask.X)
		}
	}
	return nil
}

// add checks r and applies it.
func (t *tracker) add(r Record) error {
	if err := t.check(r); err != nil {
		return err
	}
	r.X = slices.Clone(r.X)
	if r.Y != nil {
		y := *r.Y
		r.Y = &y
	}
	t.dim = len(r.X)
	t.next = max(t.next, r.Trial+1)
	switch r.Kind {
	case KindEnqueue:
		t.waiting[r.Trial] = r
	case KindAsk:
		delete(t.waiting, r.Trial)
		if _, ok := t.pending[r.Trial]; !ok {
			t.pending[r.Trial] = r
		}
	default:
		delete(t.pending, r.Trial)
		t.done[r.Trial] = r.Kind
		t.completed = append(t.completed, r)
		if r.Kind == KindTell {
			t.tells++
		} else {
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
