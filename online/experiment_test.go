package online

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildSpecs(t *testing.T) {
	set := Setting{Dim: 3, N: 1000, Width: 1, Seed: 1}
	for _, name := range LearnerNames {
		l, err := Build(name, set)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if l.Name() == "" {
			t.Errorf("%s: empty name", name)
		}
	}
	good := []string{"pkawv-taylor:m=3", "fogd:d=50:eta=0.1:phase=true", "nons-ald:mu=5:alpha=0.01",
		"forks:b=40:rank=4:rho=50", "dsg:theta=2:t0=5:block=2", "nogd:b=30:rank=3", "pkrr-nystrom:mu=0.5:beta=2",
		"krr:lambda=0.1", "aogd-ald:b0=10", "forks:loss=logistic", " fogd "}
	for _, s := range good {
		l, err := Build(s, set)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if strings.Contains(s, ":") && l.Name() != strings.TrimSpace(s) {
			t.Errorf("%q reports name %q", s, l.Name())
		}
	}
	bad := map[string]string{
		"nosuch":               "unknown learner",
		"fogd:x=1":             "unknown parameter",
		"fogd:d":               "not key=value",
		"fogd:d=abc":           "parameter d",
		"pkawv-taylor:m=2.5":   "not an integer",
		"forks:loss=huber":     "unknown loss",
		"nons-ald:mu=-1":       "mu",
		"krr:width=0":          "width",
		"pkawv-taylor:m=-1":    "degree",
		"forks:rank=1000":      "rank",
		"fogd:eta=0":           "eta",
		"nogd:b=0":             "budget",
		"dsg:theta=-1":         "theta",
		"pkawv-nystrom:beta=0": "beta",
	}
	for s, want := range bad {
		if _, err := Build(s, set); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", s, err, want)
		}
	}
	if _, err := Build("fogd", Setting{Dim: 0, N: 10, Width: 1}); err == nil {
		t.Error("dimension 0 accepted")
	}
}

func TestExperimentSmall(t *testing.T) {
	dir := t.TempDir()
	ds := synth(300, 2, 0.05, 2)
	var b strings.Builder
	for i := 0; i < ds.N; i++ {
		x := ds.Row(i)
		fmt.Fprintf(&b, "%g,%g,%g\n", x[0]*10, x[1]+3, ds.Y[i]*7)
	}
	if err := os.WriteFile(filepath.Join(dir, "toy.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := &Experiment{Data: filepath.Join(dir, "toy.csv"), Learners: []string{"nons-ald", "fogd:d=50", "krr:cap=100"},
		Orders: 3, Seed: 1, N: 200}
	var calls int
	rows, err := exp.Run(t.Context(), func(string, int, int, int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || calls == 0 {
		t.Fatalf("rows %d, progress calls %d", len(rows), calls)
	}
	for _, r := range rows[:2] {
		if r.N != 200 || r.Orders != 3 || !(r.Score < 0.05) || !(r.Std >= 0) || r.Seconds <= 0 || r.Paper != nil {
			t.Errorf("%+v", r)
		}
	}
	if rows[2].Note == "" || !math.IsNaN(rows[2].Score) {
		t.Errorf("exact learner over capacity not skipped: %+v", rows[2])
	}
	if exp.Key() != "toy" {
		t.Errorf("key %q", exp.Key())
	}

	sim := &Experiment{Stream: "sim000", Learners: []string{"kawv", "pkawv-taylor:m=2"}, N: 20, Seed: 2}
	rows, err = sim.Run(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if math.IsNaN(r.Regret) || math.IsNaN(r.Bound) || r.N != 20 {
			t.Errorf("%+v", r)
		}
	}
	if rows[0].Regret > rows[0].Bound {
		t.Errorf("Kernel-AWV regret %v above its bound %v", rows[0].Regret, rows[0].Bound)
	}

	syn := &Experiment{Stream: "synthetic:hartmann3", Learners: []string{"nons-ald", "pkawv-taylor"}, N: 300, Noise: 0.05, Seed: 1}
	rows, err = syn.Run(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].N != 300 || !(rows[0].Score < 0.1) {
		t.Errorf("%+v", rows[0])
	}

	for _, bad := range []*Experiment{
		{Data: "nosuchdataset", DataDir: dir},
		{Stream: "bogus", Data: filepath.Join(dir, "toy.csv")},
		{Stream: "synthetic:nosuch"},
		{Data: filepath.Join(dir, "toy.csv"), TargetTransform: "sqrt"},
		{Data: filepath.Join(dir, "toy.csv"), Learners: []string{"nosuch"}},
	} {
		if _, err := bad.Run(t.Context(), nil); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestExperimentBlocks(t *testing.T) {
	ds := loadShared(t, "german")
	_ = ds
	exp := &Experiment{Data: "german", DataDir: sharedDir(), Stream: "blocks003:b=60:r=5",
		Learners: []string{"forks", "nogd"}, Seed: 1}
	rows, err := exp.Run(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Key() != "blocks003:german:b=60:r=5" || rows[0].N != 300 || rows[0].Task != Classification {
		t.Errorf("key %s rows %+v", exp.Key(), rows[0])
	}
	if p, ok := Paper("blocks003:german:b=500:r=10", "forks"); !ok || p.Score != 5.142 {
		t.Error("paper table lookup")
	}
}

// TestPaperTables runs the papers' settings on the full shared datasets
// and checks the numbers that docs/online.md reports. Minutes; run with
// go test ./online -run PaperTables -full.
func TestPaperTables(t *testing.T) {
	if !*full {
		t.Skip("full-dataset run; use -full")
	}
	dir := sharedDir()
	loadShared(t, "elevators")
	cases := []struct {
		exp    Experiment
		bounds map[string]float64 // learner -> largest acceptable score
	}{
		{Experiment{Data: "elevators", DataDir: dir, Orders: 3, Seed: 1},
			map[string]float64{"nons-ald": 0.0031, "aogd-ald": 0.0056, "fogd": 0.0058, "nogd": 0.0058}},
		{Experiment{Data: "spambase", DataDir: dir, Orders: 5, Seed: 1, Learners: []string{"forks"}},
			map[string]float64{"forks": 30.662}},
	}
	for _, c := range cases {
		rows, err := c.exp.Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			t.Logf("%s %s: %.5f +- %.5f, size %.0f, %.3f s/pass", c.exp.Key(), r.Learner, r.Score, r.Std, r.Size, r.Seconds)
			if b, ok := c.bounds[r.Learner]; ok && r.Score > b {
				t.Errorf("%s %s: %v above %v", c.exp.Key(), r.Learner, r.Score, b)
			}
		}
	}
}

// BenchmarkLearners times one prequential pass of each learner over the
// first 4000 and 16000 examples of elevators (seed 002 settings): the
// "time per pass" of the docs. Run with
//
//	go test ./online -run '^$' -bench Learners -benchtime 1x
func BenchmarkLearners(b *testing.B) {
	ds := loadShared(b, "elevators")
	ds.ExpTargets()
	ds.Scale(&FeatureRange, &UnitRange)
	specs := []string{"nons-ald", "aogd-ald", "fogd", "nogd", "forks", "pkawv-taylor:m=2", "pkrr-nystrom", "dsg:theta=4:t0=100", "krr"}
	for _, n := range []int{4000, 16000} {
		for _, spec := range specs {
			b.Run(fmt.Sprintf("n=%d/%s", n, spec), func(b *testing.B) {
				if spec == "krr" && n > 8192 {
					b.Skip("exact KRR needs O(n^2) memory above its default capacity")
				}
				var res Result
				for i := 0; i < b.N; i++ {
					st := NewDatasetStream(ds, uint64(i+1))
					st.order = st.order[:n]
					l, err := Build(spec, Setting{Dim: ds.D, N: n, Width: 8, Seed: uint64(i + 1), Profile: Profile002})
					if err != nil {
						b.Fatal(err)
					}
					if res, err = Prequential(b.Context(), l, st, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res.MSE(), "mse")
				b.ReportMetric(float64(res.Size), "size")
				b.ReportMetric(res.Elapsed.Seconds(), "s/pass")
			})
		}
	}
}
