package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// Trial leases. An ask answers each trial with a lease, a secret that
// heartbeat, report and tell (or fail, or prune) of the trial must
// present while it is pending (header X-BKB-Lease, or the "lease" field of
// the body); without it they are refused with 403. So no other client
// can keep a trial alive, report on it or tell it a value while the
// client it was handed out to evaluates it, and a trial asked by a
// `bkb worker` (or a `bkb ask`), whose lease no client was ever given, is
// out of the API's reach.
//
// The lease is not stored: it is HMAC-SHA256(key, study, trial, time of
// the trial's latest ask record), cut to 128 bits, where key is 32 random
// bytes kept as the study attribute "bkb.serve.key" (the journal's .attrs
// file, or the database's attribute table), written by the first server
// that hands out one of the study's trials. It therefore survives a
// restart, on every storage, with nothing written per ask; a trial asked
// again (its client stopped heartbeating) has a new ask time and so a new
// lease, and the old client's lease no longer works. (The asking worker's
// id would not do: one server asks every trial with the same id.) The key
// never leaves the storage through the API (the study's attributes in its
// answers leave out "bkb.serve." keys, and clients cannot set "bkb."
// keys); who can read the storage can compute leases, as they could write
// the records themselves. A storage that keeps no attributes gets a key in
// memory: its leases end with the server. Two servers that hand out the
// first trials of one study at the same moment may each store a key: the
// one stored last is the key, which the other reads again at the first
// lease it cannot verify; the leases it made with its own are then
// refused (403: those clients ask again).

// LeaseHeader is the request header that carries a trial's lease.
const LeaseHeader = "X-BKB-Lease"

// keyAttr is the study attribute holding the lease key (hex).
const keyAttr = "bkb.serve.key"

// hiddenAttrPrefix starts the attribute keys the API never shows.
const hiddenAttrPrefix = "bkb.serve."

// leaseOf is the lease of a trial whose latest ask record was stored at
// asked.
func leaseOf(key []byte, name string, trial int, asked time.Time) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "bkb lease v1\x00%s\x00%d\x00%s", name, trial, asked.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// studyKey returns the lease key of a study, read from its attributes or,
// the first time, made and stored there; with reload it is read again
// from the attributes even if this server knows one.
func (s *Server) studyKey(ctx context.Context, name string, reload ...bool) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	s.mu.Lock()
	k, ok := s.keys[name]
	s.mu.Unlock()
	at, durable := s.opt.Storage.(storage.Attributes)
	if ok && (!durable || len(reload) == 0 || !reload[0]) {
		return k, nil
	}
	var err error
	if durable {
		stored, err := storedKey(ctx, at, name)
		if err != nil {
			return nil, err
		}
		if stored != nil {
			k = stored
		}
	}
	if k == nil {
		k = make([]byte, 32)
		rand.Read(k) // never fails (crypto/rand panics rather)
		if durable {
			v, _ := json.Marshal(hex.EncodeToString(k))
			if err = at.SetAttr(ctx, name, storage.Attr{Trial: -1, Key: keyAttr, Value: v}); err != nil {
				return nil, fmt.Errorf("study %s: storing the key of trial leases: %w", name, err)
			}
			// Another server on the same storage may have stored its
			// key at the same time: the stored one is the key.
			if stored, err := storedKey(ctx, at, name); err == nil && stored != nil {
				k = stored
			}
		}
	}
	s.mu.Lock()
	s.keys[name] = k
	s.mu.Unlock()
	return k, nil
}

// storedKey returns the lease key in a study's attributes, nil if none.
func storedKey(ctx context.Context, at storage.Attributes, name string) ([]byte, error) {
	attrs, err := at.Attrs(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, a := range attrs {
		if a.Trial != -1 || a.Key != keyAttr {
			continue
		}
		var h string
		if json.Unmarshal(a.Value, &h) == nil {
			if b, err := hex.DecodeString(h); err == nil && len(b) == 32 {
				return b, nil
			}
		}
	}
	return nil, nil
}

// trialResult returns a trial of st; a pending trial's Time is that of
// its latest ask.
func trialResult(st *study.Study, trial int) (study.TrialResult, bool) {
	for _, t := range st.Trials() {
		if t.Number == trial {
			return t, true
		}
	}
	return study.TrialResult{}, false
}

// givenLease returns the lease a request presents: the header, else the
// body's field.
func givenLease(r *http.Request, field string) string {
	if h := strings.TrimSpace(r.Header.Get(LeaseHeader)); h != "" {
		return h
	}
	return strings.TrimSpace(field)
}

// leaseValid reports whether lease is the lease of trial t (pending) of
// the study name. A lease that does not match is checked again with the
// key read anew from the storage (another server may have replaced the key
// this one read: see the race above).
func (s *Server) leaseValid(ctx context.Context, name string, t study.TrialResult, lease string) (bool, error) {
	if lease == "" {
		return false, nil
	}
	for _, reload := range []bool{false, true} {
		key, err := s.studyKey(ctx, name, reload)
		if err != nil {
			return false, err
		}
		if hmac.Equal([]byte(lease), []byte(leaseOf(key, name, t.Number, t.Time))) {
			return true, nil
		}
	}
	return false, nil
}

// checkLease answers 403 and returns false unless lease is the lease of
// trial t, pending in the study name.
func (s *Server) checkLease(ctx context.Context, w http.ResponseWriter, r *http.Request, name string, t study.TrialResult, lease string) bool {
	ok, err := s.leaseValid(ctx, name, t, lease)
	if err != nil {
		s.replyErr(w, r, err)
		return false
	}
	if !ok {
		what := "no lease"
		if lease != "" {
			what = "a lease that is not this trial's"
		}
		s.fail(w, http.StatusForbidden, "trial %d of study %s: %s: only the client the trial was handed out to may heartbeat, report or tell it while it is pending (send the ask's \"lease\" in the %s header or the \"lease\" field); a trial a bkb worker evaluates, or one handed out again since, is not reachable with an older lease", t.Number, name, what, LeaseHeader)
		return false
	}
	return true
}

// The leases of trials handed out: leased.Update's stale trials.

// observe drops the leases that records end: a completion (tell, fail,
// prune) of a trial, or an ask of it by another worker (it has another
// owner now, which this server must not hand it away from).
// It also keeps the owner of each pending trial (owners).
func (l *leased) observe(name string, recs []storage.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, owners := l.last[name], l.owners[name]
	for _, r := range recs {
		switch r.Kind {
		case storage.KindTell, storage.KindFail, storage.KindPrune:
			delete(m, r.Trial)
			delete(owners, r.Trial)
		case storage.KindAsk:
			if r.Worker != l.worker {
				delete(m, r.Trial)
			}
			if owners == nil {
				owners = map[int]string{}
				l.owners[name] = owners
			}
			owners[r.Trial] = r.Worker
		}
	}
}

// stale returns the stale trials of a View of the study name: the
// storage's (their worker's process is gone, or its heartbeats stopped),
// except those whose client holds a live lease here, and except those a
// server handed out during the first grace period after this server's
// start, or the study's first load if later (a client of the previous
// server could not heartbeat while no server ran: it gets the grace to
// heartbeat this one; a trial of a program that stopped, such as a Go
// loop or bkb ask, has no client to wait for); with the trials whose
// lease here ran out.
func (l *leased) stale(name string, storageStale []int) []int {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	since := l.start
	if t := l.loaded[name]; t.After(since) {
		since = t
	}
	starting := now.Sub(since) <= l.grace
	var out []int
	for _, t := range storageStale {
		last, ok := l.last[name][t]
		if ok && now.Sub(last) <= l.grace {
			continue
		}
		if owner, known := l.owners[name][t]; starting && (!known || isServerWorker(owner)) {
			continue
		}
		out = append(out, t)
	}
	for t, last := range l.last[name] {
		if now.Sub(last) > l.grace && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Records implements storage.Storage: the leases the records end are
// dropped (see observe). Reading all of a study's records is loading it:
// its first grace period starts then if it is later than the server's
// start (a server busy loading a long study, or one loaded at the first
// request long after the start, still gives its clients the grace).
func (l *leased) Records(ctx context.Context, name string, from int) ([]storage.Record, error) {
	recs, err := l.Storage.Records(ctx, name, from)
	if err == nil {
		if from == 0 {
			now := l.now()
			l.mu.Lock()
			if l.loaded[name].IsZero() {
				l.loaded[name] = now
			}
			l.mu.Unlock()
		}
		l.observe(name, recs)
	}
	return recs, err
}

// keyState is what New adds to a Server for leases.
type keyState struct {
	keyMu sync.Mutex        // held while a study's key is made
	keys  map[string][]byte // lease keys by study
}
