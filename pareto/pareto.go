// Package pareto computes Pareto fronts and the hypervolume indicator of
// point sets in objective space. Every objective is minimized: negate
// the ones to maximize before calling.
//
// The hypervolume of a set P against a reference point r is the Lebesgue
// measure of the region dominated by P and bounded by r,
// {y : p <= y <= r for some p in P} (Zitzler and Thiele 1998). In two
// dimensions it is computed by one sweep over the front sorted by the
// first objective, O(n log n); in d > 2 dimensions by slicing along the
// last objective and summing the (d-1)-dimensional volumes of the slices
// (the HSO algorithm of While, Hingston, Barone and Huband 2006),
// O(n^(d-1) log n): exact, and fast enough for the fronts of a study
// (hundreds of points, 2 to 4 objectives).
package pareto

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Dominates reports whether a dominates b: a is no worse in every
// objective and better in at least one (minimization).
func Dominates(a, b []float64) bool {
	better := false
	for i := range a {
		switch {
		case a[i] > b[i]:
			return false
		case a[i] < b[i]:
			better = true
		}
	}
	return better
}

// Front returns the indices, in increasing order, of the points no other
// point dominates. Equal points are all kept. The points must have the
// same length; Front does not check it.
func Front(points [][]float64) []int {
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
	}
	// Lexicographic order: a point can only be dominated by one before it
	// (or equal to it), so each is checked against the front kept so far,
	// which dominates every point dropped before it.
	slices.SortStableFunc(idx, func(a, b int) int { return slices.Compare(points[a], points[b]) })
	var front []int
	for _, i := range idx {
		dominated := false
		for _, j := range front {
			if Dominates(points[j], points[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	slices.Sort(front)
	return front
}

// Hypervolume returns the hypervolume of points against ref: the volume
// of the region dominated by the points and bounded by ref. Points not
// strictly better than ref in every objective add nothing. It returns an
// error when a point's length differs from ref's, ref is empty, or a
// value is NaN or infinite.
func Hypervolume(points [][]float64, ref []float64) (float64, error) {
	d := len(ref)
	if d == 0 {
		return 0, errors.New("pareto: empty reference point")
	}
	for i, v := range ref {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("pareto: reference point coordinate %d is %v", i, v)
		}
	}
	var in [][]float64
	for i, p := range points {
		if len(p) != d {
			return 0, fmt.Errorf("pareto: point %d has %d objectives, the reference point %d", i, len(p), d)
		}
		ok := true
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("pareto: point %d: objective %d is %v", i, j, v)
			}
			if v >= ref[j] {
				ok = false
			}
		}
		if ok {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		return 0, nil
	}
	front := Front(in)
	pts := make([][]float64, len(front))
	for i, j := range front {
		pts[i] = in[j]
	}
	return hv(pts, ref), nil
}

// hv is the hypervolume of points (each strictly below ref) against ref.
func hv(points [][]float64, ref []float64) float64 {
	d := len(ref)
	switch d {
	case 1:
		lo := ref[0]
		for _, p := range points {
			lo = math.Min(lo, p[0])
		}
		return ref[0] - lo
	case 2:
		return hv2(points, ref)
	}
	// Slices along the last objective: between consecutive values of it,
	// the dominated region's cross-section is the (d-1)-dimensional
	// hypervolume of the points at or below the slice.
	sorted := slices.Clone(points)
	slices.SortFunc(sorted, func(a, b []float64) int { return cmp.Compare(a[d-1], b[d-1]) })
	var vol float64
	proj := make([][]float64, 0, len(sorted))
	for i, p := range sorted {
		proj = append(proj, p[:d-1])
		next := ref[d-1]
		if i+1 < len(sorted) {
			next = sorted[i+1][d-1]
		}
		if h := next - p[d-1]; h > 0 {
			vol += h * hv(front(proj), ref[:d-1])
		}
	}
	return vol
}

// front returns the non-dominated points of pts.
func front(pts [][]float64) [][]float64 {
	idx := Front(pts)
	out := make([][]float64, len(idx))
	for i, j := range idx {
		out[i] = pts[j]
	}
	return out
}

// hv2 is the two-objective sweep: sorted by the first objective, each
// point of the front adds the rectangle between it, the next point's
// first objective (or ref) and ref's second objective.
func hv2(points [][]float64, ref []float64) float64 {
	sorted := slices.Clone(points)
	slices.SortFunc(sorted, func(a, b []float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var vol float64
	top := ref[1] // the lowest second objective so far
	for _, p := range sorted {
		if p[1] >= top {
			continue
		}
		top2 := p[1]
		// The rectangle from p's first objective to ref's, between its
		// second objective and the previous lowest.
		vol += (ref[0] - p[0]) * (top - top2)
		top = top2
	}
	return vol
}

// Improvement returns the hypervolume improvement of y over points
// against ref: Hypervolume(points ∪ {y}, ref) − Hypervolume(points, ref),
// the criterion of SMS-EGO (Ponweiser, Wagner, Biermann and Naujoks
// 2008) and of expected-hypervolume methods. It is 0 when a point weakly
// dominates y or y is not strictly better than ref in every objective.
//
// It is computed as the volume of the box between y and ref minus the
// hypervolume of the points limited to that box (each point p replaced
// by max(p, y) componentwise): the part of y's box the points already
// dominate. The limited points' front is usually a few points, so this
// costs far less than two hypervolumes of the whole set. It returns an
// error when a length differs from ref's, ref is empty, or a value is NaN
// or infinite.
func Improvement(points [][]float64, y, ref []float64) (float64, error) {
	d := len(ref)
	if d == 0 {
		return 0, errors.New("pareto: empty reference point")
	}
	if len(y) != d {
		return 0, fmt.Errorf("pareto: the point has %d objectives, the reference point %d", len(y), d)
	}
	for j := range ref {
		if math.IsNaN(ref[j]) || math.IsInf(ref[j], 0) {
			return 0, fmt.Errorf("pareto: reference point coordinate %d is %v", j, ref[j])
		}
		if math.IsNaN(y[j]) || math.IsInf(y[j], 0) {
			return 0, fmt.Errorf("pareto: the point's objective %d is %v", j, y[j])
		}
	}
	box := 1.0
	for j := range ref {
		if y[j] >= ref[j] {
			box = 0
		}
		box *= ref[j] - y[j]
	}
	var limited [][]float64
	buf := make([]float64, len(points)*d) // the limited points, one allocation
	for i, p := range points {
		if len(p) != d {
			return 0, fmt.Errorf("pareto: point %d has %d objectives, the reference point %d", i, len(p), d)
		}
		q := buf[i*d : (i+1)*d : (i+1)*d]
		inside, covers := true, true
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("pareto: point %d: objective %d is %v", i, j, v)
			}
			if v > y[j] {
				covers = false
			}
			q[j] = math.Max(v, y[j])
			if q[j] >= ref[j] {
				inside = false
			}
		}
		if box == 0 {
			continue // only checking the input
		}
		if covers {
			box = 0 // p weakly dominates y: nothing gained
			continue
		}
		if inside {
			limited = append(limited, q)
		}
	}
	if box == 0 {
		return 0, nil
	}
	if len(limited) == 0 {
		return box, nil
	}
	if d == 2 {
		// The sweep skips dominated points by itself (each comes after
		// one that dominates it, in its sort order), with the same sum.
		return math.Max(box-hv2(limited, ref), 0), nil
	}
	return math.Max(box-hv(front(limited), ref), 0), nil
}
