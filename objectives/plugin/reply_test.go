package plugin

import (
	"math"
	"strings"
	"testing"
)

func TestParseReply(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	cases := []struct {
		line    string
		want    Reply
		nan     bool
		wantErr string
	}{
		{line: `{"id":1,"y":2.5}`, want: Reply{ID: 1, HasID: true, Y: 2.5, HasY: true}},
		{line: "  {\"y\":-3e-2, \"id\": 42 }\r\n", want: Reply{ID: 42, HasID: true, Y: -0.03, HasY: true}},
		{line: `{"id":1.0,"y":0}`, want: Reply{ID: 1, HasID: true, HasY: true}},
		{line: `{"id":1,"y":"NaN"}`, want: Reply{ID: 1, HasID: true, HasY: true}, nan: true},
		{line: `{"id":1,"y":"Inf"}`, want: Reply{ID: 1, HasID: true, Y: inf, HasY: true}},
		{line: `{"id":1,"y":"-Inf"}`, want: Reply{ID: 1, HasID: true, Y: -inf, HasY: true}},
		{line: `{"id":1,"y":"+infinity"}`, want: Reply{ID: 1, HasID: true, Y: inf, HasY: true}},
		{line: `{"id":1,"y":" nan "}`, want: Reply{ID: 1, HasID: true, HasY: true}, nan: true},
		{line: `{"id":1,"y":"-Infinity"}`, want: Reply{ID: 1, HasID: true, Y: -inf, HasY: true}},
		{line: `{"id":1,"y":1e999}`, want: Reply{ID: 1, HasID: true, Y: inf, HasY: true}},
		{line: `{"id":1,"y":-1e999}`, want: Reply{ID: 1, HasID: true, Y: -inf, HasY: true}},
		{line: `{"id":3,"error":"boom"}`, want: Reply{ID: 3, HasID: true, Error: "boom"}},
		{line: `{"id":3,"error":"boom","y":"oops"}`, want: Reply{ID: 3, HasID: true, Error: "boom"}},
		{line: `{"id":3,"error":{"code":7}}`, want: Reply{ID: 3, HasID: true, Error: `{"code":7}`}},
		{line: `{"id":3,"error":"","y":1}`, want: Reply{ID: 3, HasID: true, Y: 1, HasY: true}},
		{line: `{"y":1}`, want: Reply{Y: 1, HasY: true}},
		{line: `{"id":1,"y":1,"extra":[1,2]}`, want: Reply{ID: 1, HasID: true, Y: 1, HasY: true}},
		{line: ``, wantErr: "empty line"},
		{line: `hello`, wantErr: "not a JSON object"},
		{line: `[1,2]`, wantErr: "not a JSON object"},
		{line: `{"id":1,"y":1`, wantErr: "invalid JSON"},
		{line: `{"id":1,"y":1} trailing`, wantErr: "invalid JSON"},
		{line: `{"id":1}`, wantErr: `neither "y" nor "error"`},
		{line: `{"id":1,"y":null}`, wantErr: `neither "y" nor "error"`},
		{line: `{"id":"1","y":1}`, wantErr: `"id" is not a number`},
		{line: `{"id":1.5,"y":1}`, wantErr: `"id" is not a small integer`},
		{line: `{"id":1e20,"y":1}`, wantErr: `"id" is not a small integer`},
		{line: `{"id":1,"y":"abc"}`, wantErr: `"y" is the string "abc", not a number`},
		// A quoted number is a broken plugin, not a value (issue 9).
		{line: `{"id":1,"y":"1.25"}`, wantErr: `"y" is the string "1.25", not a number: send the value as a JSON number`},
		{line: `{"y":"1.5"}`, wantErr: `"y" is the string "1.5"`},
		{line: `{"id":1,"y":"1e999"}`, wantErr: `"y" is the string "1e999"`},
		{line: `{"id":1,"y":""}`, wantErr: `"y" is the string ""`},
		{line: `{"id":1,"y":true}`, wantErr: `"y" is not a number`},
		{line: `{"id":1,"y":[1]}`, wantErr: `"y" is not a number`},
	}
	for _, tc := range cases {
		got, err := ParseReply([]byte(tc.line))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseReply(%q) = %+v, %v; want error containing %q", tc.line, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseReply(%q): %v", tc.line, err)
			continue
		}
		if tc.nan {
			if !math.IsNaN(got.Y) {
				t.Errorf("ParseReply(%q).Y = %v, want NaN", tc.line, got.Y)
			}
			got.Y = 0
		}
		if got != tc.want {
			t.Errorf("ParseReply(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"y":2.5}`, `{"id":1,"y":"NaN"}`, `{"id":2,"error":"x"}`, `{"id":1e3,"y":1e999}`,
		`{"id":1,"y":"-Inf","error":null}`, `garbage`, `{`, `{"id":[],"y":{}}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseReply(line)
		if err != nil {
			if r != (Reply{}) {
				t.Errorf("ParseReply(%q) returned %+v with error %v", line, r, err)
			}
			return
		}
		if r.Error == "" && !r.HasY {
			t.Errorf("ParseReply(%q) = %+v: success without y or error", line, r)
		}
		if !r.HasID && r.ID != 0 {
			t.Errorf("ParseReply(%q) = %+v: id without HasID", line, r)
		}
	})
}
