package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// storedBudget returns the extended budget of a study, 0 if none
// (study.StoredBudget).
func (s *Server) storedBudget(ctx context.Context, name string) (int, error) {
	return study.StoredBudget(ctx, s.opt.Storage, name)
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
	if !s.decodeOr(w, r, &req) {
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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	s.reply(w, http.StatusOK, s.summary(r.Context(), st, true))
}

func (s *Server) deleteStudy(w http.ResponseWriter, r *http.Request) {
	cat, ok := s.catalog(w)
	if !ok {
		return
	}
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	if err := cat.DeleteStudy(r.Context(), n); err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.forget(n, true)
	s.reply(w, http.StatusOK, map[string]string{"deleted": n})
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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	var req AttrRequest
	if !s.decodeOr(w, r, &req) {
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
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	var req BudgetRequest
	if !s.decodeOr(w, r, &req) {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	trials := len(st.Trials())
	if req.Budget < max(trials, 1) {
		s.replyErr(w, r, badf("budget %d: want at least the %d trials the study has (and at least 1)", req.Budget, trials))
		return
	}
	if err := st.Extend(r.Context(), req.Budget); errors.Is(err, study.ErrNoAttributes) {
		s.fail(w, http.StatusNotImplemented, "this storage keeps no attributes, where an extended budget is kept")
		return
	} else if err != nil {
		s.replyErr(w, r, err)
		return
	}
	s.forget(n, false) // the trials handed out keep their leases
	if st, ok = s.loadOr(w, r, n, false); !ok {
		return
	}
	s.reply(w, http.StatusOK, s.summary(r.Context(), st, false))
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	n, ok := s.nameOfRequest(w, r)
	if !ok {
		return
	}
	st, ok := s.loadOr(w, r, n, true)
	if !ok {
		return
	}
	param := r.URL.Query().Get("param")
	points := 64
	if p := r.URL.Query().Get("points"); p != "" {
		var err error
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
