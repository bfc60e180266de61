package engine

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/space"
)

// condSpace is a conditional space: a categorical choosing a branch,
// each with its own parameters, one of them a categorical with a child.
func condSpace(t *testing.T) Space {
	t.Helper()
	s, err := space.NewSpace(
		space.Categorical("fn", "a", "b"),
		space.Float("x1", 0, 1).When("fn", "a"),
		space.Float("x2", 0, 1).When("fn", "a"),
		space.Int("d", 1, 4).When("fn", "a"),
		space.Float("y", -2, 2).When("fn", "b"),
		space.Categorical("shape", "sq", "abs").When("fn", "b"),
		space.LogFloat("s", 0.1, 1).When("shape", "sq"),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// condValue is the objective on condSpace (study's condition tests).
func condValue(p Params) float64 {
	sq := func(v float64) float64 { return v * v }
	if p.String("fn") == "a" {
		d := float64(p.Int("d") - 2)
		return 1 + sq(p.Float("x1")-0.3) + sq(p.Float("x2")-0.7) + 0.1*d*d
	}
	if p.String("shape") == "abs" {
		return 0.2 + math.Abs(p.Float("y")-1)
	}
	return p.Float("s")*sq(p.Float("y")-1)*4 + (p.Float("s") - 0.1)
}

// TestConditionCandidates: the growing candidates a conditional study
// keeps (its pool) and its global set are canonical and distinct, and the
// fixed arm set of a conditional space is too; the fixed set's policy runs.
func TestConditionCandidates(t *testing.T) {
	t.Parallel()
	for _, cand := range []string{CandidatesGrow, CandidatesFixed} {
		s, err := newTestStudy(Config{Space: condSpace(t), Budget: 30, Seed: 2, Candidates: cand})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Optimize(func(tr *testTrial) (float64, error) { return condValue(tr.Params), nil }, 0); err != nil {
			t.Fatalf("%s: %v", cand, err)
		}
		e := s.eng
		canonical := func(what string, u []float64) {
			c := slices.Clone(u)
			e.cond.CanonicalizeEncoded(c)
			if !reflect.DeepEqual(c, u) {
				t.Errorf("%s: %s %v is not canonical (%v)", cand, what, u, c)
			}
		}
		seen := map[string]bool{}
		for i := 0; i < e.n; i++ {
			canonical("arm", e.enc[i*e.e:(i+1)*e.e])
			if err := e.space.Check(e.Point(i)); err != nil {
				t.Errorf("%s: arm %d: %v", cand, i, err)
			}
			k := PointKey(e.Point(i))
			if seen[k] {
				t.Errorf("%s: arm %d twice", cand, i)
			}
			seen[k] = true
		}
		if cand == CandidatesFixed {
			if e.ref != nil {
				t.Errorf("fixed candidates grow")
			}
			continue
		}
		if len(e.ref.pool) == 0 {
			t.Fatalf("no pool")
		}
		pool := map[string]bool{}
		for _, u := range e.ref.pool {
			canonical("pool candidate", u)
			if k := PointKey(u); pool[k] {
				t.Errorf("pool candidate %v twice", u)
			} else {
				pool[k] = true
			}
		}
	}
}
