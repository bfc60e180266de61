package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// rowsOf returns rows lo..hi-1 of x as a new matrix.
func rowsOf(x *mat.Dense, lo, hi int) *mat.Dense {
	return mat.DenseCopyOf(x.Slice(lo, hi, 0, x.RawMatrix().Cols))
}

// TestAddCandidatesLaterEqualsFromStart: candidates added after some
// observations (and, for the DTC, dictionary changes) have the posterior
// they would have had from the start, to 1e-9 relative to the prior
// scale; so do all later updates. Retiring candidates keeps the others'
// posteriors (the reference: a posterior built from the start with only
// the survivors).
func TestAddCandidatesLaterEqualsFromStart(t *testing.T) {
	t.Parallel()
	const d, a0, a1, lambda = 2, 30, 20, 0.05
	k := kernel.RBF{LengthScale: 0.3}
	rng := rand.New(rand.NewPCG(5, 6))
	all := randPoints(rng, a0+a1, d)
	f := func(p []float64) float64 { return math.Sin(4*p[0]) + p[1] }

	full, _ := NewDTC(k, d, lambda)
	late, _ := NewDTC(k, d, lambda)
	exFull, _ := NewExact(k, d, lambda)
	exLate, _ := NewExact(k, d, lambda)
	_ = full.SetCandidates(all)
	_ = late.SetCandidates(rowsOf(all, 0, a0))
	_ = exFull.SetCandidates(all)
	_ = exLate.SetCandidates(rowsOf(all, 0, a0))
	srcA := rand.New(rand.NewPCG(1, 1))
	srcB := rand.New(rand.NewPCG(1, 1))
	observe := func(i int, y float64, extra []float64) {
		t.Helper()
		if extra != nil {
			if _, err := full.Observe(extra, y); err != nil {
				t.Fatal(err)
			}
			if _, err := late.Observe(extra, y); err != nil {
				t.Fatal(err)
			}
			_ = exFull.Observe(extra, y)
			_ = exLate.Observe(extra, y)
		} else {
			_ = full.ObserveCandidate(i, y)
			_ = late.ObserveCandidate(i, y)
			_ = exFull.ObserveCandidate(i, y)
			_ = exLate.ObserveCandidate(i, y)
		}
		if _, _, err := full.Resample(srcA, 2); err != nil {
			t.Fatal(err)
		}
		if _, _, err := late.Resample(srcB, 2); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(when string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			s := 1 / lambda
			if !close(full.Means()[i], late.Means()[i], 1, 1e-9) || !close(full.Variances()[i], late.Variances()[i], s, 1e-9) {
				t.Fatalf("%s: DTC candidate %d: late (%v, %v), from start (%v, %v)", when, i, late.Means()[i], late.Variances()[i], full.Means()[i], full.Variances()[i])
			}
			if !close(exFull.Means()[i], exLate.Means()[i], 1, 1e-9) || !close(exFull.Variances()[i], exLate.Variances()[i], 1, 1e-9) {
				t.Fatalf("%s: Exact candidate %d: late (%v, %v), from start (%v, %v)", when, i, exLate.Means()[i], exLate.Variances()[i], exFull.Means()[i], exFull.Variances()[i])
			}
		}
	}
	for s := 0; s < 25; s++ {
		i := rng.IntN(a0)
		var extra []float64
		if s%6 == 5 {
			extra = []float64{rng.Float64(), rng.Float64()}
			observe(0, f(extra)+0.1*rng.NormFloat64(), extra)
		} else {
			observe(i, f(all.RawRowView(i))+0.1*rng.NormFloat64(), nil)
		}
	}
	compare("before adding", a0)
	first, err := late.AddCandidates(rowsOf(all, a0, a0+a1))
	if err != nil || first != a0 {
		t.Fatalf("AddCandidates: first %d, error %v", first, err)
	}
	if first, err := exLate.AddCandidates(rowsOf(all, a0, a0+a1)); err != nil || first != a0 {
		t.Fatalf("Exact.AddCandidates: first %d, error %v", first, err)
	}
	if late.NumCandidates() != a0+a1 || exLate.NumCandidates() != a0+a1 {
		t.Fatalf("candidates %d, %d, want %d", late.NumCandidates(), exLate.NumCandidates(), a0+a1)
	}
	compare("just after adding", a0+a1)
	for s := 0; s < 25; s++ {
		i := rng.IntN(a0 + a1)
		var extra []float64
		if s%6 == 5 {
			extra = []float64{rng.Float64(), rng.Float64()}
			observe(0, f(extra)+0.1*rng.NormFloat64(), extra)
		} else {
			observe(i, f(all.RawRowView(i))+0.1*rng.NormFloat64(), nil)
		}
	}
	compare("25 observations later", a0+a1)
	if late.DictionaryChanges() < 10 {
		t.Fatalf("only %d dictionary changes: too little exercised", late.DictionaryChanges())
	}

	// Retire every third candidate, observed ones included; the survivors
	// keep their posterior and later updates match a posterior that had
	// only the survivors' indices remapped.
	var retire []int
	for i := 0; i < a0+a1; i += 3 {
		retire = append(retire, i)
	}
	before := append([]float64(nil), late.Variances()...)
	newIdx, err := late.RetireCandidates(retire)
	if err != nil {
		t.Fatal(err)
	}
	exIdx, err := exLate.RetireCandidates(retire)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range newIdx {
		if (j < 0) != (i%3 == 0) || exIdx[i] != j {
			t.Fatalf("candidate %d -> %d (exact %d)", i, j, exIdx[i])
		}
		if j >= 0 && late.Variances()[j] != before[i] {
			t.Fatalf("candidate %d (now %d): variance %v, was %v", i, j, late.Variances()[j], before[i])
		}
	}
	for s := 0; s < 15; s++ {
		i := rng.IntN(a0 + a1)
		y := f(all.RawRowView(i)) + 0.1*rng.NormFloat64()
		_ = full.ObserveCandidate(i, y)
		_ = exFull.ObserveCandidate(i, y)
		if j := newIdx[i]; j >= 0 {
			_ = late.ObserveCandidate(j, y)
			_ = exLate.ObserveCandidate(j, y)
		} else {
			if _, err := late.Observe(all.RawRowView(i), y); err != nil {
				t.Fatal(err)
			}
			_ = exLate.Observe(all.RawRowView(i), y)
		}
		if _, _, err := full.Resample(srcA, 2); err != nil {
			t.Fatal(err)
		}
		if _, _, err := late.Resample(srcB, 2); err != nil {
			t.Fatal(err)
		}
	}
	for i, j := range newIdx {
		if j < 0 {
			continue
		}
		if !close(full.Means()[i], late.Means()[j], 1, 1e-9) || !close(full.Variances()[i], late.Variances()[j], 1/lambda, 1e-9) {
			t.Fatalf("after retiring: DTC candidate %d (now %d): (%v, %v), want (%v, %v)", i, j, late.Means()[j], late.Variances()[j], full.Means()[i], full.Variances()[i])
		}
		if !close(exFull.Means()[i], exLate.Means()[j], 1, 1e-9) || !close(exFull.Variances()[i], exLate.Variances()[j], 1, 1e-9) {
			t.Fatalf("after retiring: Exact candidate %d (now %d)", i, j)
		}
	}
	if full.DictionarySize() != late.DictionarySize() {
		t.Fatalf("dictionaries differ: %d vs %d", full.DictionarySize(), late.DictionarySize())
	}
}
