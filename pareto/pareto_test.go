package pareto

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteFront is the definition: the points no other point dominates.
func bruteFront(points [][]float64) []int {
	var out []int
	for i, p := range points {
		ok := true
		for j, q := range points {
			if i != j && Dominates(q, p) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// bruteHypervolume sums the cells of the grid every point's coordinates
// (and ref's) make: a cell is dominated when some point is at or below its
// lower corner in every objective. Exact, O(n^d * n d).
func bruteHypervolume(points [][]float64, ref []float64) float64 {
	d := len(ref)
	coords := make([][]float64, d)
	for k := 0; k < d; k++ {
		c := []float64{ref[k]}
		for _, p := range points {
			if p[k] < ref[k] {
				c = append(c, p[k])
			}
		}
		slices.Sort(c)
		coords[k] = slices.Compact(c)
	}
	var vol float64
	cell := make([]int, d)
	lo := make([]float64, d)
	var walk func(k int)
	walk = func(k int) {
		if k == d {
			for _, p := range points {
				dom := true
				for j := 0; j < d; j++ {
					if p[j] > lo[j] {
						dom = false
						break
					}
				}
				if dom {
					v := 1.0
					for j := 0; j < d; j++ {
						v *= coords[j][cell[j]+1] - coords[j][cell[j]]
					}
					vol += v
					return
				}
			}
			return
		}
		for i := 0; i+1 < len(coords[k]); i++ {
			cell[k], lo[k] = i, coords[k][i]
			walk(k + 1)
		}
	}
	walk(0)
	return vol
}

func randomPoints(rng *rand.Rand, n, d int, ties bool) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
		for k := range pts[i] {
			if ties {
				pts[i][k] = float64(rng.IntN(5)) / 4 // many equal coordinates and points
			} else {
				pts[i][k] = rng.Float64()
			}
		}
		if !ties && d > 1 && i%2 == 0 {
			// Points near a simplex face, so that fronts are large.
			var s float64
			for _, v := range pts[i] {
				s += v
			}
			for k := range pts[i] {
				pts[i][k] /= s
			}
		}
	}
	return pts
}

func TestFrontAndHypervolumeAgainstBruteForce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		d, n    int
		ties    bool
		repeats int
	}{
		{"2-d", 2, 30, false, 200},
		{"2-d ties", 2, 30, true, 200},
		{"3-d", 3, 25, false, 100},
		{"3-d ties", 3, 25, true, 100},
		{"4-d", 4, 10, false, 30},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			for rep := 0; rep < c.repeats; rep++ {
				n := 1 + rng.IntN(c.n)
				pts := randomPoints(rng, n, c.d, c.ties)
				if got, want := Front(pts), bruteFront(pts); !slices.Equal(got, want) {
					t.Fatalf("repeat %d: Front = %v, brute force %v (points %v)", rep, got, want, pts)
				}
				ref := make([]float64, c.d)
				for k := range ref {
					ref[k] = 0.8 + 0.4*rng.Float64() // some points beyond it
				}
				got, err := Hypervolume(pts, ref)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteHypervolume(pts, ref)
				if math.Abs(got-want) > 1e-12*math.Max(1, want) {
					t.Fatalf("repeat %d: Hypervolume = %v, brute force %v (points %v, ref %v)", rep, got, want, pts, ref)
				}
			}
		})
	}
}

func TestHypervolumeKnownValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		pts  [][]float64
		ref  []float64
		want float64
	}{
		{"empty", nil, []float64{1, 1}, 0},
		{"one point", [][]float64{{0, 0}}, []float64{1, 2}, 2},
		{"staircase", [][]float64{{0, 2}, {1, 1}, {2, 0}}, []float64{3, 3}, 6},
		{"beyond ref", [][]float64{{4, 0}}, []float64{3, 3}, 0},
		{"1-d", [][]float64{{0.25}, {0.5}}, []float64{1}, 0.75},
		{"unit cube corner", [][]float64{{0, 0, 0}}, []float64{1, 1, 1}, 1},
		{"3-d two boxes", [][]float64{{0, 0, 0.5}, {0.5, 0.5, 0}}, []float64{1, 1, 1}, 0.5 + 0.25*0.5},
	}
	for _, c := range cases {
		got, err := Hypervolume(c.pts, c.ref)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: Hypervolume = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHypervolumeErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		pts  [][]float64
		ref  []float64
	}{
		{"empty ref", [][]float64{{1}}, nil},
		{"length", [][]float64{{1, 2, 3}}, []float64{1, 1}},
		{"NaN", [][]float64{{math.NaN(), 0}}, []float64{1, 1}},
		{"Inf ref", [][]float64{{0, 0}}, []float64{math.Inf(1), 1}},
	}
	for _, c := range cases {
		if _, err := Hypervolume(c.pts, c.ref); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestImprovementAgainstBruteForce checks Improvement against the brute
// force hypervolume of the set with and without the new point, on random
// sets of 2 to 4 objectives (with ties: points on the front, equal to a
// point, beyond the reference point).
func TestImprovementAgainstBruteForce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		d, n    int
		ties    bool
		repeats int
	}{
		{"2-d", 2, 30, false, 300},
		{"2-d ties", 2, 30, true, 300},
		{"3-d", 3, 25, false, 150},
		{"3-d ties", 3, 25, true, 150},
		{"4-d", 4, 10, false, 40},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			positive := 0
			for rep := 0; rep < c.repeats; rep++ {
				pts := randomPoints(rng, rng.IntN(c.n+1), c.d, c.ties)
				y := randomPoints(rng, 1, c.d, c.ties)[0]
				if rep%5 == 0 && len(pts) > 0 {
					y = slices.Clone(pts[rng.IntN(len(pts))]) // a point of the set
				}
				ref := make([]float64, c.d)
				for k := range ref {
					ref[k] = 0.8 + 0.4*rng.Float64()
				}
				got, err := Improvement(pts, y, ref)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteHypervolume(append(slices.Clone(pts), y), ref) - bruteHypervolume(pts, ref)
				if math.Abs(got-want) > 1e-12*math.Max(1, want) {
					t.Fatalf("repeat %d: Improvement = %v, brute force %v (points %v, y %v, ref %v)", rep, got, want, pts, y, ref)
				}
				if got > 0 {
					positive++
				}
			}
			if positive < c.repeats/10 {
				t.Fatalf("only %d of %d improvements positive: the test does not exercise the sum", positive, c.repeats)
			}
		})
	}
}

func TestImprovementErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		pts    [][]float64
		y, ref []float64
	}{
		{"empty ref", nil, nil, nil},
		{"y length", nil, []float64{1}, []float64{2, 2}},
		{"point length", [][]float64{{1}}, []float64{1, 1}, []float64{2, 2}},
		{"NaN y", nil, []float64{math.NaN(), 1}, []float64{2, 2}},
		{"Inf point", [][]float64{{math.Inf(-1), 1}}, []float64{1, 1}, []float64{2, 2}},
		{"NaN ref", nil, []float64{1, 1}, []float64{2, math.NaN()}},
	} {
		if _, err := Improvement(c.pts, c.y, c.ref); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// BenchmarkImprovement times one improvement against a front of 100
// points (2 objectives) or 60 (3 objectives) on the unit sphere, the
// fronts of a few hundred trials.
func BenchmarkImprovement(b *testing.B) {
	for _, c := range []struct{ d, n int }{{2, 100}, {3, 60}} {
		b.Run(fmt.Sprintf("%d-d", c.d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			pts := make([][]float64, c.n)
			for i := range pts {
				pts[i] = make([]float64, c.d)
				var s float64
				for j := range pts[i] {
					pts[i][j] = rng.Float64()
					s += pts[i][j] * pts[i][j]
				}
				for j := range pts[i] {
					pts[i][j] /= math.Sqrt(s)
				}
			}
			ref := make([]float64, c.d)
			ys := make([][]float64, 64)
			for j := range ref {
				ref[j] = 1.1
			}
			for i := range ys {
				ys[i] = make([]float64, c.d)
				for j := range ys[i] {
					ys[i][j] = 0.75 * rng.Float64()
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Improvement(pts, ys[i%len(ys)], ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
