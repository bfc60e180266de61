// Package storagetest is the conformance suite of the storage.Storage
// implementations, and the worker processes of their concurrency and fault
// tests. Every backend's tests run the same suite: [Run] for the contract
// of one or two handles on a store, [RunFleet] for many worker processes
// sharing one study.
package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// Backend describes a storage implementation to the suite.
type Backend struct {
	// New makes a fresh, empty store and returns a function that opens a
	// handle on it; two handles are two views of the same store, as two
	// processes would have. Handles are closed by the test's cleanup.
	New func(t *testing.T) (open func() storage.Storage)
	// DeadWorker returns the worker id (Record.Worker) of a worker that has
	// stopped; nil if the backend never reports stale trials.
	DeadWorker func(t *testing.T) string
	// Expire, if not nil, makes the heartbeat of trial (asked by
	// DeadWorker's id) older than the store's grace.
	Expire func(t *testing.T, s storage.Storage, name string, trial int)
}

var bg = context.Background()

func y(v float64) *float64 { return &v }

func ask(trial int, x ...float64) storage.Record {
	return storage.Record{Kind: storage.KindAsk, Trial: trial, Arm: -1, X: x}
}

func tell(trial int, v float64, x ...float64) storage.Record {
	return storage.Record{Kind: storage.KindTell, Trial: trial, Arm: -1, X: x, Y: y(v), Seconds: 0.25}
}

// appendRecs appends recs in one Update from 0 and fails the test on error.
func appendRecs(t *testing.T, s storage.Storage, name string, recs ...storage.Record) []storage.Record {
	t.Helper()
	out, err := s.Update(bg, name, 0, func(storage.View) ([]storage.Record, error) { return recs, nil })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return out
}

func records(t *testing.T, s storage.Storage, name string) []storage.Record {
	t.Helper()
	r, err := s.Records(bg, name, 0)
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	return r
}

// JSONOf is the JSON text of v; records compare equal field for field
// (times to the nanosecond) exactly when their JSON texts do.
func JSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Run runs the conformance suite on b.
func Run(t *testing.T, b Backend) {
	t.Run("CreateExistsNotFound", func(t *testing.T) {
		open := b.New(t)
		s, s2 := open(), open()
		if _, err := s.Study(bg, "a"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Study of a missing study: %v, want ErrNotFound", err)
		}
		if _, err := s.Records(bg, "a", 0); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Records of a missing study: %v, want ErrNotFound", err)
		}
		called := false
		_, err := s.Update(bg, "a", 0, func(storage.View) ([]storage.Record, error) { called = true; return nil, nil })
		if !errors.Is(err, storage.ErrNotFound) || called {
			t.Fatalf("Update of a missing study: %v (fn called %v), want ErrNotFound", err, called)
		}
		cfg := json.RawMessage(`{"policy":"bkb","d":2}`)
		h, err := s.CreateStudy(bg, "a", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "a" || h.Version != storage.Version || h.Created.IsZero() {
			t.Fatalf("header %+v", h)
		}
		for _, st := range []storage.Storage{s, s2} {
			if _, err := st.CreateStudy(bg, "a", nil); !errors.Is(err, storage.ErrExists) {
				t.Fatalf("second CreateStudy: %v, want ErrExists", err)
			}
			h2, err := st.Study(bg, "a")
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			_ = json.Unmarshal(h2.Config, &got)
			_ = json.Unmarshal(cfg, &want)
			if h2.Name != "a" || JSONOf(t, got) != JSONOf(t, want) || !h2.Created.Equal(h.Created) {
				t.Fatalf("Study: %+v, want %+v", h2, h)
			}
			if r := records(t, st, "a"); len(r) != 0 {
				t.Fatalf("new study has %d records", len(r))
			}
		}
	})

	t.Run("RecordsAreTheCallers", func(t *testing.T) {
		// Records hands over its slice (a study keeps it as its own):
		// whatever the caller writes there is not the store's. Each
		// store reads before it updates, so that one keeping what it
		// read (to spare reading it again) is tested.
		open := b.New(t)
		s := open()
		if _, err := s.CreateStudy(bg, "r", nil); err != nil {
			t.Fatal(err)
		}
		xs := []float64{0.2, 0.3, 0.4} // trial k+1's point
		want := appendRecs(t, s, "r", ask(0, 0.1), tell(0, 1, 0.1), ask(1, xs[0]))
		for k, st := range []storage.Storage{s, open()} {
			got := records(t, st, "r")
			for i := range got {
				got[i] = tell(9, 9, 0.9)
			}
			_ = append(got[:1], ask(7, 0.7))
			more, err := st.Update(bg, "r", 0, func(v storage.View) ([]storage.Record, error) {
				if g, w := JSONOf(t, v.New), JSONOf(t, want); g != w {
					return nil, fmt.Errorf("the view holds\n%s\nwant\n%s", g, w)
				}
				return []storage.Record{tell(1+k, 2, xs[k]), ask(2+k, xs[k+1])}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, more...)
			if g, w := JSONOf(t, records(t, st, "r")), JSONOf(t, want); g != w {
				t.Fatalf("records after the caller wrote over its copy:\n%s\nwant\n%s", g, w)
			}
		}
	})

	t.Run("UpdateAllOrNone", func(t *testing.T) {
		open := b.New(t)
		s, s2 := open(), open()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		// The second record contradicts the first: neither is stored.
		_, err := s.Update(bg, "s", 0, func(storage.View) ([]storage.Record, error) {
			return []storage.Record{ask(0, 0.5), tell(0, 1, 0.7)}, nil
		})
		if err == nil {
			t.Fatal("Update of contradicting records succeeded")
		}
		// An error of fn is returned as is and nothing is stored.
		boom := errors.New("boom")
		if _, err := s.Update(bg, "s", 0, func(storage.View) ([]storage.Record, error) {
			return []storage.Record{ask(0, 0.5)}, boom
		}); !errors.Is(err, boom) {
			t.Fatalf("fn error: got %v", err)
		}
		for _, st := range []storage.Storage{s, s2} {
			if r := records(t, st, "s"); len(r) != 0 {
				t.Fatalf("after failed Updates: %d records stored, want 0", len(r))
			}
		}
		out := appendRecs(t, s, "s", ask(0, 0.5), tell(0, 1, 0.5), ask(1, 0.25))
		if len(out) != 3 || out[0].Time.IsZero() {
			t.Fatalf("Update returned %+v", out)
		}
		for _, st := range []storage.Storage{s, s2} {
			if got := records(t, st, "s"); JSONOf(t, got) != JSONOf(t, out) {
				t.Fatalf("stored %s\nwant %s", JSONOf(t, got), JSONOf(t, out))
			}
		}
		// View.From/New: what the caller has not seen, clamped.
		for _, c := range []struct{ from, wantFrom, wantN int }{{0, 0, 3}, {1, 1, 2}, {3, 3, 0}, {9, 3, 0}, {-2, 0, 3}} {
			if _, err := s2.Update(bg, "s", c.from, func(v storage.View) ([]storage.Record, error) {
				if v.From != c.wantFrom || len(v.New) != c.wantN {
					t.Errorf("from %d: View.From %d, %d new, want %d, %d", c.from, v.From, len(v.New), c.wantFrom, c.wantN)
				}
				if len(v.New) > 0 && JSONOf(t, v.New) != JSONOf(t, out[v.From:]) {
					t.Errorf("from %d: View.New %s", c.from, JSONOf(t, v.New))
				}
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := s2.Records(bg, "s", 2)
		if err != nil || len(r) != 1 || r[0].Trial != 1 {
			t.Fatalf("Records from 2: %+v, %v", r, err)
		}
	})

	t.Run("InvalidRecordRejected", func(t *testing.T) {
		s := b.New(t)()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		appendRecs(t, s, "s", ask(0, 0.5, 0.5))
		bad := map[string]storage.Record{
			"NaN x":          ask(1, math.NaN(), 0),
			"no kind":        {Trial: 1, Arm: -1, X: []float64{1, 1}},
			"other dim":      ask(1, 0.5),
			"tell without y": {Kind: storage.KindTell, Trial: 0, Arm: -1, X: []float64{0.5, 0.5}},
			"inf y":          tell(0, math.Inf(1), 0.5, 0.5),
			"other x":        tell(0, 1, 0.5, 0.25),
			"negative trial": ask(-1, 0.5, 0.5),
		}
		for what, r := range bad {
			if _, err := s.Update(bg, "s", 0, func(storage.View) ([]storage.Record, error) {
				return []storage.Record{r}, nil
			}); err == nil {
				t.Errorf("%s: accepted", what)
			}
		}
		if r := records(t, s, "s"); len(r) != 1 {
			t.Fatalf("%d records after rejected ones, want 1", len(r))
		}
	})

	t.Run("IdempotentTell", func(t *testing.T) {
		open := b.New(t)
		s, s2 := open(), open()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		tl := tell(0, 2.5, 0.5)
		tl.Params = json.RawMessage(`{"a": 1, "b": "x"}`)
		tl.Worker = "w1"
		out := appendRecs(t, s, "s", ask(0, 0.5), tl)
		// The same tell again, from another handle, with another time: a
		// no-op returning the stored record.
		again := tl
		again.Time = time.Now().Add(time.Hour)
		got := appendRecs(t, s2, "s", again)
		if len(got) != 1 || JSONOf(t, got[0]) != JSONOf(t, out[1]) {
			t.Fatalf("repeated tell returned %s, want the stored %s", JSONOf(t, got), JSONOf(t, out[1]))
		}
		if r := records(t, s, "s"); len(r) != 2 {
			t.Fatalf("%d records after a repeated tell, want 2", len(r))
		}
		other := tl
		other.Y = y(2.6)
		fail := storage.Record{Kind: storage.KindFail, Trial: 0, Arm: -1, X: []float64{0.5}, Error: "x"}
		for what, r := range map[string]storage.Record{"another y": other, "a fail": fail} {
			if _, err := s2.Update(bg, "s", 0, func(storage.View) ([]storage.Record, error) {
				return []storage.Record{r}, nil
			}); err == nil {
				t.Errorf("second completion with %s accepted", what)
			}
		}
		// A repeated fail is a no-op too.
		fail.Trial = 1
		appendRecs(t, s, "s", ask(1, 0.7))
		fail.X = []float64{0.7}
		appendRecs(t, s, "s", fail)
		appendRecs(t, s2, "s", fail)
		if r := records(t, s, "s"); len(r) != 4 {
			t.Fatalf("%d records, want 4", len(r))
		}
	})

	t.Run("EnqueueThenAsk", func(t *testing.T) {
		s := b.New(t)()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		enq := storage.Record{Kind: storage.KindEnqueue, Trial: 0, Arm: 3, X: []float64{0.1, 0.2}, Params: json.RawMessage(`{"p":1}`)}
		appendRecs(t, s, "s", enq)
		wrong := storage.Record{Kind: storage.KindAsk, Trial: 0, Arm: 3, X: []float64{0.1, 0.3}}
		if _, err := s.Update(bg, "s", 0, func(storage.View) ([]storage.Record, error) {
			return []storage.Record{wrong}, nil
		}); err == nil {
			t.Fatal("ask of an enqueued trial with another point accepted")
		}
		var st storage.State
		if _, err := s.Update(bg, "s", 0, func(v storage.View) ([]storage.Record, error) {
			var err error
			st, err = storage.Summarize(v.New)
			if err != nil {
				return nil, err
			}
			w := st.Waiting[0]
			return []storage.Record{{Kind: storage.KindAsk, Trial: w.Trial, Arm: w.Arm, X: w.X}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(st.Waiting) != 1 || st.NextTrial != 1 {
			t.Fatalf("state before the ask: %+v", st)
		}
		st, err := storage.Summarize(records(t, s, "s"))
		if err != nil || len(st.Waiting) != 0 || len(st.Pending) != 1 || st.Pending[0].Arm != 3 {
			t.Fatalf("state after the ask: %+v, %v", st, err)
		}
	})

	t.Run("Stale", func(t *testing.T) {
		if b.DeadWorker == nil {
			t.Skip("this backend reports no stale trials")
		}
		open := b.New(t)
		s, s2 := open(), open()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		live := storage.NewWorkerID()
		dead := b.DeadWorker(t)
		a0, a1, a2 := ask(0, 0.1), ask(1, 0.2), ask(2, 0.3)
		a0.Worker, a1.Worker, a2.Worker = dead, live, dead
		appendRecs(t, s, "s", a0, a1, a2, tell(2, 1, 0.3))
		if err := s.Heartbeat(bg, "s", []int{1}); err != nil {
			t.Fatal(err)
		}
		if b.Expire != nil {
			b.Expire(t, s, "s", 0)
			b.Expire(t, s, "s", 2)
		}
		var stale []int
		if _, err := s2.Update(bg, "s", 0, func(v storage.View) ([]storage.Record, error) {
			stale = v.Stale
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		// Trial 2 was completed; trial 1's worker is alive.
		if !slices.Equal(stale, []int{0}) {
			t.Fatalf("View.Stale = %v, want [0]", stale)
		}
		// The caller fails it; then nothing is stale.
		f := storage.Record{Kind: storage.KindFail, Trial: 0, Arm: -1, X: []float64{0.1}, Error: "worker stopped", Worker: dead}
		appendRecs(t, s2, "s", f)
		if _, err := s.Update(bg, "s", 0, func(v storage.View) ([]storage.Record, error) {
			stale = v.Stale
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(stale) != 0 {
			t.Fatalf("View.Stale = %v after the fail, want none", stale)
		}
	})

	// A stale trial asked again belongs to its new worker from that
	// moment: it is not stale while that worker lives, so no other worker
	// takes it too (one live owner per trial).
	t.Run("RequeuedOwner", func(t *testing.T) {
		if b.DeadWorker == nil {
			t.Skip("this backend reports no stale trials")
		}
		open := b.New(t)
		s, s2 := open(), open()
		if _, err := s.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		a0 := ask(0, 0.1)
		a0.Worker = b.DeadWorker(t)
		appendRecs(t, s, "s", a0)
		if b.Expire != nil {
			b.Expire(t, s, "s", 0)
		}
		staleNow := func(st storage.Storage) []int {
			t.Helper()
			var stale []int
			if _, err := st.Update(bg, "s", 0, func(v storage.View) ([]storage.Record, error) {
				stale = v.Stale
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			return stale
		}
		if got := staleNow(s2); !slices.Equal(got, []int{0}) {
			t.Fatalf("View.Stale = %v, want [0]", got)
		}
		again := ask(0, 0.1)
		again.Worker = storage.NewWorkerID() // this process: alive
		appendRecs(t, s2, "s", again)
		if got := staleNow(s); len(got) != 0 {
			t.Fatalf("View.Stale = %v after a live worker asked the trial again, want none", got)
		}
		st, err := storage.Summarize(records(t, s, "s"))
		if err != nil || len(st.Pending) != 1 || st.Pending[0].Worker != again.Worker {
			t.Fatalf("pending %+v (%v), want the trial held by its latest ask", st.Pending, err)
		}
	})

	t.Run("CopyRoundTrip", func(t *testing.T) {
		src := b.New(t)()
		cfg := json.RawMessage(`{"policy":"bkb"}`)
		if _, err := src.CreateStudy(bg, "c", cfg); err != nil {
			t.Fatal(err)
		}
		recs := StudyRecords()
		want := appendRecs(t, src, "c", recs...)
		mid, dst := b.New(t)(), b.New(t)()
		if err := storage.Copy(bg, mid, src, "c"); err != nil {
			t.Fatal(err)
		}
		if err := storage.Copy(bg, dst, mid, "c"); err != nil {
			t.Fatal(err)
		}
		if got := records(t, dst, "c"); JSONOf(t, got) != JSONOf(t, want) {
			t.Fatalf("after a round trip:\n%s\nwant\n%s", JSONOf(t, got), JSONOf(t, want))
		}
		if err := storage.Copy(bg, dst, src, "c"); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("Copy onto an existing study: %v, want ErrExists", err)
		}
	})
}

// StudyRecords returns records of every kind and field, with times to the
// nanosecond, for copy round trips.
func StudyRecords() []storage.Record {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 1001 * time.Microsecond) }
	return []storage.Record{
		{Kind: storage.KindEnqueue, Trial: 0, Arm: 4, X: []float64{0.25, 1e-300}, Params: json.RawMessage(`{"lr": 0.001, "layers": 3, "act": "relu"}`), Time: at(0)},
		{Kind: storage.KindAsk, Trial: 0, Arm: 4, X: []float64{0.25, 1e-300}, Params: json.RawMessage(`{"lr": 0.001, "layers": 3, "act": "relu"}`), Worker: "h:1:ab", Time: at(1)},
		{Kind: storage.KindAsk, Trial: 1, Arm: -1, X: []float64{math.Pi, -0.0}, Worker: "h:2:cd", Time: at(2)},
		{Kind: storage.KindTell, Trial: 0, Arm: 4, X: []float64{0.25, 1e-300}, Y: y(-1.5e-7), Worker: "h:1:ab", Time: at(3), Seconds: 1.25},
		{Kind: storage.KindFail, Trial: 1, Arm: -1, X: []float64{math.Pi, -0.0}, Error: "plugin \"x\" timed out\nafter 60 s", Time: at(4), Seconds: 60},
		{Kind: storage.KindAsk, Trial: 2, Arm: 0, X: []float64{1, 2}, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
		{Kind: storage.KindAsk, Trial: 3, Arm: 1, X: []float64{3, 4}, Worker: "h:3:ef", Time: at(5)},
		{Kind: storage.KindReport, Trial: 3, Arm: 1, X: []float64{3, 4}, Step: 0, Y: y(0.5), Time: at(6)},
		{Kind: storage.KindReport, Trial: 3, Arm: 1, X: []float64{3, 4}, Step: 7, Y: y(-2.25), Time: at(7), Seconds: 0.5},
		{Kind: storage.KindPrune, Trial: 3, Arm: 1, X: []float64{3, 4}, Step: 7, Y: y(-2.25), Time: at(8), Seconds: 3},
		{Kind: storage.KindAsk, Trial: 4, Arm: 1, X: []float64{3, 4}, Time: at(9)},
		// Several objectives and constraint values.
		{Kind: storage.KindTell, Trial: 4, Arm: 1, X: []float64{3, 4}, Y: y(2.5), Values: []float64{2.5, -1e-300, 7},
			Constraints: []float64{0.5, -0.0, -3}, Time: at(10), Seconds: 0.5},
	}
}
