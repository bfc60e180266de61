package serve

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/bkb-go/bkb/study"
)

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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	var req AskRequest
	if !s.decodeOr(w, r, &req) {
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
	st, ok := s.loadOr(w, r, n, false)
	if !ok {
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
	n, trial, ok := s.trialOfRequest(w, r)
	if !ok {
		return
	}
	var req TellRequest
	if !s.decodeOr(w, r, &req) {
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
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
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
	n, trial, ok := s.trialOfRequest(w, r)
	if !ok {
		return
	}
	var req HeartbeatRequest
	if !s.decodeOr(w, r, &req) {
		return
	}
	// The study as this server last saw it: a heartbeat is frequent and
	// must be quick. If the trial is not pending there with this lease,
	// another process may have changed it since: read what is new.
	st, ok := s.loadOr(w, r, n, false)
	if !ok {
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
	n, trial, ok := s.trialOfRequest(w, r)
	if !ok {
		return
	}
	var req ReportRequest
	if !s.decodeOr(w, r, &req) {
		return
	}
	if req.Value == nil || math.IsNaN(*req.Value) || math.IsInf(*req.Value, 0) || req.Step < 0 {
		s.replyErr(w, r, badf(`a report needs "step" >= 0 and a finite "value"`))
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	b, ok := st.Best()
	if !ok {
		s.fail(w, http.StatusNotFound, "study %s has no complete trial yet", n)
		return
	}
	s.reply(w, http.StatusOK, trialJSON(b))
}
