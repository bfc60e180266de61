package online

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

func TestReadCSV(t *testing.T) {
	cases := []struct {
		name, in string
		n, d     int
		task     Task
		wantErr  string
	}{
		{"regression", "1,2,0.5\n3,4,1.5\n", 2, 2, Regression, ""},
		{"0/1 labels", "1,2,0\n3,4,1\n", 2, 2, Classification, ""},
		{"three values", "1,2,0\n3,4,1\n5,6,2\n", 3, 2, Regression, ""},
		{"header", "a,b,y\n1,2,0.5\n3,4,1.5\n", 2, 2, Regression, ""},
		{"header width", "a,y\n1,2,0.5\n", 0, 0, 0, "the header has 2"},
		{"text after the header", "a,b,y\n1,2,3\nx,2,3\n", 0, 0, 0, "column 1"},
		{"classification", "1,2,-1\n3,4,1\n\n", 2, 2, Classification, ""},
		{"trailing comma", "1,2,1,\n3,4,-1,\n", 2, 2, Classification, ""},
		{"spaces", " 1 , 2 ,3\n", 1, 2, Regression, ""},
		{"ragged", "1,2,3\n1,2\n", 0, 0, 0, "columns"},
		{"not a number", "1,x,3\n", 0, 0, 0, "column 2"},
		{"one column", "1\n2\n", 0, 0, 0, "at least 2"},
		{"empty", "\n", 0, 0, 0, "no examples"},
		{"nan", "1,NaN,3\n", 0, 0, 0, "non-finite"},
		// pandas' QUOTE_ALL and spreadsheets quote every field.
		{"quoted", "\"a\",\"b\",\"y\"\n\"1\",\"2\",\"0.5\"\n\"3\", \"4\",1.5\n", 2, 2, Regression, ""},
		{"bad quote", "1,\"2,3\n", 0, 0, 0, "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := ReadCSV(strings.NewReader(c.in), "x")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ds.N != c.n || ds.D != c.d || ds.Task != c.task {
				t.Errorf("got n=%d d=%d task=%v, want %d %d %v", ds.N, ds.D, ds.Task, c.n, c.d, c.task)
			}
		})
	}
}

func TestLoadCSVGzipAndScale(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("0,10,5,2\n2,10,7,4\n4,10,9,6\n"))
	zw.Close()
	p := filepath.Join(dir, "toy.csv.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "toy" || ds.N != 3 || ds.D != 3 {
		t.Fatalf("got %s %d x %d", ds.Name, ds.N, ds.D)
	}
	c := ds.Clone()
	ds.Scale(&FeatureRange, &UnitRange)
	want := []float64{-1, 0, -1, 0, 0, 0, 1, 0, 1}
	if !slices.Equal(ds.X, want) {
		t.Errorf("features %v, want %v (constant column to the middle)", ds.X, want)
	}
	if !slices.Equal(ds.Y, []float64{0, 0.5, 1}) {
		t.Errorf("targets %v", ds.Y)
	}
	if c.X[0] != 0 {
		t.Error("Clone shares storage")
	}
	c.ExpTargets()
	c.Scale(nil, &UnitRange)
	// exp then min-max: (e^y - e^2)/(e^6 - e^2).
	if w := (math.Exp(4) - math.Exp(2)) / (math.Exp(6) - math.Exp(2)); math.Abs(c.Y[1]-w) > 1e-15 {
		t.Errorf("exp targets %v, want %v", c.Y[1], w)
	}
	if h := c.Head(2); h.N != 2 || len(h.X) != 2*3 {
		t.Errorf("Head: %d", h.N)
	}
	if _, err := LoadCSV(filepath.Join(dir, "missing.csv")); err == nil {
		t.Error("missing file accepted")
	}
}

// TestElevatorsTargetsAreLogGoal documents why ExpTargets exists: the
// stored elevators targets are log(Goal) - mean, so exp of the distinct
// values are multiples of one step (Goal is 0.012, 0.013, ...).
func TestElevatorsTargetsAreLogGoal(t *testing.T) {
	ds := loadShared(t, "elevators")
	ys := slices.Clone(ds.Y)
	slices.Sort(ys)
	ys = slices.Compact(ys)
	base := math.Exp(ys[0])
	for _, y := range ys[:40] {
		q := 12 * math.Exp(y) / base // Goal in thousandths
		if math.Abs(q-math.Round(q)) > 0.01 {
			t.Fatalf("exp(target) ratio %v is not a multiple of Goal's 0.001 step", q)
		}
	}
}

func TestPermutationAndStream(t *testing.T) {
	a, b := Permutation(50, 3), Permutation(50, 3)
	if !slices.Equal(a, b) || slices.Equal(a, Permutation(50, 4)) {
		t.Error("permutations not reproducible or not seed dependent")
	}
	s := slices.Clone(a)
	slices.Sort(s)
	for i, v := range s {
		if v != i {
			t.Fatal("not a permutation")
		}
	}
	ds := synth(10, 2, 0, 1)
	st := NewDatasetStream(ds, 2)
	seen := 0
	for {
		x, y, ok := st.Next()
		if !ok {
			break
		}
		i := st.Order()[seen]
		if !slices.Equal(x, ds.Row(i)) || y != ds.Y[i] {
			t.Fatal("stream returned the wrong example")
		}
		seen++
	}
	if seen != 10 || st.Len() != 10 || st.Dim() != 2 || st.Task() != Regression {
		t.Errorf("seen %d", seen)
	}
}

func TestBlockStream(t *testing.T) {
	ds := synthClass(30, 2, 1)
	s, err := NewBlockStream(ds, 6, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 24 {
		t.Fatalf("Len %d", s.Len())
	}
	for blk := 0; blk < 6; blk++ {
		var first []float64
		var fy float64
		for r := 0; r < 4; r++ {
			x, y, ok := s.Next()
			if !ok {
				t.Fatal("stream ended early")
			}
			if r == 0 {
				first, fy = slices.Clone(x), y
				i := s.picks[blk]
				want := ds.Y[i]
				if blk%2 == 1 {
					want = -want
				}
				if y != want {
					t.Errorf("block %d: label %v, want %v (even blocks flipped)", blk+1, y, want)
				}
			} else if !slices.Equal(x, first) || y != fy {
				t.Errorf("block %d repeat %d differs", blk+1, r)
			}
		}
	}
	if _, _, ok := s.Next(); ok {
		t.Error("stream too long")
	}
	if _, err := NewBlockStream(ds, 0, 1, 1); err == nil {
		t.Error("b = 0 accepted")
	}
	big, _ := NewBlockStream(ds, 100, 1, 1) // more blocks than examples: with replacement
	if big.Len() != 100 {
		t.Error(big.Len())
	}
}

// TestAdversaryKernelAWVBound: against the greedy adversary, Kernel-AWV's
// regret with respect to the best penalized kernel predictor stays below
// Proposition 1's B^2 log det(I + K/lambda) (B = 1), and the adversary is
// reproducible.
func TestAdversaryKernelAWVBound(t *testing.T) {
	k := kernel.RBF{LengthScale: 1}
	run := func(seed uint64) (float64, float64, []float64) {
		l, _ := NewExact(k, 5, 1, AWV, 0)
		adv, err := NewAdversary(l, AdversaryConfig{Dim: 5, N: 40, Kernel: k, Lambda: 1, Candidates: 64, Refine: 16, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var ys []float64
		res, err := Run(t.Context(), l, adv, Options{Observe: func(s Step) {
			ys = append(ys, s.Y, s.Yhat)
			if math.Abs(s.Y) != 1 {
				t.Errorf("adversary label %v not in {-1, 1}", s.Y)
			}
			for _, v := range s.X {
				if v < -1 || v > 1 {
					t.Errorf("adversary point outside the box: %v", s.X)
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.SquaredError-adv.loss) > 1e-9 {
			t.Errorf("adversary loss %v, prequential %v", adv.loss, res.SquaredError)
		}
		return adv.Regret(), adv.LogDet(), ys
	}
	reg, bound, ys := run(1)
	_, _, ys2 := run(1)
	if !slices.Equal(ys, ys2) {
		t.Error("adversary not reproducible")
	}
	t.Logf("Kernel-AWV regret %.2f, Proposition 1 bound %.2f", reg, bound)
	if reg > bound || reg <= 0 {
		t.Errorf("regret %v outside (0, %v]", reg, bound)
	}
}

func TestSyntheticDataset(t *testing.T) {
	f, err := objectives.Lookup("branin")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := SyntheticDataset(f, 200, 0.1, 3)
	if err != nil {
		t.Fatal(err)
	}
	ds2, _ := SyntheticDataset(f, 200, 0.1, 3)
	if !slices.Equal(ds.X, ds2.X) || !slices.Equal(ds.Y, ds2.Y) {
		t.Error("not reproducible")
	}
	for i := 0; i < ds.N; i++ {
		x := ds.Row(i)
		for j, v := range x {
			if v < f.Lower[j] || v > f.Upper[j] {
				t.Fatalf("point %v outside the box", x)
			}
		}
		if math.Abs(ds.Y[i]-f.Value(x)) > 1 {
			t.Fatalf("noise too large")
		}
	}
	if _, err := SyntheticDataset(f, 0, 0.1, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}

// constLearner predicts c and counts Learn calls.
type constLearner struct {
	c float64
	n int
}

func (l *constLearner) Predict([]float64) float64 { return l.c }
func (l *constLearner) Learn([]float64, float64) error {
	l.n++
	if l.n == 7 && l.c == 99 {
		return errors.New("boom")
	}
	return nil
}
func (l *constLearner) Size() int    { return 0 }
func (l *constLearner) Name() string { return "const" }

func TestPrequentialMetrics(t *testing.T) {
	ds := &Dataset{N: 4, D: 1, X: []float64{0, 1, 2, 3}, Y: []float64{1, -1, 1, -1}, Task: Classification}
	for _, c := range []struct {
		pred     float64
		mistakes int
		sq       float64
	}{{0, 2, 4}, {1, 2, 8}, {-0.5, 2, 2*0.25 + 2*2.25}} {
		res, err := Prequential(t.Context(), &constLearner{c: c.pred}, NewOrderedStream(ds), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Mistakes != c.mistakes || math.Abs(res.SquaredError-c.sq) > 1e-12 || res.N != 4 {
			t.Errorf("pred %v: %+v", c.pred, res)
		}
		if res.Score() != res.MistakeRate() || res.MistakeRate() != float64(c.mistakes)/4 {
			t.Errorf("score %v", res.Score())
		}
	}
	var calls []int
	reg := synth(2500, 1, 0, 1)
	res, err := Prequential(t.Context(), &constLearner{}, NewOrderedStream(reg), func(done, total int) {
		calls = append(calls, done)
		if total != 2500 {
			t.Errorf("total %d", total)
		}
	})
	if err != nil || res.Task != Regression || res.Score() != res.MSE() {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []int{1000, 2000, 2500}) {
		t.Errorf("progress calls %v", calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Prequential(ctx, &constLearner{}, NewOrderedStream(reg), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run returned %v", err)
	}
	_, err = Prequential(t.Context(), &constLearner{c: 99}, NewOrderedStream(reg), nil)
	if err == nil || !strings.Contains(err.Error(), "round 7") {
		t.Errorf("learner error not wrapped with the round: %v", err)
	}
	if _, err := Prequential(t.Context(), nil, NewOrderedStream(reg), nil); err == nil {
		t.Error("nil learner accepted")
	}
}
