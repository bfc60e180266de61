package plugin

import (
	"slices"
	"strings"
	"testing"
)

// TestParseReplyExtra: several objectives ("y" an array) and constraint
// values ("constraints").
func TestParseReplyExtra(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line         string
		y            float64
		values, cons []float64
		wantErr      string
	}{
		{line: `{"id":1,"y":1.2,"constraints":[0.3,-1]}`, y: 1.2, cons: []float64{0.3, -1}},
		{line: `{"id":1,"y":[1,2.5,"-Inf"]}`, y: 1, values: []float64{1, 2.5, negInf()}},
		{line: `{"id":1,"y":[1,2],"constraints":[]}`, y: 1, values: []float64{1, 2}, cons: []float64{}},
		{line: `{"id":1,"y":[]}`, wantErr: `an array of 0 values`},
		{line: `{"id":1,"y":[1,"x"]}`, wantErr: `"y": element 1: "y" is the string "x"`},
		{line: `{"id":1,"y":1,"constraints":3}`, wantErr: `"constraints" is not an array`},
		{line: `{"id":1,"y":1,"constraints":[null]}`, wantErr: `element 0 is null`},
		{line: `{"id":1,"error":"boom","constraints":3}`},
	}
	for _, tc := range cases {
		r, err := ParseReply([]byte(tc.line))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseReply(%q) = %+v, %v; want an error with %q", tc.line, r, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseReply(%q): %v", tc.line, err)
			continue
		}
		if r.Error != "" {
			continue
		}
		var values, cons []float64
		if r.Extra != nil {
			values, cons = r.Extra.Values, r.Extra.Constraints
		}
		if r.Y != tc.y || !slices.Equal(values, tc.values) || !slices.Equal(cons, tc.cons) || (cons == nil) != (tc.cons == nil) {
			t.Errorf("ParseReply(%q) = y %v values %v constraints %v; want %v %v %v", tc.line, r.Y, values, cons, tc.y, tc.values, tc.cons)
		}
	}
}

func negInf() float64 { v := -1e308; return v * 10 }
