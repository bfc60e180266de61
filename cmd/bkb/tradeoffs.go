package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/study"
)

// tradeoffFlags are the flags of constrained and multi-objective studies
// (optimize, create-study), and the same settings read from a space file.
type tradeoffFlags struct {
	directions  []string
	constraints int
	moAcq       string
	// From the space file: "directions", "constraints" and
	// "mo_acquisition" beside "params".
	fileDirections  []study.Direction
	fileConstraints *int
	fileMOAcq       string
}

func (t *tradeoffFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&t.directions, "directions", nil, `several objectives: the direction of each, e.g. minimize,maximize (a plugin replies "y": [v1, v2]; the result is the Pareto front)`)
	fs.StringVar(&t.moAcq, "mo-acquisition", "", "several objectives: "+study.MOHypervolume+" (the optimistic hypervolume improvement, the default of new studies) or "+study.MOScalarize+" (random scalarizations, the rule of studies created before it): docs/tradeoffs.md")
	fs.IntVar(&t.constraints, "constraints", 0, `number of constraint values c_j(x) each evaluation returns beside its value (a plugin replies "constraints": [c1, ...]); a point is feasible when every one is <= 0`)
}

// readSpace reads a space file whose object may also hold "directions"
// and "constraints".
func (t *tradeoffFlags) readSpace(r io.Reader) (study.Space, error) {
	b, err := io.ReadAll(io.LimitReader(r, study.MaxSpaceFile+1))
	if err != nil {
		return study.Space{}, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil {
		raw, hasDirs := top["directions"]
		if hasDirs {
			if err := json.Unmarshal(raw, &t.fileDirections); err != nil {
				return study.Space{}, fmt.Errorf(`"directions": want an array of "minimize" and "maximize": %v`, err)
			}
			delete(top, "directions")
		}
		rawC, hasCons := top["constraints"]
		if hasCons {
			var n int
			if err := json.Unmarshal(rawC, &n); err != nil {
				return study.Space{}, fmt.Errorf(`"constraints": want the number of constraint values: %v`, err)
			}
			t.fileConstraints = &n
			delete(top, "constraints")
		}
		rawA, hasAcq := top["mo_acquisition"]
		if hasAcq {
			if err := json.Unmarshal(rawA, &t.fileMOAcq); err != nil {
				return study.Space{}, fmt.Errorf(`"mo_acquisition": want %q or %q: %v`, study.MOHypervolume, study.MOScalarize, err)
			}
			delete(top, "mo_acquisition")
		}
		if hasDirs || hasCons || hasAcq {
			if b, err = json.Marshal(top); err != nil {
				return study.Space{}, err
			}
		}
	}
	return study.ReadSpace(bytes.NewReader(b))
}

// apply sets the configuration's directions and constraints from the
// flags and the space file.
func (t *tradeoffFlags) apply(fs *pflag.FlagSet, cfg *study.Config) error {
	var dirs []study.Direction
	if fs.Changed("directions") {
		for _, d := range t.directions {
			switch d = strings.ToLower(strings.TrimSpace(d)); d {
			case "min", "minimize":
				dirs = append(dirs, study.Minimize)
			case "max", "maximize":
				dirs = append(dirs, study.Maximize)
			default:
				return usagef("--directions: %q is not minimize or maximize", d)
			}
		}
		if len(t.fileDirections) > 0 && !slices.Equal(dirs, t.fileDirections) {
			return usagef("--directions %v differs from the space file's directions %v", dirs, t.fileDirections)
		}
	} else {
		dirs = t.fileDirections
	}
	if len(dirs) > 0 {
		if fs.Changed("maximize") || fs.Changed("minimize") {
			return usagef("give the directions with --directions (or the space file) or with --maximize/--minimize, not both")
		}
		cfg.Direction, cfg.Directions = "", dirs
	}
	cons := t.constraints
	if t.fileConstraints != nil {
		if fs.Changed("constraints") && *t.fileConstraints != cons {
			return usagef("--constraints %d differs from the space file's constraints %d", cons, *t.fileConstraints)
		}
		cons = *t.fileConstraints
	}
	if cons < 0 {
		return usagef("--constraints must be >= 0, got %d", cons)
	}
	cfg.Constraints = cons
	acq := t.fileMOAcq
	if fs.Changed("mo-acquisition") {
		if acq != "" && t.moAcq != acq {
			return usagef("--mo-acquisition %s differs from the space file's mo_acquisition %s", t.moAcq, acq)
		}
		acq = t.moAcq
	}
	if acq != "" {
		if len(cfg.Directions) < 2 {
			return usagef("--mo-acquisition needs several objectives (--directions)")
		}
		if !slices.Contains(study.MOAcquisitions(), acq) {
			return usagef("--mo-acquisition %q: want %s", acq, strings.Join(study.MOAcquisitions(), " or "))
		}
		cfg.MOAcquisition = acq
	}
	return nil
}

// parseValueList parses a comma-separated list of finite values of a tell
// flag.
func parseValueList(flag, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := parseDecimal(f)
		if err != nil {
			return nil, usagef("%s: %q is not a number: want decimal numbers like 0.25,-3", flag, strings.TrimSpace(f))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > study.MaxAbsValue {
			return nil, usagef("%s: %q is not a finite value within ±%g: record a failed evaluation with --failed MESSAGE", flag, strings.TrimSpace(f), study.MaxAbsValue)
		}
		out = append(out, v)
	}
	return out, nil
}

// frontPoint is one trial of the Pareto front in a result.
type frontPoint struct {
	Trial       int          `json:"trial"`
	Values      []float64    `json:"values"`
	Constraints []float64    `json:"constraints,omitempty"`
	X           []float64    `json:"x"`
	Params      study.Params `json:"params"`
}

// tradeoffResult is the part of a result about constraints and several
// objectives.
type tradeoffResult struct {
	Directions  []study.Direction `json:"directions,omitempty"`
	Constraints int               `json:"constraints,omitempty"`
	// Feasible and Infeasible count the complete trials (constrained
	// studies only).
	Feasible   *int `json:"feasible,omitempty"`
	Infeasible int  `json:"infeasible,omitempty"`
	// Front is the Pareto front of the complete feasible trials, and
	// Hypervolume its hypervolume against Reference (several objectives).
	Front       []frontPoint `json:"pareto_front,omitempty"`
	Hypervolume *float64     `json:"hypervolume,omitempty"`
	Reference   []float64    `json:"reference_point,omitempty"`
}

// setTradeoffs fills the result's tradeoffResult from the study.
func (r *result) setTradeoffs(cfg study.Config, trials []study.TrialResult) error {
	if cfg.Constraints == 0 && cfg.Objectives() < 2 {
		return nil
	}
	r.Constraints = cfg.Constraints
	if cfg.Objectives() >= 2 {
		r.Directions = cfg.ObjectiveDirections()
	}
	if cfg.Constraints > 0 {
		n := 0
		for _, t := range trials {
			if t.State == study.Complete {
				if t.Infeasible {
					r.Infeasible++
				} else {
					n++
				}
			}
		}
		r.Feasible = &n
	}
	if cfg.Objectives() < 2 {
		return nil
	}
	front, err := study.ParetoFront(cfg, trials)
	if errors.Is(err, study.ErrNoFeasible) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, t := range front {
		r.Front = append(r.Front, frontPoint{Trial: t.Number, Values: t.Values, Constraints: t.Constraints, X: t.X, Params: t.Params})
	}
	ref, err := study.DefaultReference(cfg, trials)
	if err != nil {
		return err
	}
	hv, err := study.Hypervolumes(cfg, trials, ref)
	if err != nil {
		return err
	}
	if len(hv) > 0 {
		h := hv[len(hv)-1]
		r.Hypervolume, r.Reference = &h, ref
	}
	return nil
}

// writeTradeoffsText prints the feasibility and the Pareto front.
func (r *result) writeTradeoffsText(w io.Writer) error {
	if r.Feasible != nil {
		fmt.Fprintf(w, "%s: %d complete trials feasible, %d infeasible\n", plural(r.Constraints, "1 constraint", "%d constraints"), *r.Feasible, r.Infeasible)
	}
	if len(r.Directions) < 2 {
		return nil
	}
	if len(r.Front) == 0 {
		fmt.Fprintln(w, "no Pareto front yet: no complete feasible trial")
		return nil
	}
	fmt.Fprintf(w, "Pareto front: %s of %s\n", plural(len(r.Front), "1 trial", "%d trials"), plural(r.Complete, "1 complete trial", "%d complete trials"))
	header := []string{"trial"}
	for k, d := range r.Directions {
		header = append(header, fmt.Sprintf("objective %d (%s)", k+1, strings.TrimSuffix(string(d), "imize")))
	}
	header = append(header, r.space.Names()...)
	t := newTable(w, header)
	for _, p := range r.Front {
		row := []string{strconv.Itoa(p.Trial)}
		for _, v := range p.Values {
			row = append(row, fmtVal(v))
		}
		row = append(row, paramCells(r.space, p.X, r.fmtParam)...)
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if r.Hypervolume != nil {
		ref := make([]string, len(r.Reference))
		for k, v := range r.Reference {
			ref[k] = fmtVal(v)
		}
		fmt.Fprintf(w, "hypervolume %s against the reference point (%s): the worst feasible values, moved out by a tenth of their range\n",
			fmtVal(*r.Hypervolume), strings.Join(ref, ", "))
	}
	return nil
}

// traceTradeoffColumns returns the extra trace columns of a constrained
// or multi-objective study: each objective's value, each constraint

// feasible reports whether constraint values are all <= 0 (none: true).
func feasible(c []float64) bool { return study.Feasible(c) }
