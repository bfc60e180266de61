package serve

import (
	"context"
	"encoding/json"

	"fmt"
	"net/http"
	"strings"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// trialList returns the trials of st as the API shows them, with their
// user attributes and the intermediate values stored as attributes by
// earlier builds: every trial when only < 0, else trial number only (an
// error wrapping study.ErrNoTrial if the study has no such trial).
func (s *Server) trialList(ctx context.Context, st *study.Study, only int) ([]TrialJSON, error) {
	var attrs []storage.Attr
	if at, ok := storage.As[storage.Attributes](s.opt.Storage); ok {
		var err error
		if attrs, err = at.Attrs(ctx, st.Name()); err != nil {
			return nil, err
		}
	}
	byTrial := map[int][]storage.Attr{}
	for _, a := range attrs {
		if a.Trial >= 0 && (only < 0 || a.Trial == only) {
			byTrial[a.Trial] = append(byTrial[a.Trial], a)
		}
	}
	ts := st.Trials()
	out := make([]TrialJSON, 0, len(ts))
	for _, t := range ts {
		if only >= 0 && t.Number != only {
			continue
		}
		tj := trialJSON(t)
		for _, a := range byTrial[t.Number] {
			if step, ok := strings.CutPrefix(a.Key, reportPrefix); ok {
				var v float64
				if json.Unmarshal(a.Value, &v) == nil {
					if tj.Intermediate == nil {
						tj.Intermediate = map[string]float64{}
					}
					tj.Intermediate[step] = v
				}
				continue
			}
			if tj.Attrs == nil {
				tj.Attrs = map[string]any{}
			}
			tj.Attrs[a.Key] = a.Value
		}
		out = append(out, tj)
	}
	if only >= 0 && len(out) == 0 {
		return nil, fmt.Errorf("study %s has no trial %d: %w", st.Name(), only, study.ErrNoTrial)
	}
	return out, nil
}

// oneTrial answers GET /api/studies/{name}/trials/{trial}: one trial as
// the list shows it.
func (s *Server) oneTrial(w http.ResponseWriter, r *http.Request) {
	n, trial, ok := s.trialOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	out, err := s.trialList(r.Context(), st, trial)
	if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.reply(w, http.StatusOK, out[0])
}

// shouldPrune answers GET /api/studies/{name}/trials/{trial}/should-prune:
// the pruner's decision on a trial's latest reported value (Optuna's
// trial.should_prune()), false before any report and without a pruner.
func (s *Server) shouldPrune(w http.ResponseWriter, r *http.Request) {
	n, trial, ok := s.trialOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	t, ok := trialOf(st, trial)
	if !ok {
		s.replyErr(w, r, fmt.Errorf("study %s has no trial %d: %w", n, trial, study.ErrNoTrial))
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"trial": trial, "state": t.State, "prune": st.ShouldPrune(trial)})
}

// setFront fills the Pareto front of a study of several objectives and
// its hypervolume against the default reference point.
func setFront(sum *Summary, cfg study.Config, trials []study.TrialResult) {
	if cfg.Objectives() < 2 {
		return
	}
	front, err := study.ParetoFront(cfg, trials)
	if err != nil {
		return // no complete feasible trial (study.ErrNoFeasible)
	}
	sum.ParetoFront = make([]int, len(front))
	for i, t := range front {
		sum.ParetoFront[i] = t.Number
	}
	ref, err := study.DefaultReference(cfg, trials)
	if err != nil {
		return
	}
	// The front's hypervolume is every trial's: the trace over the front
	// alone ends with it, without the work of a trace over every trial.
	hv, err := study.Hypervolumes(cfg, front, ref)
	if err != nil || len(hv) == 0 {
		return
	}
	h := hv[len(hv)-1]
	sum.Hypervolume, sum.Reference = &h, ref
}
