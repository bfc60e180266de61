package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func fp(v float64) *float64 { return &v }

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// sample returns a small consistent study: trial 0 told, trial 1 failed,
// trial 2 told without an ask, trial 3 pending.
func sample() []Record {
	return []Record{
		{Kind: KindAsk, Trial: 0, Arm: 4, X: []float64{0.5, 1}, Time: t0},
		{Kind: KindAsk, Trial: 1, Arm: 7, X: []float64{0.1, -2}, Time: t0.Add(time.Second)},
		{Kind: KindTell, Trial: 0, Arm: 4, X: []float64{0.5, 1}, Y: fp(0.83), Time: t0.Add(2 * time.Second), Seconds: 2.01},
		{Kind: KindFail, Trial: 1, Arm: 7, X: []float64{0.1, -2}, Error: "plugin timed out", Time: t0.Add(3 * time.Second), Seconds: 60},
		{Kind: KindTell, Trial: 2, Arm: -1, X: []float64{1e-300, 3}, Y: fp(-1.5e10), Time: t0.Add(4 * time.Second)},
		{Kind: KindAsk, Trial: 3, Arm: 0, X: []float64{0, 0}, Time: t0.Add(5 * time.Second)},
	}
}

func newJournal(t *testing.T) (string, *Journal) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := Create(path, Header{Config: json.RawMessage(`{"policy":"bkb","seed":1}`), Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return path, j
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	for _, r := range sample() {
		if err := j.Append(r); err != nil {
			t.Fatalf("Append(%+v): %v", r, err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := j.Append(sample()[0]); err == nil {
		t.Error("Append after Close succeeded")
	}

	h, recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 1 || !h.Created.Equal(t0) || string(h.Config) != `{"policy":"bkb","seed":1}` {
		t.Errorf("header = %+v", h)
	}
	if !reflect.DeepEqual(recs, sample()) {
		t.Errorf("records differ:\n got %+v\nwant %+v", recs, sample())
	}

	j2, recs2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if j2.Recovered() != "" {
		t.Errorf("Recovered() = %q on an intact journal", j2.Recovered())
	}
	if !reflect.DeepEqual(recs2, sample()) || !reflect.DeepEqual(j2.Header(), h) {
		t.Errorf("Open returned different content")
	}
	if err := j2.Append(Record{Kind: KindTell, Trial: 3, Arm: 0, X: []float64{0, 0}, Y: fp(1)}); err != nil {
		t.Fatal(err)
	}
	st := j2.State()
	if st.NextTrial != 4 || st.Tells != 3 || st.Fails != 1 || len(st.Pending) != 0 {
		t.Errorf("State() = %+v", st)
	}
}

func TestCreateDefaultsAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	j, err := Create(path, Header{})
	if err != nil {
		t.Fatal(err)
	}
	h := j.Header()
	if h.Version != Version || h.Created.IsZero() || h.Created.Location() != time.UTC || string(h.Config) != "null" {
		t.Errorf("defaults not applied: %+v", h)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, Header{}); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create on existing file: %v, want ErrExist", err)
	}
	if _, err := Create(filepath.Join(dir, "v2"), Header{Version: 2}); err == nil {
		t.Error("Create with version 2 succeeded")
	}
	if _, err := Create(filepath.Join(dir, "bad"), Header{Config: json.RawMessage(`{oops`)}); err == nil {
		t.Error("Create with invalid config JSON succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Create left a file behind: %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of missing file: %v", err)
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	if _, _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open while locked: %v, want ErrLocked", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2, _, err := Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Errorf("Open while reopened: %v, want ErrLocked", err)
	}
	if _, _, err := ReadFile(path); err != nil {
		t.Errorf("ReadFile of a locked journal: %v", err)
	}
	if err := j2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTruncatedTailRecovery(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	recs := sample()[:3]
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	intact, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(sample()[3])
	for _, cut := range []int{1, 10, len(full) - 1} {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(append([]byte(nil), intact...), full[:cut]...)); err != nil {
			t.Fatal(err)
		}
		f.Close()

		// Read (no repair) ignores the partial line too.
		if _, got, err := ReadFile(path); err != nil || len(got) != 3 {
			t.Fatalf("cut %d: ReadFile = %d records, %v", cut, len(got), err)
		}
		j, got, err := Open(path)
		if err != nil {
			t.Fatalf("cut %d: Open: %v", cut, err)
		}
		if !reflect.DeepEqual(got, recs) {
			t.Errorf("cut %d: records = %+v", cut, got)
		}
		if w := j.Recovered(); !strings.Contains(w, "journal.jsonl:5: dropped an incomplete final line") {
			t.Errorf("cut %d: Recovered() = %q", cut, w)
		}
		now, _ := os.ReadFile(path)
		if !bytes.Equal(now, intact) {
			t.Errorf("cut %d: file not truncated back to the last complete line", cut)
		}
		if err := j.Append(sample()[3]); err != nil {
			t.Fatal(err)
		}
		j.Close()
		_, got, err = ReadFile(path)
		if err != nil || !reflect.DeepEqual(got, sample()[:4]) {
			t.Errorf("cut %d: after append: %+v, %v", cut, got, err)
		}
		if err := os.WriteFile(path, intact, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMissingFinalNewline(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	if err := j.Append(sample()[0]); err != nil {
		t.Fatal(err)
	}
	j.Close()
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.TrimSuffix(b, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	j, recs, err := Open(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Open = %d records, %v", len(recs), err)
	}
	if !strings.Contains(j.Recovered(), "missing newline") {
		t.Errorf("Recovered() = %q", j.Recovered())
	}
	if err := j.Append(sample()[1]); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, recs, err := ReadFile(path); err != nil || len(recs) != 2 {
		t.Errorf("after append: %d records, %v", len(recs), err)
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	header := `{"version":1,"created":"2025-01-02T03:04:05Z","config":{}}` + "\n"
	ask := `{"kind":"ask","trial":0,"arm":1,"x":[1,2],"time":"2025-01-02T03:04:05Z"}` + "\n"
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "empty journal"},
		{"blank first line", "\n" + ask, "line 1: empty first line"},
		{"record first", ask, "line 1: invalid header: the first line is a record"},
		{"no version", `{"created":"2025-01-02T03:04:05Z"}` + "\n", `missing "version"`},
		{"future version", `{"version":2}` + "\n", "unsupported journal version 2"},
		{"truncated header", header[:20], "header line is incomplete"},
		{"garbage middle", header + ask + "hello\n" + ask, "line 3: invalid record: not a JSON object"},
		{"bad json middle", header + ask + `{"kind":"tell",` + "\n" + ask, "line 3: invalid record: unexpected end of JSON input"},
		{"bad json final with newline", header + ask + `{"kind":"tell",` + "\n", "line 3: invalid record"},
		{"unknown kind", header + `{"kind":"poke","trial":0,"arm":0,"x":[1]}` + "\n", `line 2: invalid record: unknown kind "poke"`},
		{"negative trial", header + `{"kind":"ask","trial":-1,"arm":0,"x":[1]}` + "\n", "negative trial -1"},
		{"bad arm", header + `{"kind":"ask","trial":0,"arm":-2,"x":[1]}` + "\n", "arm -2"},
		{"no x", header + `{"kind":"ask","trial":0,"arm":0}` + "\n", `missing "x"`},
		{"tell without y", header + `{"kind":"tell","trial":0,"arm":0,"x":[1]}` + "\n", `tell without "y"`},
		{"ask with y", header + `{"kind":"ask","trial":0,"arm":0,"x":[1],"y":2}` + "\n", `ask with "y"`},
		{"huge y", header + `{"kind":"tell","trial":0,"arm":0,"x":[1],"y":1e999}` + "\n", "line 2: invalid record"},
		{"huge x", header + `{"kind":"ask","trial":0,"arm":0,"x":[1e999]}` + "\n", "line 2: invalid record"},
		{"tell with error", header + `{"kind":"tell","trial":0,"arm":0,"x":[1],"y":1,"error":"e"}` + "\n", `tell with "error"`},
		{"negative seconds", header + `{"kind":"fail","trial":0,"arm":0,"x":[1],"seconds":-1}` + "\n", "seconds = -1"},
	}
	for _, tc := range cases {
		_, _, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Read error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestMalformedMiddleLineNamesFile(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	for _, r := range sample()[:4] {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[3] = lines[3][:len(lines[3])/2] + "\n" // line 4: a torn record, not at the end
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(path)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 || le.Path != path {
		t.Fatalf("Open error %v, want a *LineError at %s:4", err, path)
	}
	if want := path + ":4: invalid record: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
	// The failed Open must not hold the lock or modify the file.
	if after, _ := os.ReadFile(path); string(after) != strings.Join(lines, "") {
		t.Error("failed Open modified the file")
	}
	if _, _, err := Open(path); errors.Is(err, ErrLocked) {
		t.Error("failed Open kept the lock")
	}
}

func TestDuplicateTell(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	tell := Record{Kind: KindTell, Trial: 0, Arm: 1, X: []float64{1}, Y: fp(2)}
	if err := j.Append(tell); err != nil {
		t.Fatal(err)
	}
	err := j.Append(tell)
	if err == nil || !strings.Contains(err.Error(), "trial 0: duplicate completion: tell after an earlier tell") {
		t.Fatalf("second tell: %v", err)
	}
	j.Close()
	// Append rejected it, so the journal stays consistent.
	if _, recs, err := ReadFile(path); err != nil || len(recs) != 1 {
		t.Fatalf("after rejected append: %d records, %v", len(recs), err)
	}
	// A duplicate written by someone else is caught by Open and Summarize.
	line, _ := json.Marshal(tell)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(append(line, '\n'))
	f.Close()
	if _, _, err := Open(path); err == nil || !strings.Contains(err.Error(), "journal.jsonl:3: trial 0: duplicate completion") {
		t.Errorf("Open of a journal with a duplicate tell: %v", err)
	}
	_, recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Summarize(recs); err == nil || !strings.Contains(err.Error(), "records[1]: trial 0: duplicate completion") {
		t.Errorf("Summarize: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	st, err := Summarize(sample())
	if err != nil {
		t.Fatal(err)
	}
	if st.NextTrial != 4 || st.Tells != 2 || st.Fails != 1 || st.Dim != 2 {
		t.Errorf("counts: %+v", st)
	}
	if len(st.Completed) != 3 || st.Completed[0].Trial != 0 || st.Completed[1].Kind != KindFail || st.Completed[2].Trial != 2 {
		t.Errorf("Completed = %+v", st.Completed)
	}
	if len(st.Pending) != 1 || st.Pending[0].Trial != 3 {
		t.Errorf("Pending = %+v", st.Pending)
	}
	x, y := st.Observations()
	if !reflect.DeepEqual(x, [][]float64{{0.5, 1}, {1e-300, 3}}) || !reflect.DeepEqual(y, []float64{0.83, -1.5e10}) {
		t.Errorf("Observations = %v, %v", x, y)
	}
	if empty, err := Summarize(nil); err != nil || empty.NextTrial != 0 || len(empty.Pending) != 0 {
		t.Errorf("Summarize(nil) = %+v, %v", empty, err)
	}

	ask := func(trial, arm int, x ...float64) Record { return Record{Kind: KindAsk, Trial: trial, Arm: arm, X: x} }
	tell := func(trial, arm int, x ...float64) Record {
		return Record{Kind: KindTell, Trial: trial, Arm: arm, X: x, Y: fp(1)}
	}
	fail := func(trial, arm int, x ...float64) Record {
		return Record{Kind: KindFail, Trial: trial, Arm: arm, X: x, Error: "e"}
	}
	cases := []struct {
		name    string
		recs    []Record
		want    string // error substring; "" for success
		pending []int
		next    int
	}{
		{"pending order", []Record{ask(5, 0, 1), ask(2, 1, 2), ask(9, 2, 3), tell(2, 1, 2)}, "", []int{5, 9}, 10},
		{"re-ask pending", []Record{ask(0, 1, 1), ask(0, 1, 1), tell(0, 1, 1)}, "", nil, 1},
		{"tell then fail", []Record{tell(0, 1, 1), fail(0, 1, 1)}, "records[1]: trial 0: duplicate completion: fail after an earlier tell", nil, 0},
		{"fail then fail", []Record{ask(3, 1, 1), fail(3, 1, 1), fail(3, 1, 1)}, "records[2]: trial 3: duplicate completion", nil, 0},
		{"ask after tell", []Record{tell(0, 1, 1), ask(0, 1, 1)}, "ask after the trial was completed", nil, 0},
		{"tell other point", []Record{ask(0, 1, 1), tell(0, 1, 2)}, "trial 0: tell for arm 1 x [2], but the trial asked arm 1 x [1]", nil, 0},
		{"tell other arm", []Record{ask(0, 1, 1), tell(0, 2, 1)}, "but the trial asked arm 1", nil, 0},
		{"ask twice differently", []Record{ask(0, 1, 1), ask(0, 1, 3)}, "asked twice with different points", nil, 0},
		{"dimension change", []Record{ask(0, 1, 1, 2), ask(1, 1, 1)}, "x has 1 coordinates, earlier records have 2", nil, 0},
		{"invalid record", []Record{{Kind: KindTell, X: []float64{1}, Y: fp(math.NaN())}}, "records[0]: invalid tell record for trial 0: y = NaN is not finite", nil, 0},
	}
	for _, tc := range cases {
		st, err := Summarize(tc.recs)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Summarize error %v, want %q", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var pend []int
		for _, r := range st.Pending {
			pend = append(pend, r.Trial)
		}
		if !reflect.DeepEqual(pend, tc.pending) || st.NextTrial != tc.next {
			t.Errorf("%s: pending %v next %d, want %v next %d", tc.name, pend, st.NextTrial, tc.pending, tc.next)
		}
	}
}

func TestAppendValidation(t *testing.T) {
	t.Parallel()
	path, j := newJournal(t)
	bad := []Record{
		{Kind: "tel", Trial: 0, Arm: 0, X: []float64{1}},
		{Kind: KindTell, Trial: 0, Arm: 0, X: []float64{1}, Y: fp(math.Inf(1))},
		{Kind: KindAsk, Trial: 0, Arm: 0, X: []float64{math.NaN()}},
		{Kind: KindAsk, Trial: -3, Arm: 0, X: []float64{1}},
	}
	for _, r := range bad {
		if err := j.Append(r); err == nil {
			t.Errorf("Append(%+v) succeeded", r)
		}
	}
	good := Record{Kind: KindAsk, Trial: 0, Arm: 0, X: []float64{1}}
	if err := j.Append(good); err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, recs, err := ReadFile(path)
	if err != nil || len(recs) != 1 || recs[0].Time.IsZero() {
		t.Errorf("journal after rejected appends: %+v, %v", recs, err)
	}
}

func FuzzRead(f *testing.F) {
	header := `{"version":1,"created":"2025-01-02T03:04:05Z","config":{"a":1}}` + "\n"
	f.Add([]byte(header))
	f.Add([]byte(header + `{"kind":"ask","trial":0,"arm":1,"x":[1,2],"time":"2025-01-02T03:04:05Z"}` + "\n"))
	f.Add([]byte(header + `{"kind":"tell","trial":0,"arm":-1,"x":[1e-300],"y":-2.5,"seconds":1}` + "\n" + `{"kind":"fa`))
	f.Add([]byte(header + "\n\n" + `{"kind":"fail","trial":3,"arm":1,"x":[0],"error":"x"}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte("not json\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recs, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if h.Version != Version {
			t.Errorf("accepted version %d", h.Version)
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Errorf("Read returned an invalid record %+v: %v", r, err)
			}
		}
		_, _ = Summarize(recs) // must not panic either
	})
}

func TestSummarizeEnqueue(t *testing.T) {
	t.Parallel()
	y := 1.5
	enq := Record{Kind: KindEnqueue, Trial: 0, Arm: -1, X: []float64{0.5}}
	ask := Record{Kind: KindAsk, Trial: 0, Arm: -1, X: []float64{0.5}}
	tell := Record{Kind: KindTell, Trial: 0, Arm: -1, X: []float64{0.5}, Y: &y}
	s, err := Summarize([]Record{enq})
	if err != nil || len(s.Waiting) != 1 || len(s.Pending) != 0 || s.NextTrial != 1 {
		t.Fatalf("after enqueue: %+v, %v", s, err)
	}
	s, err = Summarize([]Record{enq, ask})
	if err != nil || len(s.Waiting) != 0 || len(s.Pending) != 1 {
		t.Fatalf("after ask: %+v, %v", s, err)
	}
	if s, err = Summarize([]Record{enq, ask, tell}); err != nil || s.Tells != 1 {
		t.Fatalf("after tell: %+v, %v", s, err)
	}
	other := ask
	other.X = []float64{0.25}
	for name, recs := range map[string][]Record{
		"tell before ask":   {enq, tell},
		"ask another point": {enq, other},
		"enqueue twice":     {enq, enq},
		"enqueue an asked":  {ask, enq},
	} {
		if _, err := Summarize(recs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
