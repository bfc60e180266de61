// Package candidates generates new candidate points for Bayesian
// optimization where the optimum may be: trust-region perturbations of an
// incumbent at a TuRBO-style radius schedule (Eriksson et al., "Scalable
// Global Optimization via Local Bayesian Optimization", NeurIPS 2019) and a
// continuous polish of an acquisition function with gonum/optimize. Every
// point it produces is valid for an encoded Domain: continuous coordinates in
// [0, 1], discrete coordinates on their levels, and exactly one coordinate of
// each one-hot categorical group equal to 1.
package candidates

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Coord describes one coordinate of the encoded unit box.
type Coord struct {
	// Levels are the allowed values of a discrete coordinate, strictly
	// increasing inside [0, 1] (an integer grid, a fixed step, a
	// log-integer range, mapped into the box). nil means continuous in
	// [0, 1]. Coordinates of a one-hot group must leave Levels nil.
	Levels []float64
	// Group >= 0 puts the coordinate in the one-hot group with that id (a
	// categorical parameter: exactly one coordinate of the group is 1, the
	// others 0); -1 means none. Note that the zero Coord is in group 0: use
	// Continuous() or set Group: -1.
	Group int
}

// Continuous returns a continuous coordinate in [0, 1].
func Continuous() Coord { return Coord{Group: -1} }

// Discrete returns a discrete coordinate with the given levels.
func Discrete(levels ...float64) Coord { return Coord{Levels: levels, Group: -1} }

// OneHot returns the k coordinates of one-hot group id.
func OneHot(id, k int) []Coord {
	c := make([]Coord, k)
	for i := range c {
		c[i] = Coord{Group: id}
	}
	return c
}

// Domain is the encoded search space, one Coord per dimension.
type Domain struct {
	Coords []Coord
}

// Dim returns the number of coordinates.
func (d Domain) Dim() int { return len(d.Coords) }

// Validate reports levels that are not strictly increasing inside [0, 1],
// groups given levels, or a group with fewer than two coordinates.
func (d Domain) Validate() error {
	if len(d.Coords) == 0 {
		return errors.New("candidates: empty domain")
	}
	size := map[int]int{}
	for i, c := range d.Coords {
		switch {
		case c.Group >= 0:
			if c.Levels != nil {
				return fmt.Errorf("candidates: coordinate %d is in one-hot group %d and must not have levels", i, c.Group)
			}
			size[c.Group]++
		case c.Group != -1:
			return fmt.Errorf("candidates: coordinate %d has group %d; use -1 for none", i, c.Group)
		case c.Levels != nil:
			if len(c.Levels) == 0 {
				return fmt.Errorf("candidates: coordinate %d has an empty level list", i)
			}
			for j, v := range c.Levels {
				if !(v >= 0 && v <= 1) {
					return fmt.Errorf("candidates: coordinate %d level %d = %v is outside [0, 1]", i, j, v)
				}
				if j > 0 && !(v > c.Levels[j-1]) {
					return fmt.Errorf("candidates: coordinate %d levels are not strictly increasing at %d", i, j)
				}
			}
		}
	}
	for g, n := range size {
		if n < 2 {
			return fmt.Errorf("candidates: one-hot group %d has %d coordinate; a categorical needs at least 2", g, n)
		}
	}
	return nil
}

// Check reports why x is not a valid point of d, or nil.
func (d Domain) Check(x []float64) error {
	if len(x) != len(d.Coords) {
		return fmt.Errorf("candidates: point has %d coordinates, domain %d", len(x), len(d.Coords))
	}
	ones := map[int]int{}
	for i, c := range d.Coords {
		v := x[i]
		switch {
		case c.Group >= 0:
			if v != 0 && v != 1 {
				return fmt.Errorf("candidates: coordinate %d of group %d is %v, not 0 or 1", i, c.Group, v)
			}
			if v == 1 {
				ones[c.Group]++
			} else if _, ok := ones[c.Group]; !ok {
				ones[c.Group] = 0
			}
		case c.Levels != nil:
			if !onLevel(c.Levels, v) {
				return fmt.Errorf("candidates: coordinate %d is %v, not one of its levels", i, v)
			}
		default:
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("candidates: coordinate %d is %v, outside [0, 1]", i, v)
			}
		}
	}
	for g, n := range ones {
		if n != 1 {
			return fmt.Errorf("candidates: one-hot group %d has %d coordinates set, want 1", g, n)
		}
	}
	return nil
}

func onLevel(levels []float64, v float64) bool {
	j := sort.SearchFloat64s(levels, v)
	return j < len(levels) && levels[j] == v
}

// nearestLevel returns the index of the level nearest to v (the lower on a
// tie).
func nearestLevel(levels []float64, v float64) int {
	j := sort.SearchFloat64s(levels, v)
	switch {
	case j == 0:
		return 0
	case j == len(levels):
		return len(levels) - 1
	case v-levels[j-1] <= levels[j]-v:
		return j - 1
	}
	return j
}

// Snap moves x in place to a valid point of d nearby: continuous coordinates
// clamped into [0, 1] (NaN to 0.5), discrete ones to their nearest level,
// and each one-hot group to its largest coordinate (the first on a tie).
// It panics if len(x) != d.Dim().
func (d Domain) Snap(x []float64) {
	if len(x) != len(d.Coords) {
		panic(fmt.Sprintf("candidates: point has %d coordinates, domain %d", len(x), len(d.Coords)))
	}
	best := map[int]int{}
	for i, c := range d.Coords {
		v := x[i]
		if math.IsNaN(v) {
			v = 0.5
		}
		switch {
		case c.Group >= 0:
			if b, ok := best[c.Group]; !ok || v > x[b] {
				best[c.Group] = i
			}
			continue
		case c.Levels != nil:
			v = c.Levels[nearestLevel(c.Levels, v)]
		default:
			v = math.Min(math.Max(v, 0), 1)
		}
		x[i] = v
	}
	for i, c := range d.Coords {
		if c.Group >= 0 {
			if best[c.Group] == i {
				x[i] = 1
			} else {
				x[i] = 0
			}
		}
	}
}

// Random writes a uniformly random valid point of d into dst: continuous
// coordinates uniform in [0, 1], discrete ones a uniform level, one uniform
// category per group.
func (d Domain) Random(dst []float64, rng *rand.Rand) {
	if len(dst) != len(d.Coords) {
		panic(fmt.Sprintf("candidates: point has %d coordinates, domain %d", len(dst), len(d.Coords)))
	}
	for i, c := range d.Coords {
		switch {
		case c.Group >= 0:
			dst[i] = 0
		case c.Levels != nil:
			dst[i] = c.Levels[rng.IntN(len(c.Levels))]
		default:
			dst[i] = rng.Float64()
		}
	}
	for _, g := range d.groups() {
		dst[g[rng.IntN(len(g))]] = 1
	}
}

// ContinuousIndices returns the indices of the continuous coordinates.
func (d Domain) ContinuousIndices() []int {
	var idx []int
	for i, c := range d.Coords {
		if c.Group < 0 && c.Levels == nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// groups returns the coordinate indices of each one-hot group, ordered by
// the group's first coordinate.
func (d Domain) groups() [][]int {
	pos := map[int]int{}
	var out [][]int
	for i, c := range d.Coords {
		if c.Group < 0 {
			continue
		}
		p, ok := pos[c.Group]
		if !ok {
			p = len(out)
			pos[c.Group] = p
			out = append(out, nil)
		}
		out[p] = append(out[p], i)
	}
	return out
}
