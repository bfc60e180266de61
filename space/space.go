package space

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is the type of a parameter.
type Type string

// Parameter types.
const (
	// TypeFloat is a real number in [Low, High], on a linear or (Log) a
	// logarithmic scale; with Step > 0 it takes only the values
	// Low + k Step (a discrete float).
	TypeFloat Type = "float"
	// TypeInt is an integer in [Low, High], on a linear or (Log) a
	// logarithmic scale.
	TypeInt Type = "int"
	// TypeCategorical is one of Choices (strings or numbers).
	TypeCategorical Type = "categorical"
)

// Param is one parameter of a search space. Build it with Float, LogFloat,
// Discrete, Int, LogInt or Categorical, or read it from a space file.
//
// A point of the space stores one float64 per parameter, its value: the
// number itself for floats and integers, the index into Choices for a
// categorical. The GP sees an encoding of it (see Space.Encode).
type Param struct {
	Name    string  `json:"name"`
	Type    Type    `json:"type"`
	Low     float64 `json:"low,omitempty"`
	High    float64 `json:"high,omitempty"`
	Log     bool    `json:"log,omitempty"`
	Step    float64 `json:"step,omitempty"`
	Choices []any   `json:"choices,omitempty"`
	// Condition, when set, makes the parameter exist only for some values
	// of another (condition.go); nil: always.
	Condition *Condition `json:"condition,omitempty"`
}

// Float is a real parameter in [low, high].
func Float(name string, low, high float64) Param {
	return Param{Name: name, Type: TypeFloat, Low: low, High: high}
}

// LogFloat is a real parameter in [low, high], 0 < low, searched on a log
// scale (learning rates, regularization strengths).
func LogFloat(name string, low, high float64) Param {
	return Param{Name: name, Type: TypeFloat, Low: low, High: high, Log: true}
}

// Discrete is a real parameter taking the values low, low+step, ..., high.
func Discrete(name string, low, high, step float64) Param {
	return Param{Name: name, Type: TypeFloat, Low: low, High: high, Step: step}
}

// Int is an integer parameter in [low, high].
func Int(name string, low, high int) Param {
	return Param{Name: name, Type: TypeInt, Low: float64(low), High: float64(high)}
}

// LogInt is an integer parameter in [low, high], 1 <= low, searched on a
// log scale (layer widths, batch sizes).
func LogInt(name string, low, high int) Param {
	return Param{Name: name, Type: TypeInt, Low: float64(low), High: float64(high), Log: true}
}

// Categorical is a parameter taking one of choices (strings or numbers).
func Categorical(name string, choices ...any) Param {
	return Param{Name: name, Type: TypeCategorical, Choices: choices}
}

// Levels returns the number of values of a discrete parameter (integer,
// step or categorical), 0 for a continuous one.
func (p Param) Levels() int {
	switch {
	case p.Type == TypeCategorical:
		return len(p.Choices)
	case p.Type == TypeInt:
		return int(p.High-p.Low) + 1
	case p.Step > 0:
		return int(math.Floor((p.High-p.Low)/p.Step+1e-9)) + 1
	}
	return 0
}

// width is the number of GP coordinates of the parameter.
func (p Param) width() int {
	if p.Type == TypeCategorical {
		return len(p.Choices)
	}
	return 1
}

// maxLevels bounds the size of an integer or step grid, so that grids and
// level lists stay small enough to enumerate.
const maxLevels = 1 << 40

// MaxAbsBound bounds the low and high of float and integer parameters, as
// MaxAbsValue bounds values: beyond it, widths and the GP's encoding
// overflow.
const MaxAbsBound = 1e150

// maxExactInt is 2^53: integers beyond it are not all exact float64 values.
const maxExactInt = 1 << 53

// hasControl reports whether s has a control character (C0, DEL or C1),
// which would break tab-separated output or drive a terminal.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return true
		}
	}
	return false
}

// validate checks one parameter.
func (p Param) validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return errors.New("a parameter has no name")
	}
	if hasControl(p.Name) {
		return fmt.Errorf("parameter %q: the name has a control character (tab, newline, escape, ...)", p.Name)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("parameter %q: %s", p.Name, fmt.Sprintf(format, args...))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch p.Type {
	case TypeFloat, TypeInt:
		if len(p.Choices) > 0 {
			return bad("%q has no choices (choices are for categorical parameters)", p.Type)
		}
		if !finite(p.Low) || !finite(p.High) {
			return bad("low and high must be finite, got [%v, %v]", p.Low, p.High)
		}
		if math.Abs(p.Low) > MaxAbsBound || math.Abs(p.High) > MaxAbsBound {
			return bad("low and high must be within ±%g, got [%v, %v]", MaxAbsBound, p.Low, p.High)
		}
		if p.Type == TypeInt && (math.Abs(p.Low) > maxExactInt || math.Abs(p.High) > maxExactInt) {
			return bad("integer bounds must be within ±2^53 = %d (integers beyond are not exact), got [%v, %v]", int64(maxExactInt), p.Low, p.High)
		}
		if !(p.Low < p.High) {
			return bad("low must be below high, got [%v, %v]", p.Low, p.High)
		}
		if p.Log && !(p.Low > 0) {
			return bad("a log-scale parameter needs low > 0, got %v", p.Low)
		}
		if p.Type == TypeInt {
			if p.Low != math.Trunc(p.Low) || p.High != math.Trunc(p.High) {
				return bad("an integer parameter needs integer bounds, got [%v, %v]", p.Low, p.High)
			}
			if p.Step != 0 {
				return bad("an integer parameter has no step")
			}
			if p.High-p.Low >= maxLevels {
				return bad("more than 2^40 integer values")
			}
			return nil
		}
		if p.Step != 0 {
			if !(p.Step > 0) || !finite(p.Step) {
				return bad("step must be positive, got %v", p.Step)
			}
			if p.Log {
				return bad("a stepped parameter cannot be on a log scale")
			}
			k := (p.High - p.Low) / p.Step
			if k >= maxLevels {
				return bad("more than 2^40 steps")
			}
			if math.Abs(k-math.Round(k)) > 1e-9*math.Max(1, k) {
				return bad("high - low = %v is not a multiple of step %v", p.High-p.Low, p.Step)
			}
		}
	case TypeCategorical:
		if len(p.Choices) < 2 {
			return bad("a categorical parameter needs at least two choices, got %d (a fixed value is not a parameter)", len(p.Choices))
		}
		if p.Low != 0 || p.High != 0 || p.Log || p.Step != 0 {
			return bad("a categorical parameter has only choices (no low, high, log or step)")
		}
		seen := map[string]bool{}
		for i, c := range p.Choices {
			switch v := c.(type) {
			case string:
				if hasControl(v) {
					return bad("choice %d (%q) has a control character (tab, newline, escape, ...)", i, v)
				}
			case bool:
			case float64:
				if !finite(v) {
					return bad("choice %d is %v", i, v)
				}
			case int:
				p.Choices[i] = float64(v)
			case json.Number:
				f, err := v.Float64()
				if err != nil || !finite(f) {
					return bad("choice %d: %v is not a finite number", i, v)
				}
				p.Choices[i] = f
			default:
				return bad("choice %d has type %T (want a string or a number)", i, c)
			}
			key := fmt.Sprint(p.Choices[i])
			if seen[key] {
				return bad("duplicate choice %q", key)
			}
			seen[key] = true
		}
	case "":
		return bad(`missing "type"`)
	default:
		return bad("unknown type %q (want float, int or categorical)", p.Type)
	}
	return nil
}

// Space is a typed search space: named parameters, each a float (linear or
// log scale, optionally stepped), an integer (linear or log scale) or a
// categorical.
type Space struct {
	Params []Param `json:"params"`
}

// NewSpace returns the space of params, validated.
func NewSpace(params ...Param) (Space, error) {
	s := Space{Params: params}
	return s, s.Validate()
}

// Box returns the space of float parameters named names (x1, x2, ... when
// names is nil) over the box [lower, upper].
func Box(names []string, lower, upper []float64) (Space, error) {
	if len(lower) != len(upper) {
		return Space{}, fmt.Errorf("study: %d lower bounds and %d upper bounds", len(lower), len(upper))
	}
	if names == nil {
		names = make([]string, len(lower))
		for i := range names {
			names[i] = "x" + strconv.Itoa(i+1)
		}
	}
	if len(names) != len(lower) {
		return Space{}, fmt.Errorf("study: %d parameter names for %d dimensions", len(names), len(lower))
	}
	ps := make([]Param, len(lower))
	for i := range ps {
		ps[i] = Float(names[i], lower[i], upper[i])
	}
	return NewSpace(ps...)
}

// Validate checks every parameter and that names are distinct.
func (s Space) Validate() error {
	if len(s.Params) == 0 {
		return errors.New("study: the search space has no parameters")
	}
	seen := map[string]bool{}
	for _, p := range s.Params {
		if err := p.validate(); err != nil {
			return fmt.Errorf("study: %w", err)
		}
		if seen[p.Name] {
			return fmt.Errorf("study: duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
	}
	return s.validateConditions()
}

// Dim returns the number of parameters (the length of a point).
func (s Space) Dim() int { return len(s.Params) }

// EncodedDim returns the number of GP coordinates of a point: one per
// float or integer parameter, one per choice of a categorical (one-hot).
func (s Space) EncodedDim() int {
	n := 0
	for _, p := range s.Params {
		n += p.width()
	}
	return n
}

// Names returns the parameter names.
func (s Space) Names() []string {
	out := make([]string, len(s.Params))
	for i, p := range s.Params {
		out[i] = p.Name
	}
	return out
}

// Continuous reports whether every parameter is an unstepped float (a box).
// A conditional space is not (its parents are categorical or int).
func (s Space) Continuous() bool {
	if s.Conditional() {
		return false
	}
	for _, p := range s.Params {
		if p.Levels() != 0 {
			return false
		}
	}
	return true
}

// unit maps a float or integer value to [0, 1] on the parameter's scale.
func (p Param) unit(v float64) float64 {
	if p.Log {
		return (math.Log(v) - math.Log(p.Low)) / (math.Log(p.High) - math.Log(p.Low))
	}
	return (v - p.Low) / (p.High - p.Low)
}

// Encode writes the GP coordinates of the point x (one value per
// parameter) to dst (length EncodedDim): floats and integers mapped to
// [0, 1] on their own scale (log-scaled coordinates for log parameters),
// so that integers keep their own grid; categoricals one-hot. The GP's
// kernel thus sees distances in units of each parameter's range.
func (s Space) Encode(dst, x []float64) {
	k := 0
	for i, p := range s.Params {
		if p.Type == TypeCategorical {
			for c := range p.Choices {
				dst[k+c] = 0
			}
			dst[k+int(x[i])] = 1
			k += len(p.Choices)
			continue
		}
		dst[k] = p.unit(x[i])
		k++
	}
}

// FromUnit maps a point u of the unit cube [0,1)^Dim (one coordinate per
// parameter, from a space-filling design) to a valid point of the space in
// dst: a float by its scale, an integer, step or choice by dividing [0, 1)
// into equal cells, one per value (on the log scale for log integers), so
// that every value is equally likely under a uniform u.
func (s Space) FromUnit(dst, u []float64) {
	for i, p := range s.Params {
		v := math.Min(math.Max(u[i], 0), 1)
		if p.Levels() > 0 {
			v = math.Min(v, math.Nextafter(1, 0)) // u = 1 falls in the last cell
		}
		switch {
		case p.Type == TypeCategorical:
			dst[i] = math.Floor(v * float64(len(p.Choices)))
		case p.Type == TypeInt && p.Log:
			// Equal cells on the log scale of [low-1/2, high+1/2], as
			// Optuna's log-integer distribution.
			lo, hi := math.Log(p.Low-0.5), math.Log(p.High+0.5)
			dst[i] = math.Min(math.Max(math.Round(math.Exp(lo+v*(hi-lo))), p.Low), p.High)
		case p.Type == TypeInt:
			dst[i] = math.Min(p.Low+math.Floor(v*(p.High-p.Low+1)), p.High)
		case p.Step > 0:
			n := p.Levels()
			dst[i] = p.StepValue(min(int(v*float64(n)), n-1))
		case p.Log:
			dst[i] = math.Min(math.Max(math.Exp(math.Log(p.Low)+v*(math.Log(p.High)-math.Log(p.Low))), p.Low), p.High)
		default:
			dst[i] = math.Min(math.Max(p.Low+v*(p.High-p.Low), p.Low), p.High)
		}
	}
}

// StepValue is the k-th value of a stepped float, rounded to the step's
// decimal precision so that 0.1 steps print as 0.3, not 0.30000000000000004.
func (p Param) StepValue(k int) float64 {
	v := p.Low + float64(k)*p.Step
	if k == p.Levels()-1 {
		return p.High
	}
	return roundTo(v, p.Step)
}

// roundTo rounds v to the decimal precision of step (up to 12 digits).
func roundTo(v, step float64) float64 {
	digits := 0
	for s := step; digits < 12 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
		digits++
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// Check reports whether x is a valid point: one value per parameter, each
// within its bounds, integers integral, steps on their grid, categorical
// indices in range, and in a conditional space every inactive parameter at
// its placeholder.
func (s Space) Check(x []float64) error {
	if err := s.checkValues(x); err != nil {
		return err
	}
	return s.checkInactive(x)
}

// checkValues is Check without the conditions.
func (s Space) checkValues(x []float64) error {
	if len(x) != len(s.Params) {
		return fmt.Errorf("study: a point of %d values for a space of %d parameters", len(x), len(s.Params))
	}
	for i, p := range s.Params {
		v := x[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("study: parameter %q: value %v is not finite", p.Name, v)
		}
		switch {
		case p.Type == TypeCategorical:
			if v != math.Trunc(v) || v < 0 || int(v) >= len(p.Choices) {
				return fmt.Errorf("study: parameter %q: choice index %v out of range [0, %d)", p.Name, v, len(p.Choices))
			}
		case v < p.Low || v > p.High:
			return fmt.Errorf("study: parameter %q: value %v outside [%v, %v]", p.Name, v, p.Low, p.High)
		case p.Type == TypeInt && v != math.Trunc(v):
			return fmt.Errorf("study: parameter %q: value %v is not an integer", p.Name, v)
		case p.Step > 0:
			k := math.Round((v - p.Low) / p.Step)
			if p.StepValue(int(k)) != v && math.Abs(v-p.StepValue(int(k))) > 1e-9*math.Max(p.Step, math.Abs(v)) {
				return fmt.Errorf("study: parameter %q: value %v is not low + k*step (low %v, step %v)", p.Name, v, p.Low, p.Step)
			}
		}
	}
	return nil
}

// Params are a point's parameter values by name, each in its own type:
// float64 for floats, int for integers, the choice itself (a string or a
// float64) for categoricals.
type Params map[string]any

// Float returns the float parameter name (an int is converted); 0 if
// there is none (GetFloat reports a missing or misspelt name instead).
func (p Params) Float(name string) float64 {
	switch v := p[name].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return 0
}

// Int returns the integer parameter name; 0 if there is none (GetInt
// reports a missing or misspelt name instead).
func (p Params) Int(name string) int {
	switch v := p[name].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// String returns a categorical (or any) parameter as a string.
func (p Params) String(name string) string {
	switch v := p[name].(type) {
	case string:
		return v
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// ParamsOf returns the typed parameters of the valid point x: in a
// conditional space, the parameters active at x only.
func (s Space) ParamsOf(x []float64) Params {
	out := make(Params, len(s.Params))
	var active []bool
	if c := s.Plan(); c != nil {
		active = c.Active(c.act, x)
	}
	for i, p := range s.Params {
		if active != nil && !active[i] {
			continue
		}
		switch p.Type {
		case TypeCategorical:
			out[p.Name] = p.Choices[int(x[i])]
		case TypeInt:
			out[p.Name] = int(x[i])
		default:
			out[p.Name] = x[i]
		}
	}
	return out
}

// PointOf returns the point of typed parameters: every parameter must be
// given (a number for floats and integers, one of the choices, or its
// index, for categoricals) and valid. In a conditional space, the active
// parameters must be given and the inactive ones must not (they take their
// placeholders).
func (s Space) PointOf(params map[string]any) ([]float64, error) {
	if s.Conditional() {
		return s.conditionalPointOf(params)
	}
	x := make([]float64, len(s.Params))
	for i, p := range s.Params {
		v, ok := params[p.Name]
		if !ok {
			return nil, fmt.Errorf("study: parameter %q is missing", p.Name)
		}
		f, err := p.valueOf(v)
		if err != nil {
			return nil, err
		}
		x[i] = f
	}
	for name := range params {
		if s.Index(name) < 0 {
			return nil, fmt.Errorf("study: unknown parameter %q", name)
		}
	}
	return x, s.Check(x)
}

func (s Space) Index(name string) int {
	for i, p := range s.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// choiceIndex returns the index of v among the choices, -1 if absent.
func (p Param) choiceIndex(v any) int {
	key := fmt.Sprint(v)
	if f, err := toFloat(v); err == nil {
		key = fmt.Sprint(f)
	}
	for i, c := range p.Choices {
		if fmt.Sprint(c) == key {
			return i
		}
	}
	return -1
}

func toFloat(v any) (float64, error) {
	switch t := v.(type) {
	case float64:
		return t, nil
	case float32:
		return float64(t), nil
	case int:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case json.Number:
		return t.Float64()
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// ParseLevel parses a parameter value given as text (a CSV field): a
// number, or for a categorical one of its choices (or its index).
func (p Param) ParseLevel(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if p.Type == TypeCategorical {
		for i, c := range p.Choices {
			if fmt.Sprint(c) == s {
				return float64(i), nil
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if i := p.choiceIndex(f); i >= 0 {
				return float64(i), nil
			}
		}
		return 0, fmt.Errorf("parameter %q: %q is not one of %v", p.Name, s, p.Choices)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %q: %q is not a number", p.Name, s)
	}
	return f, nil
}

// FormatValue formats the value v of parameter i as text: numbers in full
// precision (they parse back to the same float64), integers without a
// decimal point, categoricals by their label.
func (s Space) FormatValue(i int, v float64) string {
	p := s.Params[i]
	switch p.Type {
	case TypeCategorical:
		if v >= 0 && int(v) < len(p.Choices) {
			return fmt.Sprint(p.Choices[int(v)])
		}
	case TypeInt:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// spaceJSON is the space file format: {"params":[...]}; the older form
// {"names":[...],"lower":[...],"upper":[...]} of journals written before
// typed parameters is read as floats.
type spaceJSON struct {
	Params []paramJSON `json:"params"`
	Names  []string    `json:"names"`
	Lower  []float64   `json:"lower"`
	Upper  []float64   `json:"upper"`
}

type paramJSON struct {
	Name      string          `json:"name"`
	Type      Type            `json:"type"`
	Low       *float64        `json:"low"`
	High      *float64        `json:"high"`
	Log       bool            `json:"log"`
	Step      float64         `json:"step"`
	Choices   json.RawMessage `json:"choices"`
	Condition *conditionJSON  `json:"condition"`
}

// paramError names the parameter whose field made the strict decoding of
// the space b fail with err (an unknown field such as "typ"), or returns
// err when no single parameter is at fault.
func paramError(b []byte, err error) error {
	var loose struct {
		Params []json.RawMessage `json:"params"`
	}
	if json.Unmarshal(b, &loose) != nil {
		return err
	}
	for i, raw := range loose.Params {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var pj paramJSON
		if perr := dec.Decode(&pj); perr != nil {
			_ = json.Unmarshal(raw, &pj) // the name, if the field is after it
			msg := strings.TrimPrefix(perr.Error(), "json: ")
			if pj.Name != "" {
				return fmt.Errorf("parameter %d (%q): %s", i+1, pj.Name, msg)
			}
			return fmt.Errorf("parameter %d: %s", i+1, msg)
		}
	}
	return err
}

// valueOf returns the point value of a parameter given as v (a choice of a
// categorical: its index; a number otherwise).
func (p Param) valueOf(v any) (float64, error) {
	if p.Type == TypeCategorical {
		idx := p.choiceIndex(v)
		if idx < 0 {
			return 0, fmt.Errorf("study: parameter %q: %v is not one of %v", p.Name, v, p.Choices)
		}
		return float64(idx), nil
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("study: parameter %q: %w", p.Name, err)
	}
	return f, nil
}
