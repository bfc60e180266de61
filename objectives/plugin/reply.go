package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Reply is one parsed reply line of the plugin protocol.
type Reply struct {
	ID    int     // the "id" member; 0 when HasID is false
	HasID bool    // whether the reply carried an id
	Y     float64 // the objective value; may be NaN or ±Inf (see ParseReply)
	HasY  bool    // whether the reply carried a value
	Error string  // the plugin's own error message, "" if none
	// Extra holds the values of several objectives and the constraint
	// values, nil when the reply has neither (a pointer keeps Reply
	// comparable).
	Extra *Extra
}

// Extra is the part of a reply beyond one objective value.
type Extra struct {
	// Values are the values of several objectives, when "y" is an array
	// of numbers (Reply.Y is then the first); nil otherwise.
	Values []float64
	// Constraints are the constraint values of a constrained objective
	// ("constraints": an array of numbers, feasible when all are <= 0).
	Constraints []float64
}

// extra returns r.Extra, allocated if nil.
func (r *Reply) extra() *Extra {
	if r.Extra == nil {
		r.Extra = &Extra{}
	}
	return r.Extra
}

// nonFinite describes a non-finite member of Values or Constraints, ""
// if there is none.
func (r Reply) nonFinite() string {
	if r.Extra == nil {
		return ""
	}
	for i, v := range r.Extra.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("the non-finite value %v for objective %d", v, i)
		}
	}
	for i, v := range r.Extra.Constraints {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("the non-finite constraint value %v for constraint %d", v, i)
		}
	}
	return ""
}

// ParseReply parses one reply line: a JSON object with an integer "id", and
// either a numeric "y" or a string "error". Surrounding white space is
// ignored. "y" may be a string only to carry a non-finite value, which JSON
// numbers cannot: "NaN", "Inf", "-Inf" (also "+Inf", "Infinity", any case);
// any other string, even a numeric one like "1.5", is an error, since a
// plugin that quotes its numbers is more likely broken than meant. A number
// too large for a float64 (1e999) parses as ±Inf. ParseReply does not reject
// non-finite values: it reports them in Y and leaves the decision to the
// caller.
//
// For several objectives "y" is an array of such values, one per
// objective (Extra.Values; Y is its first); a constrained objective adds
// "constraints", an array of constraint values (Extra.Constraints), each
// feasible when <= 0: {"id": 7, "y": 1.2, "constraints": [0.3, -1]}.
//
// A reply must carry "error" (a non-empty string) or "y"; when it carries
// both, the error wins. Unknown members are ignored. ParseReply never
// panics, whatever the input.
func ParseReply(line []byte) (Reply, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Reply{}, errors.New("empty line")
	}
	if line[0] != '{' {
		return Reply{}, errors.New("not a JSON object")
	}
	var raw struct {
		ID    json.RawMessage `json:"id"`
		Y     json.RawMessage `json:"y"`
		Error json.RawMessage `json:"error"`
		Cons  json.RawMessage `json:"constraints"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return Reply{}, fmt.Errorf("invalid JSON: %w", err)
	}
	var r Reply
	if !isNull(raw.ID) {
		id, err := parseID(raw.ID)
		if err != nil {
			return Reply{}, err
		}
		r.ID, r.HasID = id, true
	}
	if !isNull(raw.Error) {
		var msg string
		if err := json.Unmarshal(raw.Error, &msg); err != nil {
			// Not a string: keep the raw JSON as the message.
			msg = string(raw.Error)
		}
		r.Error = msg
	}
	if !isNull(raw.Y) {
		var y float64
		var err error
		if raw.Y[0] == '[' {
			var vs []float64
			vs, err = parseNumbers(raw.Y, "y")
			if err == nil && len(vs) < 2 {
				err = fmt.Errorf(`"y" is not a number: an array of %d values (an array is for two or more objectives)`, len(vs))
			}
			if err == nil {
				y = vs[0]
				r.extra().Values = vs
			}
		} else {
			y, err = parseY(raw.Y)
		}
		if err != nil {
			if r.Error != "" {
				return r, nil
			}
			return Reply{}, err
		}
		r.Y, r.HasY = y, true
	}
	if !isNull(raw.Cons) && r.Error == "" {
		c, err := parseNumbers(raw.Cons, "constraints")
		if err != nil {
			return Reply{}, err
		}
		r.extra().Constraints = c
	}
	if r.Error == "" && !r.HasY {
		return Reply{}, errors.New(`reply has neither "y" nor "error"`)
	}
	return r, nil
}

// parseNumbers parses a JSON array of values as "y" is (numbers, or the
// strings of NaN and the infinities).
func parseNumbers(raw json.RawMessage, name string) ([]float64, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%q is not an array of numbers: %s", name, truncate(string(raw), 40))
	}
	out := make([]float64, len(items))
	for i, it := range items {
		if isNull(it) {
			return nil, fmt.Errorf("%q: element %d is null", name, i)
		}
		v, err := parseY(it)
		if err != nil {
			return nil, fmt.Errorf("%q: element %d: %w", name, i, err)
		}
		out[i] = v
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func parseID(raw json.RawMessage) (int, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || raw[0] == '"' {
		return 0, fmt.Errorf(`"id" is not a number: %s`, truncate(string(raw), 40))
	}
	if id, err := strconv.ParseInt(n.String(), 10, 64); err == nil && id >= math.MinInt32 && id <= math.MaxInt32 {
		return int(id), nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, fmt.Errorf(`"id" is not a small integer: %s`, truncate(n.String(), 40))
	}
	return int(f), nil
}

func parseY(raw json.RawMessage) (float64, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf(`invalid "y": %w`, err)
		}
		// Only the spellings of NaN and the infinities may be strings.
		if y, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && (math.IsNaN(y) || math.IsInf(y, 0)) {
			return y, nil
		}
		return 0, fmt.Errorf(`"y" is the string %q, not a number: send the value as a JSON number (only "NaN", "Inf" and "-Inf" may be strings)`, truncate(s, 40))
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf(`"y" is not a number: %s`, truncate(string(raw), 40))
	}
	y, err := strconv.ParseFloat(n.String(), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return y, nil // ±Inf (or 0 for underflow): a value, not garbage
		}
		return 0, fmt.Errorf(`"y" is not a number: %q`, truncate(n.String(), 40))
	}
	return y, nil
}

// progress is a line of a plugin about its running evaluation: an
// intermediate value, or its answer to a prune request.
type progress struct {
	id     int
	step   int
	value  float64
	pruned bool
	bad    string // why the line is garbage, "" if it is not
}

// parseProgress reads an intermediate value {"id":7,"step":3,"value":0.4}
// or the answer {"id":7,"pruned":true}; false for any other line (a reply).
func parseProgress(line []byte) (progress, bool) {
	if !bytes.Contains(line, []byte(`"step"`)) && !bytes.Contains(line, []byte(`"pruned"`)) {
		return progress{}, false
	}
	var raw struct {
		ID     json.RawMessage `json:"id"`
		Step   *json.Number    `json:"step"`
		Value  *float64        `json:"value"`
		Pruned bool            `json:"pruned"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &raw) != nil {
		return progress{}, false
	}
	id, err := parseID(raw.ID)
	if err != nil {
		return progress{}, false
	}
	m := progress{id: id, pruned: raw.Pruned}
	if raw.Pruned {
		return m, true
	}
	if raw.Step == nil {
		return progress{}, false
	}
	step, err := raw.Step.Int64()
	switch {
	case err != nil || step < 0 || step > math.MaxInt32:
		m.bad = fmt.Sprintf(`garbage on stdout: "step" %s is not an integer >= 0`, raw.Step.String())
	case raw.Value == nil || math.IsNaN(*raw.Value) || math.IsInf(*raw.Value, 0):
		m.bad = `garbage on stdout: an intermediate value needs a finite "value"`
	default:
		m.step, m.value = int(step), *raw.Value
	}
	return m, true
}

// garbage fails evaluation id for a bad line and drops the plugin.
func (p *Process) garbage(c *child, id int, out outLine, msg string) (Reply, error) {
	err := p.fail(KindGarbage, id, msg, nil)
	err.Line = truncate(strings.TrimRight(string(out.data), "\r\n"), garbageQuote)
	p.drop(c, true, err)
	return Reply{}, err
}

// handleReply interprets one non-blank stdout line.
func (p *Process) handleReply(c *child, id int, out outLine) (Reply, error) {
	line := out.data
	garbage := func(msg string) (Reply, error) {
		err := p.fail(KindGarbage, id, msg, nil)
		err.Line = truncate(strings.TrimRight(string(line), "\r\n"), garbageQuote)
		p.drop(c, true, err)
		return Reply{}, err
	}
	if out.tooLong {
		return garbage("garbage on stdout: reply line too long (over 1 MiB)")
	}
	r, perr := ParseReply(line)
	switch {
	case perr != nil:
		return garbage("garbage on stdout: " + perr.Error())
	case !r.HasID:
		return garbage(fmt.Sprintf(`garbage on stdout: reply without "id" (want %d)`, id))
	case r.ID != id:
		return garbage(fmt.Sprintf("garbage on stdout: reply for id %d, want %d", r.ID, id))
	case r.Error != "":
		return Reply{}, p.fail(KindPluginError, id, "plugin reported an error: "+truncate(r.Error, 2000), nil)
	case math.IsNaN(r.Y) || math.IsInf(r.Y, 0):
		return Reply{}, p.fail(KindNonFinite, id, fmt.Sprintf("plugin returned the non-finite value %v", r.Y), nil)
	case r.nonFinite() != "":
		return Reply{}, p.fail(KindNonFinite, id, "plugin returned "+r.nonFinite(), nil)
	}
	return r, nil
}

// crashed reports that c died (or closed stdout) during evaluation id.
func (p *Process) crashed(c *child, id int, what string) error {
	select {
	case <-c.exited:
	case <-time.After(exitGrace):
		// Alive but not talking: it closed stdout or stopped reading stdin.
		_ = killGroup(c.cmd)
		<-c.exited
		if what == "" {
			what = "plugin closed its stdout"
		}
		what += "; killed"
	}
	select {
	case <-c.stderrDone:
	case <-time.After(drainGrace):
	}
	msg := "plugin crashed (" + c.exitStatus() + ")"
	if what != "" {
		msg = "plugin crashed: " + what + " (" + c.exitStatus() + ")"
	}
	err := p.fail(KindCrash, id, msg, nil)
	err.Stderr = c.sink.Tail()
	p.drop(c, true, err)
	return err
}

// appendRequest appends the JSON request line for x to b; params is the
// compact "params" object, nil for none.
func appendRequest(b []byte, id int, x []float64, params []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"x":`...)
	b = appendFloats(b, x)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...)
}

func appendFloats(b []byte, x []float64) []byte {
	b = append(b, '[')
	for i, v := range x {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']')
}

// appendParams appends {"name":value,...} in the order of names.
func appendParams(b []byte, x []float64, names []string) []byte {
	b = append(b, '{')
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		q, _ := json.Marshal(n) // a string always marshals
		b = append(b, q...)
		b = append(b, ':')
		b = strconv.AppendFloat(b, x[i], 'g', -1, 64)
	}
	return append(b, '}')
}
