package space

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Condition makes a parameter exist only for some values of another: the
// parameter is active at a point when its Parent is active there and the
// parent's value is one of Values (a choice of a categorical parent, an
// integer of an int parent). Conditions chain: a parent may have a
// condition of its own. In a space file:
//
//	{"name": "degree", "type": "int", "low": 2, "high": 5,
//	 "condition": {"parent": "kernel", "values": ["poly"]}}
//
// A point of a conditional space still stores one value per parameter: an
// inactive parameter holds its placeholder (Param.Placeholder), so that
// stored records, replays and JSON keep the shape of the space; Params,
// plugins, the HTTP API and exports show the active parameters only.
type Condition struct {
	Parent string `json:"parent"`
	Values []any  `json:"values"`
}

// When returns p active only where the parameter parent takes one of
// values (choices of a categorical parent, integers of an int parent):
//
//	study.Int("degree", 2, 5).When("kernel", "poly")
func (p Param) When(parent string, values ...any) Param {
	p.Condition = &Condition{Parent: parent, Values: values}
	return p
}

// Conditional reports whether some parameter of the space has a
// condition.
func (s Space) Conditional() bool {
	for _, p := range s.Params {
		if p.Condition != nil {
			return true
		}
	}
	return false
}

// Placeholder is the value an inactive parameter holds in a point: the
// middle of its range on its own scale (sqrt(low) sqrt(high) for a log
// parameter), rounded to its grid for integers and steps, and the first
// choice (index 0) of a categorical. Its GP encoding is then at or near the
// middle of the unit coordinate, the same for every point where the
// parameter is inactive: the imputation of Lévesque, Durand, Gagné and
// Sabourin (2017), see docs/conditional.md. It is computed with correctly
// rounded operations only (no logarithm or exponential, whose last bit
// may differ between platforms), because Check requires it bit for bit in
// stored points.
func (p Param) Placeholder() float64 {
	var v float64
	switch {
	case p.Type == TypeCategorical:
		return 0
	case p.Step > 0:
		return p.StepValue((p.Levels() - 1) / 2)
	case p.Log:
		v = math.Sqrt(p.Low) * math.Sqrt(p.High)
	default:
		v = p.Low + (p.High-p.Low)/2
	}
	if p.Type == TypeInt {
		v = math.Round(v)
	}
	return math.Min(math.Max(v, p.Low), p.High)
}

// validateConditions checks the conditions of a space whose parameters
// are valid and distinctly named: every parent exists, is categorical or
// int, and has the values named; the conditions form no cycle.
func (s Space) validateConditions() error {
	idx := make(map[string]int, len(s.Params))
	for i, p := range s.Params {
		idx[p.Name] = i
	}
	for _, p := range s.Params {
		c := p.Condition
		if c == nil {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("study: parameter %q: condition: %s", p.Name, fmt.Sprintf(format, args...))
		}
		if strings.TrimSpace(c.Parent) == "" {
			return bad("no parent")
		}
		j, ok := idx[c.Parent]
		if !ok {
			return bad("parent %q is not a parameter of the space", c.Parent)
		}
		if c.Parent == p.Name {
			return bad("the parameter is its own parent")
		}
		par := s.Params[j]
		if par.Type != TypeCategorical && par.Type != TypeInt {
			return bad("parent %q is a %s parameter (a parent must be categorical or int)", c.Parent, par.Type)
		}
		if len(c.Values) == 0 {
			return bad("no values of parent %q", c.Parent)
		}
		seen := map[float64]bool{}
		for k, v := range c.Values {
			x, err := par.conditionValue(v)
			if err != nil {
				return bad("value %d: %v", k+1, err)
			}
			if seen[x] {
				return bad("value %v given twice", v)
			}
			seen[x] = true
			if n, ok := v.(json.Number); ok {
				// As the choices: numbers are float64 once validated.
				f, _ := n.Float64()
				c.Values[k] = f
			} else if n, ok := v.(int); ok {
				c.Values[k] = float64(n)
			}
		}
	}
	// A cycle: following parents from some parameter comes back to it.
	for _, p := range s.Params {
		path := []string{p.Name}
		for q := p; q.Condition != nil; {
			q = s.Params[idx[q.Condition.Parent]]
			path = append(path, q.Name)
			if q.Name == p.Name {
				return fmt.Errorf("study: parameter %q: its conditions form a cycle (%s)", p.Name, strings.Join(path, " -> "))
			}
			if len(path) > len(s.Params)+1 {
				break // a cycle further up, reported from its own parameters
			}
		}
	}
	return nil
}

// conditionValue returns the point value (a choice index or an integer) of
// v, a value of the parameter p named in a condition.
func (p Param) conditionValue(v any) (float64, error) {
	if p.Type == TypeCategorical {
		i := p.choiceIndex(v)
		if i < 0 {
			return 0, fmt.Errorf("%v is not one of the choices %v of parent %q", v, p.Choices, p.Name)
		}
		return float64(i), nil
	}
	f, err := toFloat(v)
	if err != nil || f != math.Trunc(f) || f < p.Low || f > p.High {
		return 0, fmt.Errorf("%v is not an integer of parent %q's range [%v, %v]", v, p.Name, p.Low, p.High)
	}
	return f, nil
}

// Plan is the compiled conditions of a valid conditional space.
type Plan struct {
	parent []int              // parent index, -1 without a condition
	allow  []map[float64]bool // parent values (point values) under which each exists
	order  []int              // parameters, every parent before its children
	place  []float64          // placeholders
	off    []int              // first GP coordinate of each parameter
	enc    [][]float64        // the GP coordinates of each placeholder
	space  Space              // the space
	buf    []float64          // scratch: a decoded point
	act    []bool             // scratch: activity
}

// Plan compiles the conditions of the valid space s; nil when it has none.
func (s Space) Plan() *Plan {
	if !s.Conditional() {
		return nil
	}
	n := len(s.Params)
	c := &Plan{parent: make([]int, n), allow: make([]map[float64]bool, n), place: make([]float64, n),
		off: make([]int, n), enc: make([][]float64, n), space: s, buf: make([]float64, n), act: make([]bool, n)}
	k := 0
	for i, p := range s.Params {
		c.parent[i] = -1
		if p.Condition != nil {
			c.parent[i] = s.Index(p.Condition.Parent)
			c.allow[i] = map[float64]bool{}
			for _, v := range p.Condition.Values {
				if x, err := s.Params[c.parent[i]].conditionValue(v); err == nil {
					c.allow[i][x] = true
				}
			}
		}
		c.place[i] = p.Placeholder()
		c.off[i] = k
		one := Space{Params: []Param{p}}
		c.enc[i] = make([]float64, p.width())
		one.Encode(c.enc[i], c.place[i:i+1])
		k += p.width()
	}
	// Parents first: depth order (the conditions are acyclic).
	depth := make([]int, n)
	for i := range s.Params {
		for j := c.parent[i]; j >= 0; j = c.parent[j] {
			depth[i]++
		}
	}
	c.order = make([]int, n)
	for i := range c.order {
		c.order[i] = i
	}
	slices.SortStableFunc(c.order, func(a, b int) int { return depth[a] - depth[b] })
	return c
}

// Active writes to dst whether each parameter is active at the point x.
func (c *Plan) Active(dst []bool, x []float64) []bool {
	for _, i := range c.order {
		j := c.parent[i]
		dst[i] = j < 0 || dst[j] && c.allow[i][x[j]]
	}
	return dst
}

// Canonicalize sets the inactive parameters of x to their placeholders.
func (c *Plan) Canonicalize(x []float64) {
	for i, a := range c.Active(c.act, x) {
		if !a {
			x[i] = c.place[i]
		}
	}
}

// CanonicalizeEncoded sets the GP coordinates of the parameters inactive
// at the encoded point u (valid for the space's Domain) to those of their
// placeholders, leaving the active ones as they are: two candidates that
// differ only where the parameters are inactive become the same point.
func (c *Plan) CanonicalizeEncoded(u []float64) {
	c.space.Decode(c.buf, u)
	for i, a := range c.Active(c.act, c.buf) {
		if !a {
			copy(u[c.off[i]:], c.enc[i])
		}
	}
}

// Active reports, for each parameter, whether it is active at the point
// x (every parameter of a space without conditions is).
func (s Space) Active(x []float64) []bool {
	out := make([]bool, len(s.Params))
	c := s.Plan()
	if c == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	return c.Active(out, x)
}

// Canonicalize sets the parameters inactive at the point x to their
// placeholders (nothing changes in a space without conditions).
func (s Space) Canonicalize(x []float64) {
	if c := s.Plan(); c != nil {
		c.Canonicalize(x)
	}
}

// Describe says when the parameter i of the space exists, for errors:
// `"kernel" is poly`.
func (s Space) Describe(i int) string {
	c := s.Params[i].Condition
	vals := make([]string, len(c.Values))
	for k, v := range c.Values {
		vals[k] = fmt.Sprint(v)
	}
	if len(vals) == 1 {
		return fmt.Sprintf("%q is %s", c.Parent, vals[0])
	}
	return fmt.Sprintf("%q is one of %s", c.Parent, strings.Join(vals, ", "))
}

// checkInactive reports an inactive parameter of the point x (otherwise
// valid) that does not hold its placeholder.
func (s Space) checkInactive(x []float64) error {
	c := s.Plan()
	if c == nil {
		return nil
	}
	for i, a := range c.Active(c.act, x) {
		if !a && x[i] != c.place[i] {
			return fmt.Errorf("study: parameter %q is not active at this point (it exists when %s) and must hold its placeholder %s, got %s",
				s.Params[i].Name, s.Describe(i), s.FormatValue(i, c.place[i]), s.FormatValue(i, x[i]))
		}
	}
	return nil
}

// conditionalPointOf is PointOf for a conditional space.
func (s Space) conditionalPointOf(params map[string]any) ([]float64, error) {
	c := s.Plan()
	x := make([]float64, len(s.Params))
	given := make([]bool, len(s.Params))
	for i, p := range s.Params {
		v, ok := params[p.Name]
		if !ok {
			x[i] = c.place[i]
			continue
		}
		given[i] = true
		f, err := p.valueOf(v)
		if err != nil {
			return nil, err
		}
		x[i] = f
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if s.Index(name) < 0 {
			return nil, fmt.Errorf("study: unknown parameter %q", name)
		}
	}
	if err := s.checkValues(x); err != nil {
		return nil, err
	}
	for i, a := range c.Active(c.act, x) {
		switch {
		case a && !given[i] && s.Params[i].Condition != nil:
			return nil, fmt.Errorf("study: parameter %q is missing (it is active: %s)", s.Params[i].Name, s.Describe(i))
		case a && !given[i]:
			return nil, fmt.Errorf("study: parameter %q is missing", s.Params[i].Name)
		case !a && given[i]:
			return nil, fmt.Errorf("study: parameter %q is not active at this point (it exists when %s): leave it out", s.Params[i].Name, s.Describe(i))
		}
	}
	return x, nil
}

// Has reports whether the point has the parameter name: in a conditional
// space, whether it is active for the point.
func (p Params) Has(name string) bool {
	_, ok := p[name]
	return ok
}

// ErrInactive is wrapped by the errors of study.Trial's GetFloat, GetInt
// and GetString for a parameter the space has but the trial's point does
// not activate, and by study.Slice's along a parameter inactive at the
// best trial.
var ErrInactive = errors.New("not active")

// InactiveError returns the error of a Params getter for name when name
// is a conditional parameter of the space (it wraps ErrInactive and says
// when the parameter exists), nil for any other name.
func (s Space) InactiveError(name string) error {
	i := s.Index(name)
	if i < 0 || s.Params[i].Condition == nil {
		return nil
	}
	return fmt.Errorf("study: parameter %q is %w for this trial (it exists when %s)", name, ErrInactive, s.Describe(i))
}

// CheckBlanks checks a CSV row x of a conditional space whose parameters
// blank[i] were empty: exactly the inactive parameters are empty (blank
// may be nil: none).
func CheckBlanks(s Space, x []float64, blank []bool) error {
	if err := s.checkValues(x); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "study: "))
	}
	for i, a := range s.Active(x) {
		b := blank != nil && blank[i]
		switch {
		case a && b:
			return fmt.Errorf("parameter %q is empty but active at this point (it exists when %s)", s.Params[i].Name, s.Describe(i))
		case !a && !b:
			return fmt.Errorf("parameter %q is not active at this point (it exists when %s): leave it empty", s.Params[i].Name, s.Describe(i))
		}
	}
	return nil
}

// BranchParam returns the parameter whose values are a conditional space's
// branches: the first categorical without a condition of its own that is
// the parent of another parameter (-1 when there is none).
func (c *Plan) BranchParam() int {
	for i, p := range c.space.Params {
		if p.Type != TypeCategorical || c.parent[i] >= 0 {
			continue
		}
		for _, q := range c.parent {
			if q == i {
				return i
			}
		}
	}
	return -1
}

// BranchOf returns the branch (the choice of branch parameter i) of the
// encoded point u: its largest one-hot coordinate.
func (c *Plan) BranchOf(i int, u []float64) int {
	k := len(c.space.Params[i].Choices)
	block := u[c.off[i] : c.off[i]+k]
	best := 0
	for j, v := range block {
		if v > block[best] {
			best = j
		}
	}
	return best
}
