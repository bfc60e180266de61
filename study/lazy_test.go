package study

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestLazyStudy: a study on a fixed arm set with Lazy asks exactly the
// points of the same study without it (the full scan is the reference),
// through failures (arms marked pending), fits and rebuilds, and a study
// loaded from its records replays it without diverging.
func TestLazyStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _ := objectives.Lookup("branin")
	trials := 45
	if testing.Short() {
		trials = 30
	}
	for _, v := range []struct {
		name string
		mod  func(*Config)
	}{
		{"gp-ucb version 1", func(c *Config) { c.Policy, c.Version = "gp-ucb", 1 }},
		{"bkb version 1", func(c *Config) { c.Policy, c.Version = "bkb", 1 }},
		{"bkb version 4 fixed ARD", func(c *Config) { c.Policy, c.Version, c.Candidates, c.FitEvery = "bkb", 4, CandidatesFixed, 0 }},
		{"gp-ucb version 8 fixed", func(c *Config) { c.Policy, c.Version, c.Candidates, c.FitEvery = "gp-ucb", 8, CandidatesFixed, 0 }},
		{"bbkb version 1", func(c *Config) { c.Policy, c.Version = "bbkb", 1 }},
		{"bbkb version 8 fixed", func(c *Config) { c.Policy, c.Version, c.Candidates, c.FitEvery = "bbkb", 8, CandidatesFixed, 0 }},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			run := func(lazy bool) (*Study, storage.Storage, []int) {
				cfg := replayConfig("bkb")
				cfg.Budget = trials + 10
				v.mod(&cfg)
				cfg.Lazy = lazy
				st := storage.NewMemory()
				s, err := createStored(ctx, st, "s", cfg)
				if err != nil {
					t.Fatal(err)
				}
				var arms []int
				for trial := 0; trial < trials; trial++ {
					tr, err := s.Ask(ctx)
					if err != nil {
						t.Fatal(err)
					}
					arms = append(arms, tr.Arm)
					if trial%9 == 4 {
						if err := s.Fail(ctx, tr.Number, "boom"); err != nil {
							t.Fatal(err)
						}
						continue
					}
					if err := s.Tell(ctx, tr.Number, f.Value(tr.X)); err != nil {
						t.Fatal(err)
					}
				}
				tr, err := s.Ask(ctx) // left pending
				if err != nil {
					t.Fatal(err)
				}
				return s, st, append(arms, tr.Arm)
			}
			_, _, want := run(false)
			live, st, got := run(true)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("trial %d: lazy asks arm %d, the full scan %d", i, got[i], want[i])
				}
			}
			replayed := loadReplayed(t, st, "s")
			if d := replayed.Info().Diverged; d != 0 {
				t.Fatalf("replay diverged on %d asks", d)
			}
			for k := 0; k < 3; k++ {
				a, err := live.Ask(ctx)
				if errors.Is(err, bandit.ErrBatchFull) {
					break // bbkb: the batch closed on the pending trials
				}
				if err != nil {
					t.Fatal(err)
				}
				mirror := loadReplayed(t, st, "s")
				if got := mirror.Trials()[a.Number]; got.Arm != a.Arm || mirror.Info().Diverged != 0 {
					t.Errorf("ask %d: a replay diverges (arm %d, live %d)", k, got.Arm, a.Arm)
				}
			}
			if s := live.Info().Stats; s.RowsRead == 0 || s.WorkingSet == 0 {
				t.Errorf("lazy stats not reported: %+v", s)
			}
		})
	}
}

// createStored creates the study as a journal written before lazy steps
// were withdrawn holds it (Create refuses Lazy), and loads it.
func createStored(ctx context.Context, st storage.Storage, name string, cfg Config) (*Study, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := st.CreateStudy(ctx, name, raw); err != nil {
		return nil, err
	}
	return Load(ctx, st, name)
}

// TestLazyWithdrawn: a new study cannot ask for lazy steps, through the
// library (and so through every door), with the reason.
func TestLazyWithdrawn(t *testing.T) {
	t.Parallel()
	for _, mod := range []func(*Config){func(c *Config) { c.Lazy = true }, func(c *Config) { c.Lazy, c.Eliminate = true, true }} {
		cfg := replayConfig("bkb")
		cfg.Candidates, cfg.FitEvery = CandidatesFixed, 0
		mod(&cfg)
		if _, err := Create(context.Background(), storage.NewMemory(), "s", cfg); !errors.Is(err, ErrLazyWithdrawn) {
			t.Errorf("lazy %v eliminate %v: %v", cfg.Lazy, cfg.Eliminate, err)
		}
	}
}

// TestLazyStudyRejects: Lazy and Eliminate where they cannot apply are
// errors naming the problem.
func TestLazyStudyRejects(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name, want string
		mod        func(*Config)
	}{
		{"thompson", "UCB policy", func(c *Config) { c.Policy, c.Version, c.Lazy = "thompson", 1, true }},
		{"random", "UCB policy", func(c *Config) { c.Policy, c.Version, c.Lazy = "random", 1, true }},
		{"grow", "fixed arm set", func(c *Config) { c.Policy, c.Lazy, c.FitEvery = "bkb", true, 0 }},
		{"eliminate alone", "needs lazy", func(c *Config) { c.Policy, c.Version, c.Eliminate = "bkb", 1, true }},
	} {
		cfg := replayConfig("bkb")
		v.mod(&cfg)
		err := cfg.Normalize()
		if err == nil || !strings.Contains(err.Error(), v.want) {
			t.Errorf("%s: error %v, want one saying %q", v.name, err, v.want)
		}
	}
	// Absent from a stored configuration: off.
	var c Config
	if err := c.UnmarshalJSON([]byte(`{"version":4,"policy":"bkb"}`)); err != nil || c.Lazy || c.Eliminate {
		t.Errorf("stored configuration without lazy: lazy %v eliminate %v (%v)", c.Lazy, c.Eliminate, err)
	}
}
