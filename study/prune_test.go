package study

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
)

// pruneConfig is a small random-search study with pruner spec p.
func pruneConfig(t *testing.T, p string, dir Direction) Config {
	t.Helper()
	sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := pruner.ParseFlag(p)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Space: sp, Policy: "random", Seed: 1, Direction: dir, Pruner: pc}
}

type optunaEvent struct {
	Op    string  `json:"op"`
	Trial int     `json:"trial"`
	Step  int     `json:"step"`
	Value float64 `json:"value"`
	Prune bool    `json:"prune"`
}

// TestPruningMatchesOptuna replays studies scripted by
// testdata/optuna_pruning.py (learning curves reported by several trials
// at once, a trial stopping when told) and compares every decision with
// Optuna 3.1's MedianPruner, SuccessiveHalvingPruner and HyperbandPruner.
func TestPruningMatchesOptuna(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "optuna_pruning.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Name      string        `json:"name"`
			Direction Direction     `json:"direction"`
			Pruner    string        `json:"pruner"`
			Events    []optunaEvent `json:"events"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 7 {
		t.Fatalf("%d cases in the reference, want 7", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := Create(ctx, storage.NewMemory(), c.Name, pruneConfig(t, c.Pruner, c.Direction))
			if err != nil {
				t.Fatal(err)
			}
			trials := map[int]*Trial{}
			reports, prunes := 0, 0
			for i, e := range c.Events {
				switch e.Op {
				case "ask":
					tr, err := s.Ask(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if tr.Number != e.Trial {
						t.Fatalf("event %d: asked trial %d, want %d", i, tr.Number, e.Trial)
					}
					trials[e.Trial] = tr
				case "report":
					if err := trials[e.Trial].Report(ctx, e.Step, e.Value); err != nil {
						t.Fatal(err)
					}
					reports++
					if got := trials[e.Trial].ShouldPrune(); got != e.Prune {
						t.Errorf("event %d: trial %d step %d value %v: prune %v, Optuna %v", i, e.Trial, e.Step, e.Value, got, e.Prune)
					}
					if e.Prune {
						prunes++
					}
				case "prune":
					if err := s.Prune(ctx, e.Trial); err != nil {
						t.Fatal(err)
					}
				case "tell":
					if err := s.Tell(ctx, e.Trial, e.Value); err != nil {
						t.Fatal(err)
					}
				}
			}
			if prunes == 0 || prunes == reports {
				t.Fatalf("%d of %d reports pruned: the case tells nothing", prunes, reports)
			}
		})
	}
}
