package storage

import (
	"encoding/json"
	"strconv"
)

// Decoding records: a journal is one JSON line per record, and `bkb
// status`, `ask` and `tell` read every line of it, so that on a study of
// 10,000 trials the decoding of its 20,000 lines was most of a command's
// time (about 8 microseconds a line through encoding/json's reflection).
// decodeRecordFast reads the lines this package writes (json.Marshal of
// a Record: known keys, ASCII strings without escapes, numbers, arrays
// of numbers, one params object) directly, several times faster; any
// other line, or anything it is not sure of, falls back to
// encoding/json, so what a line decodes to never depends on the path
// (FuzzDecodeRecord and TestDecodeRecordFast compare both). It is
// written by hand because no library of the project's decodes this one
// shape without reflection; encoding/json/v2 is still an experiment in
// Go 1.26.

// decodeRecord decodes one journal line into a Record (not validated).
func decodeRecord(b []byte) (Record, error) {
	if r, ok := decodeRecordFast(b); ok {
		return r, nil
	}
	var r Record
	err := json.Unmarshal(b, &r)
	return r, err
}

// recordScanner reads one line; ok turns false at the first thing the
// fast path does not handle.
type recordScanner struct {
	b  []byte
	i  int
	ok bool
}

func (s *recordScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c (after white space) or fails.
func (s *recordScanner) byte(c byte) {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return
	}
	s.ok = false
}

// peek returns the next byte after white space (0 at the end).
func (s *recordScanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string of printable ASCII without escapes and returns its
// contents, the quotes excluded.
func (s *recordScanner) str() []byte {
	s.byte('"')
	if !s.ok {
		return nil
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return s.b[start : s.i-1]
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			break
		}
		s.i++
	}
	s.ok = false
	return nil
}

// number returns the bytes of a number of JSON's grammar; integer says
// whether it has neither fraction nor exponent.
func (s *recordScanner) number() (lit []byte, integer bool) {
	s.space()
	b, i := s.b, s.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		s.ok = false
		return nil, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			s.ok = false
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			s.ok = false
			return nil, false
		}
	}
	s.i = i
	return b[start:i], integer
}

// digits returns the index after the decimal digits of b from i.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *recordScanner) float() float64 {
	lit, _ := s.number()
	if !s.ok {
		return 0
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		s.ok = false
	}
	return v
}

func (s *recordScanner) int() int {
	lit, integer := s.number()
	if !s.ok || !integer {
		s.ok = false
		return 0
	}
	v, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil || int64(int(v)) != v {
		s.ok = false
	}
	return int(v)
}

// floats reads an array of numbers (an empty array is an empty, non-nil
// slice, as encoding/json decodes it).
func (s *recordScanner) floats() []float64 {
	s.byte('[')
	if !s.ok {
		return nil
	}
	out := make([]float64, 0, 8)
	if s.peek() == ']' {
		s.i++
		return out
	}
	for s.ok {
		out = append(out, s.float())
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out
		default:
			s.ok = false
		}
	}
	return nil
}

// object returns the bytes of an object value (braces included): the
// extent is found by counting brackets outside strings, and json.Valid
// then checks it, as encoding/json checks a whole line before decoding.
func (s *recordScanner) object() []byte {
	if s.peek() != '{' {
		s.ok = false
		return nil
	}
	b, start := s.b, s.i
	depth, inStr := 0, false
	for i := start; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				raw := b[start : i+1]
				if !json.Valid(raw) {
					break
				}
				s.i = i + 1
				return raw
			}
		}
	}
	s.ok = false
	return nil
}

// decodeRecordFast decodes a line in the shape json.Marshal gives a
// Record; ok is false when the line is of any other shape (a key this
// path does not know, a null, an escape in a string...): the caller then
// decodes it with encoding/json.
func decodeRecordFast(b []byte) (r Record, ok bool) {
	s := &recordScanner{b: b, ok: true}
	s.byte('{')
	if s.peek() == '}' {
		s.i++
		s.space()
		return r, s.ok && s.i == len(b)
	}
	for s.ok {
		key := s.str()
		s.byte(':')
		if !s.ok {
			break
		}
		switch string(key) {
		case "kind":
			r.Kind = string(s.str())
		case "trial":
			r.Trial = s.int()
		case "arm":
			r.Arm = s.int()
		case "x":
			r.X = s.floats()
		case "params":
			if raw := s.object(); s.ok {
				r.Params = append(json.RawMessage(nil), raw...)
			}
		case "worker":
			r.Worker = string(s.str())
		case "y":
			y := s.float()
			r.Y = &y
		case "error":
			r.Error = string(s.str())
		case "time":
			s.space()
			start := s.i
			s.str()
			if s.ok && r.Time.UnmarshalJSON(b[start:s.i]) != nil {
				s.ok = false
			}
		case "seconds":
			r.Seconds = s.float()
		case "values":
			r.Values = s.floats()
		case "constraints":
			r.Constraints = s.floats()
		case "step":
			r.Step = s.int()
		default:
			s.ok = false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.space()
			return r, s.ok && s.i == len(b)
		default:
			s.ok = false
		}
	}
	return Record{}, false
}
