package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestMannWhitney checks U and the two-sided p-value against textbook
// values and a brute-force enumeration of the null distribution.
func TestMannWhitney(t *testing.T) {
	t.Parallel()
	// R's ?wilcox.test example (Hollander & Wolfe 1973, p. 69):
	// wilcox.test(x, y, alternative = "greater") gives W = 35,
	// p = 0.1272, so the two-sided exact p is 0.2544.
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	u, p, err := MannWhitney(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if u != 35 || math.Abs(p-0.2544) > 5e-4 {
		t.Errorf("R example: U = %g, p = %.4f, want 35, 0.2544", u, p)
	}
	// Symmetric in the samples' order: U' = n1 n2 - U, the same p.
	u2, p2, _ := MannWhitney(y, x)
	if u2 != 15 || math.Abs(p2-p) > 1e-12 {
		t.Errorf("swapped: U = %g, p = %.4f, want 15, %.4f", u2, p2, p)
	}
	// Critical values of the two-sided 5% test for n1 = n2 = 10 (tables
	// of Mann-Whitney U): U <= 23 rejects, U = 24 does not.
	for _, c := range []struct {
		u      int
		reject bool
	}{{23, true}, {24, false}} {
		a, b := samplesWithU(10, 10, c.u)
		got, p, _ := MannWhitney(a, b)
		if int(got) != c.u || (p <= 0.05) != c.reject {
			t.Errorf("n=10,10 U=%d: got U=%g p=%.4f, reject want %v", c.u, got, p, c.reject)
		}
		// Brute force: the share of all C(20,10) splits with U at most
		// as extreme.
		if bf := bruteP(10, 10, c.u); math.Abs(bf-p) > 1e-12 {
			t.Errorf("n=10,10 U=%d: p %.6f, brute force %.6f", c.u, p, bf)
		}
	}
	// Ties: the normal approximation; all values equal gives p = 1.
	if _, p, _ := MannWhitney([]float64{1, 1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("all tied: p = %g, want 1", p)
	}
	// Complete separation with ties inside one sample (normal
	// approximation): small p.
	if _, p, _ := MannWhitney([]float64{1, 1, 2, 3, 4, 5, 6, 7}, []float64{10, 11, 12, 12, 13, 14, 15, 16}); p > 0.002 {
		t.Errorf("separated samples: p = %g, want < 0.002", p)
	}
	if _, _, err := MannWhitney(nil, y); err == nil {
		t.Error("empty sample: no error")
	}
	if _, _, err := MannWhitney([]float64{math.NaN()}, y); err == nil {
		t.Error("NaN value: no error")
	}
}

// samplesWithU returns samples of sizes n1, n2 whose U is u: the first
// sample's values placed among the second's so that their counts of
// smaller second-sample values sum to u.
func samplesWithU(n1, n2, u int) (a, b []float64) {
	for j := 0; j < n2; j++ {
		b = append(b, float64(2*j+1))
	}
	for i := 0; i < n1; i++ {
		k := min(u, n2) // second-sample values below this one
		u -= k
		a = append(a, float64(2*k)+0.5*float64(i+1)/float64(n1+1))
	}
	return a, b
}

// bruteP enumerates every split of n1+n2 ranks and returns the two-sided
// p-value of U = u.
func bruteP(n1, n2, u int) float64 {
	n := n1 + n2
	mean := float64(n1*n2) / 2
	dev := math.Abs(float64(u) - mean)
	var hit, total float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		// U = sum over first-sample ranks r of (second-sample below r).
		uu, below := 0, 0
		for r := 0; r < n; r++ {
			if mask&(1<<r) != 0 {
				uu += below
			} else {
				below++
			}
		}
		total++
		if math.Abs(float64(uu)-mean) >= dev-1e-9 {
			hit++
		}
	}
	return hit / total
}

func popcount(x int) int {
	c := 0
	for ; x > 0; x &= x - 1 {
		c++
	}
	return c
}

// TestRegretMarkdownPValues checks the table's test against the reference
// optimizer: ten seeds of an optimizer all better than ten of the
// reference give the exact two-sided p = 2/C(20,10); the reference row and
// a problem the reference did not run have no p.
func TestRegretMarkdownPValues(t *testing.T) {
	t.Parallel()
	var runs []RegretRun
	for s := 0; s < 10; s++ {
		for _, v := range []struct {
			name   string
			simple float64
		}{{RegretReference, 10 + float64(s)}, {"bkb", float64(s)}} {
			runs = append(runs, RegretRun{Problem: "p", Variant: v.name, Seed: uint64(s), Checkpoints: []int{5},
				Simple: []float64{v.simple}, Cum: []float64{v.simple * 3}})
		}
		runs = append(runs, RegretRun{Problem: "q", Variant: "bkb", Seed: uint64(s), Checkpoints: []int{5},
			Simple: []float64{1}, Cum: []float64{1}})
	}
	var b strings.Builder
	if err := WriteRegretMarkdown(&b, runs); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%.2g, %.2g |", 2/184756.0, 2/184756.0)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("table has %d lines, want 5:\n%s", len(lines), b.String())
	}
	for _, tc := range []struct {
		prefix, suffix string
	}{{"| p | " + RegretReference + " |", "|  |"}, {"| p | bkb |", want}, {"| q | bkb |", "|  |"}} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, tc.prefix) {
				found = true
				if !strings.HasSuffix(l, tc.suffix) {
					t.Errorf("row %q ends %q, want %q", l, l[max(0, len(l)-20):], tc.suffix)
				}
			}
		}
		if !found {
			t.Errorf("no row %q in\n%s", tc.prefix, b.String())
		}
	}
}

// TestRegretMarkdownBudgets: runs of one problem with different budgets
// (hartmann6:500 and hartmann6:1000) get rows of their own, named with
// the budget, instead of being merged into one row.
func TestRegretMarkdownBudgets(t *testing.T) {
	t.Parallel()
	var runs []RegretRun
	for s := 0; s < 3; s++ {
		runs = append(runs,
			RegretRun{Problem: "h", Variant: "bkb", Seed: uint64(s), Checkpoints: []int{500}, Simple: []float64{1}, Cum: []float64{10}},
			RegretRun{Problem: "h", Variant: "bkb", Seed: uint64(s), Checkpoints: []int{1000}, Simple: []float64{2}, Cum: []float64{20}},
			RegretRun{Problem: "g", Variant: "bkb", Seed: uint64(s), Checkpoints: []int{50}, Simple: []float64{3}, Cum: []float64{30}})
	}
	var b strings.Builder
	if err := WriteRegretMarkdown(&b, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| h (budget 500) | bkb | 500 | 3 | 1 [1, 1] | 10 |", "| h (budget 1000) | bkb | 1000 | 3 | 2 [2, 2] | 20 |", "| g | bkb | 50 | 3 | 3 [3, 3] | 30 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no row %q in\n%s", want, b.String())
		}
	}
}
