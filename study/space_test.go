package study

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
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

// TestTypedStudy: a study on a mixed space only ever suggests valid
// points (integers integral, categoricals among their choices, steps on
// their grid), also after Enqueue; a discrete space's candidates are its
// points, without duplicates.
func TestTypedStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, policy := range []string{"bkb", "gp-ucb", "random"} {
		s, err := Create(ctx, storage.NewMemory(), "typed", Config{Space: mixedSpace(t), Budget: 60, Seed: 2, Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(ctx, map[string]any{"x": 1.0, "lr": 0.01, "drop": 0.2, "layers": 2, "units": 64, "act": "tanh", "batch": 64}); err != nil {
			t.Fatal(err)
		}
		first := true
		err = s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) {
			p := tr.Params
			if first && (p.Int("layers") != 2 || p.String("act") != "tanh") {
				t.Errorf("%s: the enqueued point was not asked first: %v", policy, p)
			}
			first = false
			if _, ok := p["layers"].(int); !ok {
				t.Errorf("%s: layers is %T", policy, p["layers"])
			}
			if a := p.String("act"); a != "relu" && a != "tanh" && a != "gelu" {
				t.Errorf("%s: act %q", policy, a)
			}
			if err := s.Config().Space.Check(tr.X); err != nil {
				t.Errorf("%s: %v", policy, err)
			}
			v := (p.Float("x")-1)*(p.Float("x")-1) + math.Abs(math.Log10(p.Float("lr"))+2) + float64(p.Int("layers"))
			if p.String("act") == "gelu" {
				v -= 2
			}
			return v, nil
		}, 0)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
	}
	small, err := NewSpace(Int("a", 1, 3), Categorical("b", "u", "v"), Discrete("c", 0, 1, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(ctx, storage.NewMemory(), "small", Config{Space: small, Budget: 5})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Info().Arms; n != 18 {
		t.Errorf("%d candidates of a space of 18 points", n)
	}
}

// TestImportCSV: earlier evaluations become complete trials that the
// policy is told, and a bad line names itself.
func TestImportCSV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "imp", braninConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.ImportCSV(ctx, strings.NewReader("x1,x2,value\n3.14159,2.275,0.397887\n0,0,55.6\n"), "old.csv")
	if err != nil || n != 2 {
		t.Fatalf("import: %d, %v", n, err)
	}
	best, ok := s.Best()
	if !ok || best.Value != 0.397887 || best.State != Complete {
		t.Errorf("best after import %+v", best)
	}
	if _, err := s.ImportCSV(ctx, strings.NewReader("1,2,3\n100,2,3\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv:2") {
		t.Errorf("out-of-box line: %v", err)
	}
	if tr, err := s.Ask(ctx); err != nil || tr.Number != 2 {
		t.Errorf("ask after import: %+v, %v", tr, err)
	}
}

// TestTellChecks: values out of range, unknown and finished trials.
func TestTellChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "tell", braninConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), 1e300} {
		if err := s.Tell(ctx, tr.Number, v); err == nil {
			t.Errorf("Tell(%v): no error", v)
		}
	}
	if err := s.Tell(ctx, 7, 1); err == nil || !strings.Contains(err.Error(), "has no trial 7") {
		t.Errorf("unknown trial: %v", err)
	}
	if err := s.Tell(ctx, tr.Number, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Tell(ctx, tr.Number, 1); err != nil {
		t.Errorf("the same value again: %v", err)
	}
	if err := s.Tell(ctx, tr.Number, 2); err == nil {
		t.Error("another value for a complete trial: no error")
	}
}
