package bench

import (
	"fmt"
	"math"
	"sort"
)

// MannWhitney is the two-sided Mann-Whitney U (Wilcoxon rank-sum) test of
// samples a and b: U is the count of pairs (x in a, y in b) with x > y
// (ties count 1/2), and P the two-sided p-value of the hypothesis that both
// come from one distribution. Without ties and with len(a)*len(b) <= 10,000
// P is exact (the null distribution of U by the recurrence of Mann and
// Whitney 1947: N(n1, n2, u) = N(n1-1, n2, u-n2) + N(n1, n2-1, u));
// otherwise it is the normal approximation with the tie correction of the
// variance and a continuity correction. Written by hand: gonum has no rank
// test.
func MannWhitney(a, b []float64) (u, p float64, err error) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 0, fmt.Errorf("bench: Mann-Whitney needs two non-empty samples, have %d and %d", n1, n2)
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	for _, o := range all {
		if math.IsNaN(o.v) {
			return 0, 0, fmt.Errorf("bench: Mann-Whitney of a NaN sample value")
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Mid-ranks; tieSum is sum over tie groups of (t^3 - t).
	var r1, tieSum float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieSum += t*t*t - t
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	u = r1 - f1*(f1+1)/2
	mean := f1 * f2 / 2
	if !ties && n1*n2 <= 10000 {
		// Exact: counts of arrangements with each U, then the two tails.
		dist := uDistribution(n1, n2)
		var total, lo, hi float64
		for k, c := range dist {
			total += c
			if float64(k) <= u {
				lo += c
			}
			if float64(k) >= u {
				hi += c
			}
		}
		return u, math.Min(1, 2*math.Min(lo, hi)/total), nil
	}
	n := f1 + f2
	sd := math.Sqrt(f1 * f2 / 12 * ((n + 1) - tieSum/(n*(n-1))))
	if sd == 0 {
		return u, 1, nil
	}
	z := math.Max(math.Abs(u-mean)-0.5, 0) / sd
	return u, math.Min(1, math.Erfc(z/math.Sqrt2)), nil
}

// uDistribution returns the number of arrangements of n1 and n2 distinct
// values giving each U = 0..n1*n2.
func uDistribution(n1, n2 int) []float64 {
	// prev[j][u]: counts for (i-1, j); built row by row in i.
	tab := make([][][]float64, n1+1)
	for i := 0; i <= n1; i++ {
		tab[i] = make([][]float64, n2+1)
		for j := 0; j <= n2; j++ {
			c := make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				c[0] = 1
			default:
				// The largest value is from the first sample (it beats
				// all j of the second) or from the second.
				for k, v := range tab[i-1][j] {
					c[k+j] += v
				}
				for k, v := range tab[i][j-1] {
					c[k] += v
				}
			}
			tab[i][j] = c
		}
	}
	return tab[n1][n2]
}
