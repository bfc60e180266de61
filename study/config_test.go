package study

import (
	"context"
	"fmt"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestWideSpaceArms: a space past Sobol's 32 dimensions gets Latin-hypercube
// arms by default (any number of parameters at defaults), Sobol arms asked
// for are an error naming the fix, and a stored configuration keeps its
// kind.
func TestWideSpaceArms(t *testing.T) {
	t.Parallel()
	for _, d := range []int{32, 33, 100} {
		params := make([]Param, d)
		for i := range params {
			params[i] = Float(fmt.Sprintf("x%d", i), 0, 1)
		}
		sp, err := NewSpace(params...)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Space: sp, Budget: 10}
		if err := cfg.Normalize(); err != nil {
			t.Fatalf("d = %d at defaults: %v", d, err)
		}
		want := "sobol"
		if d > 32 {
			want = "lhs"
		}
		if cfg.Arms.Kind != want {
			t.Errorf("d = %d: arms %s, want %s", d, cfg.Arms.Kind, want)
		}
		explicit := Config{Space: sp, Arms: Arms{Kind: "sobol"}}
		if err := explicit.Normalize(); (err != nil) != (d > 32) {
			t.Errorf("d = %d, arms sobol: error %v", d, err)
		}
		if d > 32 {
			st := storage.NewMemory()
			s, err := Create(context.Background(), st, "wide", Config{Space: sp, Budget: 3, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Ask(context.Background()); err != nil {
				t.Fatalf("d = %d: ask: %v", d, err)
			}
		}
	}
}
