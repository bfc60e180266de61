package objectives

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSobolParamsValid(t *testing.T) {
	t.Parallel()
	if len(sobolParams)+1 != MaxSobolDim {
		t.Fatalf("%d parameter lines, MaxSobolDim %d", len(sobolParams), MaxSobolDim)
	}
	for j, p := range sobolParams {
		if int(p.s) != len(p.m) {
			t.Errorf("dimension %d: degree %d but %d initial numbers", j+2, p.s, len(p.m))
		}
		if p.s > 1 && p.a >= 1<<(p.s-1) {
			t.Errorf("dimension %d: a = %d has more than s-1 = %d bits", j+2, p.a, p.s-1)
		}
		for k, m := range p.m {
			// Sobol's conditions: m_k odd and m_k < 2^k (1-based k).
			if m%2 == 0 || m >= 1<<(k+1) {
				t.Errorf("dimension %d: m_%d = %d is not odd and < 2^%d", j+2, k+1, m, k+1)
			}
		}
		// The polynomial x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1 must be
		// primitive over GF(2): x has multiplicative order 2^s - 1 modulo it.
		poly := uint32(1)<<p.s | p.a<<1 | 1
		order, x := 0, uint32(1)
		for {
			x <<= 1
			if x&(1<<p.s) != 0 {
				x ^= poly
			}
			order++
			if x == 1 || order > 1<<p.s {
				break
			}
		}
		if order != 1<<p.s-1 {
			t.Errorf("dimension %d: polynomial %b is not primitive (order %d)", j+2, poly, order)
		}
		// No polynomial may repeat.
		for i := 0; i < j; i++ {
			if sobolParams[i].s == p.s && sobolParams[i].a == p.a {
				t.Errorf("dimensions %d and %d share a polynomial", i+2, j+2)
			}
		}
	}
}

// TestSobolUnscrambled compares the plain sequence with the first points
// published for the Joe-Kuo direction numbers (as printed, e.g., by
// scipy.stats.qmc.Sobol(d=3, scramble=False)).
func TestSobolUnscrambled(t *testing.T) {
	t.Parallel()
	want := [][]float64{
		{0, 0, 0},
		{0.5, 0.5, 0.5},
		{0.75, 0.25, 0.25},
		{0.25, 0.75, 0.75},
		{0.375, 0.375, 0.625},
		{0.875, 0.875, 0.125},
		{0.625, 0.125, 0.875},
		{0.125, 0.625, 0.375},
	}
	got := mat.NewDense(len(want), 3, nil)
	sobolUnit(got, nil)
	for i, w := range want {
		for j := range w {
			if got.At(i, j) != w[j] {
				t.Fatalf("point %d = %v, want %v", i, got.RawRowView(i), w)
			}
		}
	}
	// Dimension 4 (m = 1 3 1, v = .1, .11, .001 in binary) in Gray-code order.
	d4 := mat.NewDense(8, 4, nil)
	sobolUnit(d4, nil)
	for i, w := range []float64{0, 0.5, 0.25, 0.75, 0.875, 0.375, 0.625, 0.125} {
		if d4.At(i, 3) != w {
			t.Fatalf("dimension 4, point %d = %v, want %v", i, d4.At(i, 3), w)
		}
	}
}

// TestSobolStratifies checks that for every dimension up to MaxSobolDim and
// every k <= 10 the first 2^k points put exactly one point in each dyadic
// interval [j/2^k, (j+1)/2^k) of every coordinate, scrambled or not.
func TestSobolStratifies(t *testing.T) {
	t.Parallel()
	unit := Box{Lower: make([]float64, MaxSobolDim), Upper: filled(MaxSobolDim, 1)}
	for _, seed := range []uint64{0, 1, 12345} {
		pts, err := Sobol(unit, 1<<10, seed)
		if err != nil {
			t.Fatal(err)
		}
		checkDyadic(t, pts, 10)
	}
	plain := mat.NewDense(1<<10, MaxSobolDim, nil)
	sobolUnit(plain, nil)
	checkDyadic(t, plain, 10)
}

func checkDyadic(t *testing.T, pts *mat.Dense, maxK int) {
	t.Helper()
	_, d := pts.Dims()
	for k := 0; k <= maxK; k++ {
		n := 1 << k
		for j := 0; j < d; j++ {
			seen := make([]bool, n)
			for i := 0; i < n; i++ {
				u := pts.At(i, j)
				if !(u >= 0 && u < 1) {
					t.Fatalf("point %d coordinate %d = %v outside [0, 1)", i, j, u)
				}
				c := int(u * float64(n)) // exact: n is a power of two
				if seen[c] {
					t.Fatalf("k=%d, coordinate %d: two of the first %d points in cell %d", k, j, n, c)
				}
				seen[c] = true
			}
		}
	}
}

// TestSobolNet2D checks that the first two coordinates form a (0, m, 2)-net:
// every dyadic box of area 2^-m holds exactly one of the first 2^m points.
func TestSobolNet2D(t *testing.T) {
	t.Parallel()
	const m = 8
	unit := Box{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	pts, err := Sobol(unit, 1<<m, 77)
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a <= m; a++ {
		nx, ny := 1<<a, 1<<(m-a)
		seen := make([]bool, nx*ny)
		for i := 0; i < 1<<m; i++ {
			c := int(pts.At(i, 0)*float64(nx))*ny + int(pts.At(i, 1)*float64(ny))
			if seen[c] {
				t.Fatalf("boxes %dx%d: cell %d holds two points", nx, ny, c)
			}
			seen[c] = true
		}
	}
}

func TestSobolBoxAndSeed(t *testing.T) {
	t.Parallel()
	b := Box{Lower: []float64{-5, 0, 1e-3}, Upper: []float64{10, 15, 2e-3}}
	a, err := Sobol(b, 1000, 4)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := Sobol(b, 1000, 4)
	a3, _ := Sobol(b, 1000, 5)
	if !mat.Equal(a, a2) || mat.Equal(a, a3) {
		t.Fatal("Sobol not determined by its seed")
	}
	// A prefix of a longer sequence is the shorter sequence.
	long, _ := Sobol(b, 2000, 4)
	if !mat.Equal(a, long.Slice(0, 1000, 0, 3)) {
		t.Fatal("Sobol(n) is not a prefix of Sobol(2n)")
	}
	means := make([]float64, 3)
	for i := 0; i < 1000; i++ {
		x := a.RawRowView(i)
		if !b.Contains(x) {
			t.Fatalf("point %v outside the box", x)
		}
		for j, v := range x {
			means[j] += (v - b.Lower[j]) / (b.Upper[j] - b.Lower[j]) / 1000
		}
	}
	for j, m := range means {
		if math.Abs(m-0.5) > 0.01 {
			t.Errorf("coordinate %d: mean of unit coordinates %v", j, m)
		}
	}
}

func TestSobolErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b    Box
		n    int
		want string
	}{
		{Box{Lower: filled(MaxSobolDim+1, 0), Upper: filled(MaxSobolDim+1, 1)}, 4, "dimension 33 exceeds"},
		{Box{Lower: []float64{0}, Upper: []float64{1}}, 0, "must be positive"},
		{Box{Lower: []float64{0}, Upper: []float64{0}}, 4, "box dimension 0"},
		{Box{Lower: []float64{0}, Upper: []float64{1}}, MaxArmElements + 1, "exceed the limit"},
	} {
		if _, err := Sobol(tc.b, tc.n, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Sobol(%v, %d) error %v, want %q", tc.b, tc.n, err, tc.want)
		}
	}
}
