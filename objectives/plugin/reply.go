package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Reply is one parsed reply line of the plugin protocol.
type Reply struct {
	ID    int     // the "id" member; 0 when HasID is false
	HasID bool    // whether the reply carried an id
	Y     float64 // the objective value; may be NaN or ±Inf (see ParseReply)
	HasY  bool    // whether the reply carried a value
	Error string  // the plugin's own error message, "" if none
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
		y, err := parseY(raw.Y)
		if err != nil {
			if r.Error != "" {
				return r, nil
			}
			return Reply{}, err
		}
		r.Y, r.HasY = y, true
	}
	if r.Error == "" && !r.HasY {
		return Reply{}, errors.New(`reply has neither "y" nor "error"`)
	}
	return r, nil
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
