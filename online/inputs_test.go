package online

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/internal/testtier"
)

// TestScaleTargetsRobust: with one outlier the clean targets are scaled
// exactly as min-max scaling of the clean targets alone would scale them;
// without outliers it is Scale's min-max map.
func TestScaleTargetsRobust(t *testing.T) {
	t.Parallel()
	clean := make([]float64, 100)
	for i := range clean {
		clean[i] = float64(i%17) + 0.1*float64(i)
	}
	ref := &Dataset{N: len(clean), D: 1, X: make([]float64, len(clean)), Y: slices.Clone(clean)}
	ref.Scale(nil, &UnitRange)

	ds := &Dataset{N: 101, D: 1, X: make([]float64, 101), Y: append(slices.Clone(clean), 1e6)}
	sc := ds.ScaleTargetsRobust(UnitRange)
	if sc.Clipped != 1 || ds.Y[100] != 1 {
		t.Fatalf("clipped %d, outlier scaled to %v", sc.Clipped, ds.Y[100])
	}
	for i := range clean {
		if math.Abs(ds.Y[i]-ref.Y[i]) > 1e-15 {
			t.Fatalf("target %d: %v, min-max of the clean targets %v", i, ds.Y[i], ref.Y[i])
		}
	}
	noOut := &Dataset{N: len(clean), D: 1, X: make([]float64, len(clean)), Y: slices.Clone(clean)}
	if sc := noOut.ScaleTargetsRobust(UnitRange); sc.Clipped != 0 || !slices.Equal(noOut.Y, ref.Y) {
		t.Errorf("no outliers: clipped %d, differs from min-max", sc.Clipped)
	}
}

// TestMedianDistance compares with a brute-force median over all pairs.
func TestMedianDistance(t *testing.T) {
	t.Parallel()
	ds := synth(41, 3, 0, 5)
	var d []float64
	for a := 0; a < ds.N; a++ {
		for b := a + 1; b < ds.N; b++ {
			var s float64
			for j := 0; j < ds.D; j++ {
				s += (ds.Row(a)[j] - ds.Row(b)[j]) * (ds.Row(a)[j] - ds.Row(b)[j])
			}
			d = append(d, math.Sqrt(s))
		}
	}
	slices.Sort(d) // 820 pairs: the median is the mean of the two middle ones
	want := (d[409] + d[410]) / 2
	if got := ds.MedianDistance(1000, 1); math.Abs(got-want) > 1e-12 {
		t.Errorf("median distance %v, want %v", got, want)
	}
}

// TestSetTaskRoundTrip: 1/2 labels become -1/+1 and back.
func TestSetTaskRoundTrip(t *testing.T) {
	t.Parallel()
	ds, err := ReadCSV(strings.NewReader("0,1\n1,2\n2,2\n3,1\n"), "x")
	if err != nil || ds.Task != Classification || !slices.Equal(ds.Y, []float64{-1, 1, 1, -1}) {
		t.Fatalf("%v %v %v", err, ds.Task, ds.Y)
	}
	if err := ds.SetTask(Regression); err != nil || !slices.Equal(ds.Y, []float64{1, 2, 2, 1}) {
		t.Fatalf("%v %v", err, ds.Y)
	}
	three, _ := ReadCSV(strings.NewReader("0,1\n1,2\n2,3\n"), "x")
	if err := three.SetTask(Classification); err == nil {
		t.Error("three target values accepted as classification")
	}
}

// TestBudgetHolds: with a tiny ALD threshold / KORS regularization every
// dictionary wants to grow with n; the budget J stops it at J, and the
// fixed sizes respect J when CapAll.
func TestBudgetHolds(t *testing.T) {
	t.Parallel()
	ds := synth(1500, 4, 0.1, 3)
	const J = 37
	for _, spec := range []string{"nons-ald:alpha=1e-6", "aogd-ald:alpha=1e-6:b0=10", "pkrr-nystrom:mu=1e-4",
		"pros-n-kons:gamma=1e-4", "con-kons:gamma=1e-4", "fogd", "nogd", "forks", "pkrr-taylor:m=3"} {
		l, err := Build(spec, Setting{Dim: ds.D, N: ds.N, Width: 0.3, Seed: 1, Budget: J, CapAll: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Prequential(t.Context(), l, NewOrderedStream(ds), nil)
		if err != nil {
			t.Fatal(err)
		}
		limit := J
		if strings.HasPrefix(spec, "fogd") {
			limit = 2 * J // J frequencies, cos and sin
		}
		if strings.HasPrefix(spec, "forks") {
			limit = J + J/5 + 1 // the SVs plus its feature map
		}
		if res.Size > limit {
			t.Errorf("%s: size %d > budget %d", spec, res.Size, limit)
		}
		if strings.Contains(spec, "alpha=1e-6") || strings.Contains(spec, "mu=1e-4") || strings.Contains(spec, "gamma") {
			if res.Size != J {
				t.Errorf("%s: size %d, want the budget %d (the test must make it want more)", spec, res.Size, J)
			}
		}
	}
}

// TestResolveDataBuiltIn: without a data directory the named datasets fall
// back to the copies built into the package.
func TestResolveDataBuiltIn(t *testing.T) {
	old := DefaultDataDir
	DefaultDataDir = t.TempDir()
	defer func() { DefaultDataDir = old }()
	p, err := ResolveData("german", "")
	if err != nil || !strings.HasPrefix(p, EmbeddedPrefix) {
		t.Fatalf("%q %v", p, err)
	}
	ds, err := openDataset(p)
	if err != nil || ds.N != 1000 || ds.D != 24 || ds.Task != Classification {
		t.Fatalf("%v %+v", err, ds)
	}
	if _, err := ResolveData("german", t.TempDir()); err == nil {
		t.Error("an explicit data directory without the file fell back to the built-in copy")
	}
}

// TestGenericDefaultsBeatTheMean runs the generic defaults (the width and
// lambda mix, budget, centering) on short Friedman and GP-prior streams of
// dimension 8 and 24: every default learner must beat the running mean.
// The full-size version of this check is the table in docs/online.md.
// The short tier checks the Friedman stream; the end-to-end tier both.
func TestGenericDefaultsBeatTheMean(t *testing.T) {
	t.Parallel()
	streams := []string{"synthetic:friedman:d=8", "synthetic:gp:d=24"}
	if testtier.ShortTier() {
		streams = streams[:1]
	}
	for _, stream := range streams {
		e := &Experiment{Stream: stream, N: 800, Noise: 0.1, Seed: 3}
		rows, err := e.Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(GenericRegressionLearners) || rows[0].Learner != "mean" {
			t.Fatalf("%s: rows %v", stream, rows)
		}
		mean := rows[0].Score
		for _, r := range rows[1:] {
			if !(r.Score < mean) {
				t.Errorf("%s: %s MSE %.5f, running mean %.5f", stream, r.Learner, r.Score, mean)
			}
		}
	}
}

// BenchmarkBudgetedPass times one prequential pass of each generic default
// learner as bkb regress runs it (the width mix around the median
// distance, the default budget J = DefaultBudget) over 4000 and 16000
// points of Friedman's function in 16 dimensions: the pass should
// grow about linearly in n once the dictionaries are full. Run with
//
//	go test ./online -run '^$' -bench BudgetedPass -benchtime 1x
func BenchmarkBudgetedPass(b *testing.B) {
	spec, _, err := ParseSyntheticSpec("friedman:d=16")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{4000, 16000} {
		ds, err := spec.Generate(n, 0.1, 1)
		if err != nil {
			b.Fatal(err)
		}
		ds.Scale(&FeatureRange, nil)
		ds.ScaleTargetsRobust(UnitRange)
		width := ds.MedianDistance(1000, 1)
		for _, name := range GenericRegressionLearners {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				var res Result
				for i := 0; i < b.N; i++ {
					l, err := Build(name, Setting{Dim: ds.D, N: n, Width: width, Seed: 1, Budget: DefaultBudget,
						Center: true, Lambda: GenericLambda, Widths: WidthGrid(width)})
					if err != nil {
						b.Fatal(err)
					}
					if res, err = Prequential(b.Context(), l, NewDatasetStream(ds, 1), nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res.MSE(), "mse")
				b.ReportMetric(float64(res.Size), "size")
				b.ReportMetric(res.CPU.Seconds(), "cpu-s/pass")
			})
		}
	}
}
