package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// condSpace chooses between two sub-functions: branch "a" has two floats
// and an integer, branch "b" a float and a categorical whose choice "sq"
// has a float of its own (a chained condition).
func condSpace(t *testing.T) Space {
	t.Helper()
	s, err := NewSpace(
		Categorical("fn", "a", "b"),
		Float("x1", 0, 1).When("fn", "a"),
		Float("x2", 0, 1).When("fn", "a"),
		Int("d", 1, 4).When("fn", "a"),
		Float("y", -2, 2).When("fn", "b"),
		Categorical("shape", "sq", "abs").When("fn", "b"),
		LogFloat("s", 0.1, 1).When("shape", "sq"),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// condValue is the objective on condSpace: branch a has its minimum 1 at
// x = (0.3, 0.7), d = 2; branch b's abs 0.2 at y = 1; its sq 0 at y = 1,
// s = 0.1.
func condValue(p Params) float64 {
	if p.String("fn") == "a" {
		d := float64(p.Int("d") - 2)
		return 1 + sq(p.Float("x1")-0.3) + sq(p.Float("x2")-0.7) + 0.1*d*d
	}
	if p.String("shape") == "abs" {
		return 0.2 + math.Abs(p.Float("y")-1)
	}
	return p.Float("s")*sq(p.Float("y")-1)*4 + (p.Float("s") - 0.1)
}

func sq(v float64) float64 { return v * v }

// condActive is the set of parameters active for the values p, computed
// from the conditions as written in condSpace.
func condActive(p Params) []string {
	out := []string{"fn"}
	switch p.String("fn") {
	case "a":
		out = append(out, "x1", "x2", "d")
	case "b":
		out = append(out, "y", "shape")
		if p.String("shape") == "sq" {
			out = append(out, "s")
		}
	}
	sort.Strings(out)
	return out
}

func keys(p Params) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestConditionErrors: a space whose conditions name a missing parent, a
// float parent, values the parent does not have, or form a cycle is an
// error naming the parameter.
func TestConditionErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		params []Param
		want   string
	}{
		{[]Param{Categorical("k", "a", "b"), Float("x", 0, 1).When("kk", "a")}, `parameter "x": condition: parent "kk" is not a parameter`},
		{[]Param{Float("k", 0, 1), Float("x", 0, 1).When("k", 0.5)}, `parameter "x": condition: parent "k" is a float parameter`},
		{[]Param{Categorical("k", "a", "b"), Float("x", 0, 1).When("k", "c")}, `parameter "x": condition: value 1: c is not one of the choices`},
		{[]Param{Categorical("k", "a", "b"), Float("x", 0, 1).When("k")}, `parameter "x": condition: no values`},
		{[]Param{Categorical("k", "a", "b"), Float("x", 0, 1).When("k", "a", "a")}, `parameter "x": condition: value a given twice`},
		{[]Param{Int("n", 1, 3), Float("x", 0, 1).When("n", 4)}, `parameter "x": condition: value 1: 4 is not an integer of parent "n"'s range`},
		{[]Param{Int("n", 1, 3), Float("x", 0, 1).When("n", 1.5)}, `parameter "x": condition: value 1: 1.5 is not an integer`},
		{[]Param{Categorical("k", "a", "b").When("k", "a")}, `parameter "k": condition: the parameter is its own parent`},
		{[]Param{Categorical("k", "a", "b").When("j", "u"), Categorical("j", "u", "v").When("k", "b")}, `parameter "k": its conditions form a cycle (k -> j -> k)`},
		{[]Param{Categorical("k", "a", "b").When("j", "u"), Categorical("j", "u", "v").When("i", "y"), Categorical("i", "x", "y").When("k", "a")},
			`parameter "k": its conditions form a cycle (k -> j -> i -> k)`},
		{[]Param{Float("x", 0, 1).When("", "a")}, `parameter "x": condition: no parent`},
	}
	for _, c := range cases {
		_, err := NewSpace(c.params...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.params, err, c.want)
		}
	}
	// The same through a space file.
	file := `{"params":[{"name":"kernel","type":"categorical","choices":["rbf","poly"]},
		{"name":"degree","type":"int","low":2,"high":5,"condition":{"parent":"kernel","values":["linear"]}}]}`
	if _, err := ReadSpace(strings.NewReader(file)); err == nil || !strings.Contains(err.Error(), `parameter "degree": condition: value 1: linear is not one of the choices [rbf poly]`) {
		t.Errorf("space file with a bad value: %v", err)
	}
	file = `{"params":[{"name":"k","type":"categorical","choices":["a","b"]},{"name":"x","low":0,"high":1,"condition":{"parent":"k","value":["a"]}}]}`
	if _, err := ReadSpace(strings.NewReader(file)); err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), "value") {
		t.Errorf("space file with a misspelt condition field: %v", err)
	}
}

// TestConditionSpaceFile: the space file format of conditions, read,
// written and read back the same; numbers of an int parent.
func TestConditionSpaceFile(t *testing.T) {
	t.Parallel()
	file := `{"params":[
		{"name":"kernel","type":"categorical","choices":["rbf","poly",3]},
		{"name":"degree","type":"int","low":2,"high":5,"condition":{"parent":"kernel","values":["poly",3]}},
		{"name":"coef0","low":0,"high":1,"condition":{"parent":"degree","values":[3,4]}},
		{"name":"gamma","type":"float","low":1e-3,"high":1,"log":true,"condition":{"parent":"kernel","values":["rbf"]}}]}`
	sp, err := ReadSpace(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if c := sp.Params[1].Condition; c == nil || c.Parent != "kernel" || !reflect.DeepEqual(c.Values, []any{"poly", 3.0}) {
		t.Errorf("degree's condition %+v", c)
	}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"condition":{"parent":"degree","values":[3,4]}`) {
		t.Errorf("written: %s", b)
	}
	back, err := ReadSpace(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("reading %s: %v", b, err)
	}
	if !reflect.DeepEqual(sp, back) {
		t.Errorf("round trip:\n%+v\n%+v", sp, back)
	}
	// A space without conditions writes no condition field (stored
	// studies keep their bytes).
	plain, err := json.Marshal(mixedSpace(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "condition") {
		t.Errorf("a space without conditions: %s", plain)
	}
	// Activity: kernel 3 activates degree; degree 4 activates coef0.
	x, err := sp.PointOf(map[string]any{"kernel": 3, "degree": 4, "coef0": 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.Active(x); !reflect.DeepEqual(got, []bool{true, true, true, false}) {
		t.Errorf("active %v", got)
	}
	if p := sp.ParamsOf(x); !reflect.DeepEqual(keys(p), []string{"coef0", "degree", "kernel"}) {
		t.Errorf("params %v", p)
	}
	if sp.Continuous() {
		t.Error("a conditional space is Continuous")
	}
}

// TestConditionPoints: Params hold the active parameters only; a point's
// inactive parameters hold their placeholders, which Check requires;
// PointOf wants exactly the active parameters.
func TestConditionPoints(t *testing.T) {
	t.Parallel()
	sp := condSpace(t)
	x, err := sp.PointOf(map[string]any{"fn": "b", "y": 0.5, "shape": "abs"})
	if err != nil {
		t.Fatal(err)
	}
	// Placeholders: the middles of x1, x2 and the log range of s, d's
	// middle rounded, and shape's first choice.
	want := []float64{1, 0.5, 0.5, 3, 0.5, 1, math.Sqrt(0.1)}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-12 {
			t.Errorf("x = %v, want %v", x, want)
			break
		}
	}
	p := sp.ParamsOf(x)
	if !reflect.DeepEqual(keys(p), []string{"fn", "shape", "y"}) || !p.Has("y") || p.Has("s") {
		t.Errorf("params %v", p)
	}
	bad := slices.Clone(x)
	bad[1] = 0.9
	if err := sp.Check(bad); err == nil || !strings.Contains(err.Error(), `parameter "x1" is not active at this point (it exists when "fn" is a)`) {
		t.Errorf("Check of a non-canonical point: %v", err)
	}
	sp.Canonicalize(bad)
	if !reflect.DeepEqual(bad, x) {
		t.Errorf("Canonicalize: %v, want %v", bad, x)
	}
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"fn": "b", "y": 0.5}, `parameter "shape" is missing (it is active: "fn" is b)`},
		{map[string]any{"fn": "b", "y": 0.5, "shape": "sq"}, `parameter "s" is missing (it is active: "shape" is sq)`},
		{map[string]any{"fn": "b", "y": 0.5, "shape": "abs", "x1": 0.2}, `parameter "x1" is not active at this point (it exists when "fn" is a): leave it out`},
		{map[string]any{"fn": "b", "y": 0.5, "shape": "abs", "zz": 1}, `unknown parameter "zz"`},
		{map[string]any{"y": 0.5}, `parameter "fn" is missing`},
	} {
		if _, err := sp.PointOf(c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PointOf(%v): %v, want %q", c.params, err, c.want)
		}
	}
	// Encoding: the inactive coordinates are the same for every point of
	// the branch.
	y, _ := sp.PointOf(map[string]any{"fn": "b", "y": -1.5, "shape": "sq", "s": 0.3})
	ex, ey := make([]float64, sp.EncodedDim()), make([]float64, sp.EncodedDim())
	sp.Encode(ex, x)
	sp.Encode(ey, y)
	if !reflect.DeepEqual(ex[2:5], ey[2:5]) || math.Abs(ex[2]-0.5) > 1e-12 || math.Abs(ex[3]-0.5) > 1e-12 || ex[4] != 2.0/3 {
		t.Errorf("branch a's coordinates at branch b's points: %v and %v", ex[2:5], ey[2:5])
	}
}

// TestConditionOrder: a child may come before its parent in the space.
func TestConditionOrder(t *testing.T) {
	t.Parallel()
	sp, err := NewSpace(Float("s", 0, 1).When("shape", "sq"), Categorical("shape", "sq", "abs").When("fn", "b"), Categorical("fn", "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    []float64
		want []bool
	}{{[]float64{0.25, 0, 1}, []bool{true, true, true}}, {[]float64{0.5, 1, 1}, []bool{false, true, true}}, {[]float64{0.5, 0, 0}, []bool{false, false, true}}} {
		if got := sp.Active(c.x); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Active(%v) = %v, want %v", c.x, got, c.want)
		}
		if err := sp.Check(c.x); err != nil {
			t.Errorf("Check(%v): %v", c.x, err)
		}
	}
}

// TestConditionCSV: an imported CSV leaves inactive parameters empty, as
// bkb export writes them.
func TestConditionCSV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "csv", Config{Space: condSpace(t), Budget: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.ImportCSV(ctx, strings.NewReader("fn,x1,x2,d,y,shape,s,value\na,0.3,0.7,2,,,,1\nb,,,,1,sq,0.1,0\nb,,,,0,abs,,1.2\n"), "old.csv")
	if err != nil || n != 3 {
		t.Fatalf("import: %d, %v", n, err)
	}
	if best, ok := s.Best(); !ok || best.Value != 0 || !reflect.DeepEqual(keys(best.Params), []string{"fn", "s", "shape", "y"}) {
		t.Errorf("best %+v", best)
	}
	// The model along a parameter: not along one inactive at the best
	// trial; along its branch's parent, the other branch at placeholders.
	if _, err := s.Slice("x1", 8); !errors.Is(err, ErrInactive) {
		t.Errorf("slice along an inactive parameter: %v", err)
	}
	if sl, err := s.Slice("fn", 8); err != nil || len(sl.Mean) != 2 || math.IsNaN(sl.Mean[0]) {
		t.Errorf("slice along fn: %+v, %v", sl, err)
	}
	for _, c := range []struct{ csv, want string }{
		{"fn,x1,x2,d,y,shape,s,value\na,0.3,,2,,,,1\n", `bad.csv:2: parameter "x2" is empty but active`},
		{"fn,x1,x2,d,y,shape,s,value\na,0.3,0.2,2,1,,,1\n", `bad.csv:2: parameter "y" is not active at this point (it exists when "fn" is b): leave it empty`},
	} {
		if _, err := s.ImportCSV(ctx, strings.NewReader(c.csv), "bad.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.csv, err, c.want)
		}
	}
}

// TestConditionTrialGetters: a trial's getters say when a parameter is not
// active for it.
func TestConditionTrialGetters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "get", Config{Space: condSpace(t), Budget: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, map[string]any{"fn": "a", "x1": 0.1, "x2": 0.2, "d": 3}); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := tr.GetInt("d"); err != nil || d != 3 {
		t.Errorf("GetInt(d) = %d, %v", d, err)
	}
	_, err = tr.GetFloat("y")
	if !errors.Is(err, ErrInactive) || !strings.Contains(err.Error(), `parameter "y" is not active for this trial (it exists when "fn" is b)`) {
		t.Errorf("GetFloat(y): %v", err)
	}
	if _, err := tr.GetString("nope"); err == nil || errors.Is(err, ErrInactive) {
		t.Errorf("GetString(nope): %v", err)
	}
}

// runCond optimizes condValue on condSpace with policy for 40 trials and
// checks every trial: its params are exactly the active set, its inactive
// parameters hold their placeholders, and no two trials' points differ
// only where parameters are inactive. It returns the best value.
func runCond(t *testing.T, policy string, seed uint64) float64 {
	t.Helper()
	ctx := context.Background()
	sp := condSpace(t)
	s, err := Create(ctx, storage.NewMemory(), "cond", Config{Space: sp, Budget: 40, Seed: seed, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		if got, want := keys(tr.Params), condActive(tr.Params); !reflect.DeepEqual(got, want) {
			return 0, fmt.Errorf("trial %d: params %v, want the active set %v", tr.Number, got, want)
		}
		return condValue(tr.Params), nil
	}, 0)
	if err != nil {
		t.Fatalf("%s seed %d: %v", policy, seed, err)
	}
	trials := s.Trials()
	// The active values identify a point: two trials with the same
	// active values have the same stored x.
	byActive := map[string][]float64{}
	for _, tr := range trials {
		if tr.State != Complete {
			t.Errorf("%s seed %d: trial %d is %s (%s)", policy, seed, tr.Number, tr.State, tr.Error)
		}
		if err := sp.Check(tr.X); err != nil {
			t.Errorf("%s seed %d: trial %d: %v", policy, seed, tr.Number, err)
		}
		raw, _ := json.Marshal(tr.Params)
		if x, ok := byActive[string(raw)]; ok && !reflect.DeepEqual(x, tr.X) {
			t.Errorf("%s seed %d: trial %d's point %v differs from %v only where parameters are inactive", policy, seed, tr.Number, tr.X, x)
		}
		byActive[string(raw)] = tr.X
	}
	best, ok := s.Best()
	if !ok {
		t.Fatalf("%s seed %d: no best trial", policy, seed)
	}
	return best.Value
}

// TestConditionalStudy: 40 trials on a conditional space carry exactly
// their active parameters, and BKB finds better values than random search
// on the same budget and seeds (median of 5).
func TestConditionalStudy(t *testing.T) {
	t.Parallel()
	var bo, rnd []float64
	for seed := uint64(1); seed <= 5; seed++ {
		bo = append(bo, runCond(t, "bkb", seed))
		rnd = append(rnd, runCond(t, "random", seed))
	}
	slices.Sort(bo)
	slices.Sort(rnd)
	t.Logf("best values, bkb %v, random %v", bo, rnd)
	if !(bo[2] < rnd[2]) {
		t.Errorf("median best value: bkb %v, random search %v", bo[2], rnd[2])
	}
}

// svmError is the objective of docs/conditional.md's experiment (and of
// objectives/plugin/examples/python/conditional.py): a synthetic
// validation error whose kernel chooses its parameters; 0.04 at its
// minimum (poly, degree 3, coef0 0.4, C 10).
func svmError(p Params) float64 {
	e := 0.1 * sq(math.Log10(p.Float("C"))-1)
	switch p.String("kernel") {
	case "linear":
		return 0.2 + e
	case "rbf":
		return 0.05 + e + 0.08*sq(math.Log10(p.Float("gamma"))+2)
	}
	d := p.Int("degree")
	e += 0.08 + 0.02*sq(float64(d-3))
	if d == 3 || d == 4 {
		e += 0.1*sq(p.Float("coef0")-0.4) - 0.04
	}
	return e
}

// BKB_CONDITIONAL=1 runs docs/conditional.md's experiment: the median
// simple regret over 10 seeds of BKB on the conditional space, BKB on the
// same parameters without conditions (the objective ignores the ones its
// branch does not use), and random search on the conditional space.
func TestConditionalExperiment(t *testing.T) {
	if os.Getenv("BKB_CONDITIONAL") == "" {
		t.Skip("BKB_CONDITIONAL=1 runs it")
	}
	ctx := context.Background()
	mk := func(cond bool) Space {
		g, d, c := LogFloat("gamma", 1e-4, 10), Int("degree", 2, 5), Float("coef0", 0, 1)
		if cond {
			g, d, c = g.When("kernel", "rbf"), d.When("kernel", "poly"), c.When("degree", 3, 4)
		}
		s, err := NewSpace(Categorical("kernel", "linear", "rbf", "poly"), LogFloat("C", 1e-3, 1e3), g, d, c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, budget := range []int{40, 80} {
		for _, v := range []struct {
			name   string
			cond   bool
			policy string
		}{{"conditional bkb", true, "bkb"}, {"flat bkb", false, "bkb"}, {"conditional random", true, "random"}} {
			var bs []float64
			for seed := uint64(1); seed <= 10; seed++ {
				s, err := Create(ctx, storage.NewMemory(), "x", Config{Space: mk(v.cond), Budget: budget, Seed: seed, Policy: v.policy})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) { return svmError(tr.Params), nil }, 0); err != nil {
					t.Fatal(err)
				}
				b, _ := s.Best()
				bs = append(bs, b.Value-0.04)
			}
			slices.Sort(bs)
			t.Logf("T=%d %-20s median simple regret %.2g (min %.2g, max %.2g)", budget, v.name, (bs[4]+bs[5])/2, bs[0], bs[9])
		}
	}
}

// TestPlaceholders: every kind of parameter has a valid placeholder at the
// middle of its range, whose encoding is a valid coordinate of the
// candidates' domain (a trust region may be centered on it).
func TestPlaceholders(t *testing.T) {
	t.Parallel()
	sp := mixedSpace(t)
	want := map[string]float64{"x": 0.5, "lr": math.Sqrt(1e-5) * math.Sqrt(1e-1), "drop": 0.2, "layers": 4, "units": 64, "act": 0, "batch": 0}
	x := make([]float64, sp.Dim())
	for i, p := range sp.Params {
		x[i] = p.Placeholder()
		if x[i] != want[p.Name] {
			t.Errorf("%s: placeholder %v, want %v", p.Name, x[i], want[p.Name])
		}
	}
	if err := sp.Check(x); err != nil {
		t.Error(err)
	}
	u := make([]float64, sp.EncodedDim())
	sp.Encode(u, x)
	if err := sp.Domain().Check(u); err != nil {
		t.Errorf("the placeholders' encoding %v: %v", u, err)
	}
}
