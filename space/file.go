package space

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// conditionJSON is a condition in the space file; its values are read as
// the choices are (numbers exactly).
type conditionJSON struct {
	Parent string          `json:"parent"`
	Values json.RawMessage `json:"values"`
}

// UnmarshalJSON reads a space strictly: unknown fields are errors, a
// missing type means float.
func (s *Space) UnmarshalJSON(b []byte) error {
	var sj spaceJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sj); err != nil {
		return paramError(b, err)
	}
	if len(sj.Params) > 0 && (len(sj.Names) > 0 || len(sj.Lower) > 0 || len(sj.Upper) > 0) {
		return errors.New(`give the parameters either as "params" or as "names"/"lower"/"upper", not both`)
	}
	if len(sj.Params) == 0 && len(sj.Lower) > 0 {
		sp, err := Box(sj.Names, sj.Lower, sj.Upper)
		if err != nil {
			return err
		}
		*s = sp
		return nil
	}
	s.Params = s.Params[:0]
	for i, pj := range sj.Params {
		p := Param{Name: pj.Name, Type: pj.Type, Log: pj.Log, Step: pj.Step}
		if p.Type == "" {
			p.Type = TypeFloat
		}
		if p.Name == "" {
			return fmt.Errorf("parameter %d has no name", i+1)
		}
		if p.Type != TypeCategorical {
			if pj.Low == nil || pj.High == nil {
				return fmt.Errorf("parameter %q needs both \"low\" and \"high\"", p.Name)
			}
			p.Low, p.High = *pj.Low, *pj.High
		} else if pj.Low != nil || pj.High != nil {
			return fmt.Errorf("parameter %q: a categorical parameter has only choices (no low or high)", p.Name)
		}
		if len(pj.Choices) > 0 {
			cd := json.NewDecoder(bytes.NewReader(pj.Choices))
			cd.UseNumber()
			if err := cd.Decode(&p.Choices); err != nil {
				return fmt.Errorf("parameter %q: choices: %v", p.Name, err)
			}
		}
		if cj := pj.Condition; cj != nil {
			p.Condition = &Condition{Parent: cj.Parent}
			if len(cj.Values) > 0 {
				cd := json.NewDecoder(bytes.NewReader(cj.Values))
				cd.UseNumber()
				if err := cd.Decode(&p.Condition.Values); err != nil {
					return fmt.Errorf("parameter %q: condition values: %v", p.Name, err)
				}
			}
		}
		s.Params = append(s.Params, p)
	}
	return nil
}

// MaxSpaceFile bounds the size of a space file ReadSpace reads.
const MaxSpaceFile = 1 << 20

// MaxSpaceDepth bounds the nesting of arrays and objects in a space file
// (a real one nests four deep: {"params": [{"choices": [...]}]}).
const MaxSpaceDepth = 64

// checkDuplicateKeys reports an object of the JSON text b that has a key
// twice (encoding/json would keep the last silently), and nesting deeper
// than MaxSpaceDepth. It walks the tokens once, with an explicit stack,
// and builds the path of the offending value only for its error: linear in
// len(b) (a path string per level made the walk quadratic in the depth).
// A syntax error is left to the decoder that reads the file after it.
func checkDuplicateKeys(b []byte) error {
	type frame struct {
		object  bool
		seen    map[string]bool
		key     string // object: the key of the value being read
		index   int    // array: the index of the value being read
		wantKey bool   // object: the next token is a key or '}'
	}
	var stack []frame
	// path names the value the frames below depth lead to.
	path := func(depth int) string {
		var sb strings.Builder
		sb.WriteString("space")
		for _, f := range stack[:depth] {
			if f.object {
				sb.WriteString("." + f.key)
			} else {
				sb.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return sb.String()
	}
	// done marks the end of a value in its container.
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or a syntax error: the decoder below names it
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			top := &stack[n-1]
			if key, ok := tok.(string); ok {
				if top.seen[key] {
					return fmt.Errorf("%s: key %q given twice", path(n-1), key)
				}
				top.seen[key] = true
				top.key, top.wantKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= MaxSpaceDepth {
				return fmt.Errorf("%s...: nested deeper than %d levels: not a space file", path(min(len(stack), 3)), MaxSpaceDepth)
			}
			object := tok == json.Delim('{')
			f := frame{object: object, wantKey: object}
			if object {
				f.seen = map[string]bool{}
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			if len(stack) == 0 {
				return nil
			}
			stack = stack[:len(stack)-1]
		}
		done()
		if len(stack) == 0 {
			return nil // the first value is read
		}
	}
}

// ReadSpace reads a space file: JSON {"params":[...]} with each parameter
// {"name", "type": "float"|"int"|"categorical", "low", "high", "log",
// "step", "choices", "condition": {"parent", "values"}}; the type defaults
// to float. Anything after the JSON object other than white space is an
// error.
func ReadSpace(r io.Reader) (Space, error) {
	var s Space
	b, err := io.ReadAll(io.LimitReader(r, MaxSpaceFile+1))
	if err != nil {
		return s, err
	}
	if len(b) > MaxSpaceFile {
		return s, fmt.Errorf("larger than %d bytes: not a space file", MaxSpaceFile)
	}
	if err := checkDuplicateKeys(b); err != nil {
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return s, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, fmt.Errorf("unexpected content after the space's JSON object (at byte %d)", dec.InputOffset())
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, err
	}
	if err := s.Validate(); err != nil {
		return s, errors.New(strings.TrimPrefix(err.Error(), "study: "))
	}
	return s, nil
}

// MarshalJSON writes a parameter in the space-file format: low and high
// for floats and integers (even when zero), choices for categoricals.
func (p Param) MarshalJSON() ([]byte, error) {
	out := struct {
		Name    string   `json:"name"`
		Type    Type     `json:"type"`
		Low     *float64 `json:"low,omitempty"`
		High    *float64 `json:"high,omitempty"`
		Log     bool     `json:"log,omitempty"`
		Step    float64  `json:"step,omitempty"`
		Choices []any    `json:"choices,omitempty"`
		// Condition is left out without one: a space without conditions
		// writes the bytes it always did.
		Condition *Condition `json:"condition,omitempty"`
	}{Name: p.Name, Type: p.Type, Log: p.Log, Step: p.Step, Choices: p.Choices, Condition: p.Condition}
	if p.Type != TypeCategorical {
		out.Low, out.High = &p.Low, &p.High
	}
	return json.Marshal(out)
}
