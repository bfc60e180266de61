package study

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/bkb-go/bkb/objectives"
)

// ExportCSV writes the trials as CSV, one row per trial: its number,
// state, arm, value and the best value so far (and, with known, the
// simple regret against a known minimum), its seconds, one column per
// parameter (empty where a conditional parameter is inactive), its error,
// and with several objectives or constraints their columns and the
// hypervolume so far. It is bkb export's and --trace's CSV.
func ExportCSV(cfg Config, trials []TrialResult, known *objectives.Function) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := []string{"trial", "status", "arm", "value", "best_so_far"}
	fn := known
	if known != nil && cfg.Direction == Maximize {
		fn = nil // a known minimum says nothing of a maximized value's regret
	}
	if fn != nil {
		header = append(header, "simple_regret")
	}
	header = append(header, "seconds")
	header = append(header, cfg.Space.Names()...)
	header = append(header, "error")
	extraHeader, extraRows := exportTradeoffColumns(cfg, trials)
	_ = w.Write(append(header, extraHeader...))
	best := math.NaN()
	for i, t := range trials {
		if t.State == Complete && !t.Infeasible && Better(t.Value, best, cfg.Direction) {
			best = t.Value
		}
		val := ""
		if t.State == Complete {
			val = strconv.FormatFloat(t.Value, 'g', -1, 64)
		}
		row := []string{strconv.Itoa(t.Number), string(t.State), strconv.Itoa(t.Arm), val, fmtCSV(best)}
		if fn != nil {
			row = append(row, fmtCSV(best-fn.MinValue))
		}
		row = append(row, strconv.FormatFloat(t.Seconds, 'g', 6, 64))
		row = append(row, exportCells(cfg.Space, t.X, func(k int, v float64) string {
			if cfg.Space.Params[k].Type == TypeCategorical {
				return cfg.Space.FormatValue(k, v)
			}
			return strconv.FormatFloat(v, 'g', -1, 64)
		})...)
		row = append(row, t.Error)
		if extraRows != nil {
			row = append(row, extraRows[i]...)
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ExportedTrial is one trial in the JSON of bkb export.
type ExportedTrial struct {
	Trial     int       `json:"trial"`
	Status    State     `json:"status"`
	Arm       int       `json:"arm"`
	Value     *float64  `json:"value,omitempty"` // complete trials only
	BestSoFar *float64  `json:"best_so_far,omitempty"`
	Seconds   float64   `json:"seconds"`
	Params    Params    `json:"params"`
	X         []float64 `json:"x"`
	Error     string    `json:"error,omitempty"`
	Time      string    `json:"time,omitempty"`
	// Values, Constraints and Feasible: studies with several objectives
	// or constraints.
	Values      []float64 `json:"values,omitempty"`
	Constraints []float64 `json:"constraints,omitempty"`
	Feasible    *bool     `json:"feasible,omitempty"`
	// Intermediate holds the values the trial reported, in order.
	Intermediate []StepValue `json:"intermediate,omitempty"`
}

// ExportJSON returns the trials as a JSON array, one ExportedTrial each.
func ExportJSON(cfg Config, trials []TrialResult) ([]byte, error) {
	out := make([]ExportedTrial, 0, len(trials))
	best := math.NaN()
	for _, t := range trials {
		e := ExportedTrial{Trial: t.Number, Status: t.State, Arm: t.Arm, Seconds: t.Seconds, Params: t.Params, X: t.X, Error: t.Error,
			Intermediate: t.Intermediate}
		if !t.Time.IsZero() {
			e.Time = t.Time.UTC().Format(time.RFC3339Nano)
		}
		if t.State == Complete {
			v := t.Value
			e.Value = &v
			e.Values, e.Constraints = t.Values, t.Constraints
			if cfg.Constraints > 0 {
				f := !t.Infeasible
				e.Feasible = &f
			}
			if !t.Infeasible && Better(v, best, cfg.Direction) {
				best = v
			}
		}
		if !math.IsNaN(best) {
			b := best
			e.BestSoFar = &b
		}
		out = append(out, e)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func fmtCSV(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// value, feasibility and the hypervolume so far; nil for other studies.
func exportTradeoffColumns(cfg Config, trials []TrialResult) (header []string, rows [][]string) {
	nObj, nCons := cfg.Objectives(), cfg.Constraints
	if nObj < 2 && nCons == 0 {
		return nil, nil
	}
	if nObj >= 2 {
		for k := 1; k <= nObj; k++ {
			header = append(header, fmt.Sprintf("value_%d", k))
		}
	}
	for j := 1; j <= nCons; j++ {
		header = append(header, fmt.Sprintf("constraint_%d", j))
	}
	if nCons > 0 {
		header = append(header, "feasible")
	}
	var hv []float64
	if nObj >= 2 {
		header = append(header, "hypervolume")
		if ref, err := DefaultReference(cfg, trials); err == nil {
			hv, _ = Hypervolumes(cfg, trials, ref)
		}
	}
	for i, t := range trials {
		var row []string
		done := t.State == Complete
		if nObj >= 2 {
			for k := 0; k < nObj; k++ {
				v := ""
				if done && k < len(t.Values) {
					v = strconv.FormatFloat(t.Values[k], 'g', -1, 64)
				}
				row = append(row, v)
			}
		}
		for j := 0; j < nCons; j++ {
			v := ""
			if done && j < len(t.Constraints) {
				v = strconv.FormatFloat(t.Constraints[j], 'g', -1, 64)
			}
			row = append(row, v)
		}
		if nCons > 0 {
			f := ""
			if done {
				f = strconv.FormatBool(!t.Infeasible)
			}
			row = append(row, f)
		}
		if nObj >= 2 {
			v := ""
			if hv != nil {
				v = strconv.FormatFloat(hv[i], 'g', -1, 64)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// exportCells formats the values of the point x, one cell per parameter;
// a parameter not active at x (a conditional space) is an empty cell, as
// its value is only a placeholder.
func exportCells(sp Space, x []float64, format func(k int, v float64) string) []string {
	active := sp.Active(x)
	out := make([]string, len(x))
	for k, v := range x {
		if active[k] {
			out[k] = format(k, v)
		}
	}
	return out
}
