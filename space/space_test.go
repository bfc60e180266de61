package space

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// mixedSpace has one parameter of every kind.
func mixedSpace(t *testing.T) Space {
	t.Helper()
	s, err := NewSpace(
		Float("x", -2, 3),
		LogFloat("lr", 1e-5, 1e-1),
		Discrete("drop", 0, 0.5, 0.1),
		Int("layers", 1, 6),
		LogInt("units", 8, 512),
		Categorical("act", "relu", "tanh", "gelu"),
		Categorical("batch", 16, 32, 64),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpaceFileRoundTrip(t *testing.T) {
	t.Parallel()
	s := mixedSpace(t)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadSpace(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("reading %s: %v", b, err)
	}
	if !reflect.DeepEqual(s, back) {
		t.Errorf("round trip:\n%+v\n%+v", s, back)
	}
	// The documented file format, with the type defaulting to float.
	file := `{"params":[{"name":"x","low":0,"high":1},{"name":"n","type":"int","low":1,"high":8,"log":true},
		{"name":"c","type":"categorical","choices":["a","b",3]},{"name":"s","type":"float","low":0,"high":1,"step":0.25}]}`
	sp, err := ReadSpace(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Params[0].Type != TypeFloat || sp.Params[1].Type != TypeInt || !sp.Params[1].Log || sp.Params[2].Choices[2] != 3.0 || sp.Params[3].Step != 0.25 {
		t.Errorf("parsed %+v", sp)
	}
	if sp.EncodedDim() != 1+1+3+1 {
		t.Errorf("encoded dimension %d, want 6", sp.EncodedDim())
	}
}

func TestSpaceErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, want string }{
		{`{"params":[{"name":"x","low":1,"high":0}]}`, "low must be below high"},
		{`{"params":[{"name":"x","low":0,"high":1,"log":true}]}`, "log-scale parameter needs low > 0"},
		{`{"params":[{"name":"n","type":"int","low":0.5,"high":3}]}`, "integer bounds"},
		{`{"params":[{"name":"s","low":0,"high":1,"step":0.3}]}`, "not a multiple of step"},
		{`{"params":[{"name":"c","type":"categorical","choices":[]}]}`, "needs at least two choices"},
		{`{"params":[{"name":"c","type":"categorical","choices":["only"]}]}`, "needs at least two choices, got 1"},
		{`{"params":[{"name":"x","low":-1e308,"high":1e308}]}`, "must be within ±1e+150"},
		{`{"params":[{"name":"n","type":"int","low":1e19,"high":2e19}]}`, "within ±2^53"},
		{`{"params":[{"name":"n","type":"int","low":-1e16,"high":0}]}`, "within ±2^53"},
		{`{"params":[{"name":"c","type":"categorical","choices":["a","a"]}]}`, "duplicate choice"},
		{`{"params":[{"name":"c","type":"categorical","choices":["a","b"],"low":0}]}`, "only choices"},
		{`{"params":[{"name":"x","type":"complex","low":0,"high":1}]}`, "unknown type"},
		{`{"params":[{"name":"x","low":0,"high":1},{"name":"x","low":0,"high":1}]}`, "duplicate parameter name"},
		{`{"params":[{"name":"x","low":0}]}`, `needs both "low" and "high"`},
		{`{"params":[{"name":"x","low":0,"high":1,"lo":2}]}`, "unknown field"},
		{`{"params":[{"name":"x","low":0,"high":1}]} {}`, "unexpected content after"},
		{`{"params":[]}`, "no parameters"},
		{`{"params":[{"name":"x","low":0,"high":1}],"params":[{"name":"y","low":0,"high":1}]}`, `space: key "params" given twice`},
		{`{"params":[{"name":"x","low":0,"high":1,"low":-1}]}`, `space.params[0]: key "low" given twice`},
		{`{"params":[{"name":"x","low":0,"high":1}],"lower":[5],"upper":[6]}`, "not both"},
		{`{"params":[{"name":"x\u001b[31m","low":0,"high":1}]}`, "control character"},
		{`{"params":[{"name":"c","type":"categorical","choices":["a\tb","c"]}]}`, "control character"},
		{`{"params":[{"name":"x","low":0,"high":1}]}` + strings.Repeat(" ", MaxSpaceFile), "larger than"},
	} {
		if _, err := ReadSpace(strings.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.file, err, c.want)
		}
	}
}

// TestFromUnitValid: uniform draws map to valid points, every level of a
// discrete parameter about equally often, and Encode puts every
// coordinate in [0, 1] with one-hot categoricals.
func TestFromUnitValid(t *testing.T) {
	t.Parallel()
	s := mixedSpace(t)
	rng := rand.New(rand.NewPCG(1, 1))
	u := make([]float64, s.Dim())
	x := make([]float64, s.Dim())
	enc := make([]float64, s.EncodedDim())
	const n = 30000
	layers := map[float64]int{}
	acts := map[float64]int{}
	for i := 0; i < n; i++ {
		for j := range u {
			u[j] = rng.Float64()
		}
		if i == 0 {
			for j := range u {
				u[j] = 1 // the upper edge
			}
		}
		s.FromUnit(x, u)
		if err := s.Check(x); err != nil {
			t.Fatalf("u %v -> %v: %v", u, x, err)
		}
		layers[x[3]]++
		acts[x[5]]++
		s.Encode(enc, x)
		hot := 0.0
		for j, v := range enc {
			if v < 0 || v > 1 {
				t.Fatalf("encoded coordinate %d = %v", j, v)
			}
		}
		for _, v := range enc[5:8] {
			hot += v
		}
		if hot != 1 {
			t.Fatalf("one-hot sum %v", hot)
		}
	}
	for v, c := range layers {
		if math.Abs(float64(c)-n/6.0) > 5*math.Sqrt(n/6.0) {
			t.Errorf("layers=%v drawn %d times of %d, want about %d", v, c, n, n/6)
		}
	}
	if len(layers) != 6 || len(acts) != 3 {
		t.Errorf("levels drawn: layers %v, act %v", layers, acts)
	}
}

func TestParamsRoundTrip(t *testing.T) {
	t.Parallel()
	s := mixedSpace(t)
	x := []float64{0.5, 1e-3, 0.3, 4, 100, 2, 1}
	if err := s.Check(x); err != nil {
		t.Fatal(err)
	}
	p := s.ParamsOf(x)
	if p["layers"] != 4 || p["units"] != 100 || p["act"] != "gelu" || p["batch"] != 32.0 || p.String("act") != "gelu" {
		t.Errorf("params %v", p)
	}
	// Through JSON, as a plugin or `bkb ask` sees them.
	b, _ := json.Marshal(p)
	if !strings.Contains(string(b), `"layers":4`) || !strings.Contains(string(b), `"act":"gelu"`) {
		t.Errorf("JSON %s", b)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	y, err := s.PointOf(back)
	if err != nil || !reflect.DeepEqual(x, y) {
		t.Errorf("PointOf(%v) = %v, %v; want %v", back, y, err, x)
	}
	for name, bad := range map[string]map[string]any{
		"missing":     {"x": 0.5},
		"not integer": {"x": 0.5, "lr": 1e-3, "drop": 0.3, "layers": 4.5, "units": 100, "act": "gelu", "batch": 32},
		"no choice":   {"x": 0.5, "lr": 1e-3, "drop": 0.3, "layers": 4, "units": 100, "act": "swish", "batch": 32},
		"off step":    {"x": 0.5, "lr": 1e-3, "drop": 0.35, "layers": 4, "units": 100, "act": "gelu", "batch": 32},
		"out of box":  {"x": 5.0, "lr": 1e-3, "drop": 0.3, "layers": 4, "units": 100, "act": "gelu", "batch": 32},
		"unknown":     {"x": 0.5, "lr": 1e-3, "drop": 0.3, "layers": 4, "units": 100, "act": "gelu", "batch": 32, "z": 1},
	} {
		if _, err := s.PointOf(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSpaceFileDepth: a space file of 100,000 nested '[' (200 KB) is
// refused at once, in a pass linear in its size, by the nesting cap; the
// path of every level made the check quadratic (minutes and hundreds of
// MB). Bytes allocated are measured, not wall time; the test is not
// parallel, so that the count is this test's.
func TestSpaceFileDepth(t *testing.T) {
	for _, c := range []struct {
		name, file, want string
	}{
		{"arrays", strings.Repeat("[", 100_000), "nested deeper than 64 levels"},
		{"objects", strings.Repeat(`{"a":`, 40_000), "nested deeper than 64 levels"},
		{"params", `{"params":[` + strings.Repeat("[", 100_000), "space.params[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadSpace(strings.NewReader(c.file))
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
				t.Fatalf("%d MB allocated for a %d-byte file, want under 50", alloc>>20, len(c.file))
			}
		})
	}
	// A real space's nesting is well within the cap.
	deep := `{"params":[{"name":"c","type":"categorical","choices":["a","b"]}]}`
	if _, err := ReadSpace(strings.NewReader(deep)); err != nil {
		t.Fatal(err)
	}
}
