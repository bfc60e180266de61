package online

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/internal/testtier"
	"github.com/bkb-go/bkb/kernel"
)

// relevantSetting is a regression setting with relevance experts.
func relevantSetting(ds *Dataset, w float64, seed uint64) Setting {
	return Setting{Dim: ds.D, N: ds.N, Task: Regression, Width: w, Seed: seed, Profile: Profile002,
		Budget: 200, Center: true, Widths: WidthGrid(w), Lambda: GenericLambda, ARD: NewRelevanceFits(seed)}
}

// predictions runs spec over ds in file order and returns every prediction.
func predictions(t *testing.T, spec string, ds *Dataset, w float64) []float64 {
	t.Helper()
	l, err := Build(spec, relevantSetting(ds, w, 1))
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	_, err = Run(context.Background(), l, NewOrderedStream(ds), Options{Observe: func(s Step) { out = append(out, s.Yhat) }})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := l.(*Relevance); !ok {
		t.Fatalf("%s: Build returned %T, not a Relevance learner", spec, l)
	} else if _, ok := r.Fit(); !ok {
		t.Fatalf("%s: no relevance fit after %d rows (%v)", spec, ds.N, r.FitError())
	}
	return out
}

// TestRelevancePrequential checks that the relevance learners are
// prequential: the prediction of row s is the same whatever the target of
// row s and the inputs and targets of every later row. The cut points
// include the rounds just before, at and after the fits (rows 50, 100,
// 400), where a fit that used its own row or the next one would show.
// Each run has its own fit cache, so a cached fit cannot hide a leak.
func TestRelevancePrequential(t *testing.T) {
	t.Parallel()
	// 560 rows: fits at 50, 100, 200 and 400; with -short 240 rows, fits
	// at 50 and 100, and in the short tier aogd-ald only (fogd in the
	// end-to-end tier).
	n, specs, cuts := 560, []string{"fogd", "aogd-ald", "pkrr-nystrom"}, []int{0, 1, 48, 49, 50, 51, 99, 100, 101, 399, 400, 401}
	if testing.Short() {
		n, specs, cuts = 240, specs[:2], cuts[:9]
	}
	if testtier.ShortTier() {
		specs = specs[1:2]
	}
	ds, err := SyntheticSpec{Kind: "relevant", Dim: 6, K: 2}.Generate(n, 0.1, 3)
	if err != nil {
		t.Fatal(err)
	}
	ds.Scale(&FeatureRange, &UnitRange)
	for _, spec := range specs {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			// The width (the center of the grid) is computed once: the median
			// heuristic looks at every input, like the feature scaling.
			w := ds.MedianDistance(300, 1)
			base := predictions(t, spec, ds, w)
			for _, s := range cuts {
				alt := ds.Clone()
				rng := rand.New(rand.NewPCG(uint64(s), 9))
				alt.Y[s] = 10 * rng.NormFloat64()
				for i := s + 1; i < alt.N; i++ {
					alt.Y[i] = 10 * rng.NormFloat64()
					for j := range alt.Row(i) {
						alt.Row(i)[j] = 2*rng.Float64() - 1
					}
				}
				got := predictions(t, spec, alt, w)
				for i := 0; i <= s; i++ {
					if got[i] != base[i] {
						t.Fatalf("cut at row %d: row %d's prediction changed from %v to %v when row %d's target and the later rows changed",
							s+1, i+1, base[i], got[i], s+1)
					}
				}
				if s+1 < ds.N && got[s+1] == base[s+1] {
					t.Errorf("cut at row %d: the next prediction did not change: the test would not see a leak", s+1)
				}
			}
		})
	}
}

// TestRelevanceFindsTheInputs: the fit on the first 250 rows of relevance
// streams lists exactly the inputs that matter.
func TestRelevanceFindsTheInputs(t *testing.T) {
	t.Parallel()
	for _, d := range []int{16, 32} {
		spec := SyntheticSpec{Kind: "relevant", Dim: d, K: 3}
		ds, err := spec.Generate(250, 0.1, 2)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := NewRelevanceFits(1).Fit(ds.X, ds.Y, d, ds.N)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fit.Relevant(), spec.Relevant(2); !slices.Equal(got, want) {
			t.Errorf("d = %d: kept inputs %v, want %v (length scales %.3g)", d, got, want, fit.LengthScales)
		}
	}
}

// TestRelevanceSchedule: fits at 50, 100, ..., 1600 rows, none when less
// than a tenth of the stream remains.
func TestRelevanceSchedule(t *testing.T) {
	var got []int
	for c := 1; c <= 5000; c++ {
		if relevanceSchedule(c, 5000) {
			got = append(got, c)
		}
	}
	if want := []int{50, 100, 200, 400, 800, 1600}; !slices.Equal(got, want) {
		t.Errorf("fits at %v, want %v", got, want)
	}
	if relevanceSchedule(400, 440) || !relevanceSchedule(200, 440) {
		t.Error("a fit with less than a tenth of the stream left, or none at 200 of 440")
	}
}

// relevanceStreams are the must-show streams: k = 3 of d = 16, 32, 64
// inputs matter, 4,000 rows, noise 0.1 as the other synthetic streams.
func relevanceStreams() []Experiment {
	var out []Experiment
	for _, d := range []int{16, 32, 64} {
		out = append(out, Experiment{Stream: fmt.Sprintf("synthetic:relevant:d=%d:k=3", d), N: 4000, Seed: 1, Noise: 0.1})
	}
	return out
}

// TestRelevanceStreamsFull (with -full) is the must-show of per-input
// relevance: on the relevance streams, every default learner of bkb
// regress makes at most 0.3 of the running mean's MSE (asserted). It
// prints the markdown rows of docs/online.md with two references: the
// same learners given only the 3 true relevant inputs (an oracle for the
// relevance, at the same defaults; no relevance experts with 3 inputs),
// and exact KRR run on those inputs with its width and ridge tuned in
// hindsight (widths 1/4, 1/(2 sqrt 2), 1/2, 1/sqrt 2, 1 times the median
// distance of those inputs, lambda 0.001 and 0.01). The issue asked for
// every learner within 30% of that KRR; even the oracle learners are not
// (docs/online.md), so that ratio is printed, not asserted. It also prints
// the learners without relevance (--ard off).
//
//	go test ./online -run RelevanceStreamsFull -full -v -timeout 60m
func TestRelevanceStreamsFull(t *testing.T) {
	if !*full {
		t.Skip("full run; use -full")
	}
	const meanTol = 0.3
	var table []string
	for _, base := range relevanceStreams() {
		name := streamName(base)
		t.Run(name, func(t *testing.T) {
			exp := base
			rows, err := exp.Run(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			off := base
			off.ARD = "off"
			iso, err := off.Run(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The same stream on its relevant inputs only.
			def, _ := base.defaults()
			ds, err := base.synthetic(&def)
			if err != nil {
				t.Fatal(err)
			}
			spec, _, _ := ParseSyntheticSpec(strings.TrimPrefix(base.Stream, "synthetic:"))
			rel := spec.Relevant(base.Seed)
			raw, err := spec.Generate(base.N, base.Noise, base.Seed)
			if err != nil {
				t.Fatal(err)
			}
			var csv strings.Builder
			for i := range raw.N {
				for _, j := range rel {
					fmt.Fprintf(&csv, "%v,", raw.Row(i)[j])
				}
				fmt.Fprintf(&csv, "%v\n", raw.Y[i])
			}
			path := filepath.Join(t.TempDir(), "relevant.csv")
			if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			orc := Experiment{Data: path, Seed: base.Seed}
			oracle, err := orc.Run(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			proj := &Dataset{Name: ds.Name + ":relevant", N: ds.N, D: len(rel), Task: Regression, X: make([]float64, ds.N*len(rel)), Y: ds.Y}
			for i := range ds.N {
				for a, j := range rel {
					proj.X[i*len(rel)+a] = ds.Row(i)[j]
				}
			}
			w := proj.MedianDistance(1000, base.Seed)
			krrBest, krrSpec := math.Inf(1), ""
			for _, f := range krrWidthFactors[1:6] {
				for _, lam := range []float64{0.001, 0.01} {
					l, err := NewExact(kernel.RBF{LengthScale: f * w}, proj.D, lam, KRR, DefaultExactCapacity)
					if err != nil {
						t.Fatal(err)
					}
					res, err := Prequential(t.Context(), l, NewDatasetStream(proj, base.Seed), nil)
					if err != nil {
						t.Fatal(err)
					}
					if res.MSE() < krrBest {
						krrBest, krrSpec = res.MSE(), fmt.Sprintf("%.3g x %.3g, %g", f, w, lam)
					}
				}
			}
			mean := rows[0].Score
			cells := []string{name, fmt.Sprintf("%.5f", mean), fmt.Sprintf("%.5f (%s)", krrBest, krrSpec)}
			var found []string
			if exp.Relevance != nil {
				for _, j := range exp.Relevance.Relevant() {
					found = append(found, exp.InputNames[j])
				}
			}
			for i, r := range rows {
				t.Logf("%s %s: %.5f (%.3f of the mean; %.2f of the oracle %.5f; %.2f of KRR %.5f; without relevance %.5f), size %.0f, %.2f cpu s; %s",
					name, r.Learner, r.Score, r.Score/mean, r.Score/oracle[i].Score, oracle[i].Score, r.Score/krrBest, krrBest, iso[i].Score, r.Size, r.CPUSeconds, r.Note)
				if r.Learner == "mean" {
					continue
				}
				if r.Score > meanTol*mean {
					t.Errorf("%s: %s MSE %.5f is %.3f of the running mean's (want <= %g)", name, r.Learner, r.Score, r.Score/mean, meanTol)
				}
				cells = append(cells, fmt.Sprintf("%.3f / %.2f / %.2f (%.3f)", r.Score/mean, r.Score/oracle[i].Score, r.Score/krrBest, iso[i].Score/mean))
			}
			cells = append(cells, fmt.Sprintf("%.1f", exp.FitCPU), strings.Join(found, " "))
			table = append(table, "| "+strings.Join(cells, " | ")+" |")
			t.Logf("true relevant inputs %v", rel)
		})
	}
	t.Log("\n" + strings.Join(table, "\n"))
}
