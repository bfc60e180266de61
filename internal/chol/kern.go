package chol

import (
	"math"
	"os"
)

// useAVX reports whether the kernels run the hand-written AVX2/FMA code:
// where the CPU has it, unless the environment sets BKB_NOAVX2 (the tests
// of the portable path). Elsewhere the portable kernels below make the
// same fused multiply-adds (math.FMA) in the same order, and sum the
// partial sums as the assembly's horizontal adds do: the results are the
// same bits on every amd64 CPU, so a study recorded on one machine replays
// on any other (a golden journal needs no CPU of its own).
var useAVX = hasAVX2FMA && os.Getenv("BKB_NOAVX2") == ""

// GemvRows sets y[i] = f[i*ldf : i*ldf+w] . z[:w] for i < n (y = F z for
// the n x w row-major F): AVX2 kernels where the CPU has them, their
// portable twins otherwise.
func GemvRows(f []float64, n, w, ldf int, z, y []float64) {
	if n == 0 {
		return
	}
	if w == 0 {
		for i := range y[:n] {
			y[i] = 0
		}
		return
	}
	_ = f[(n-1)*ldf+w-1]
	_ = z[w-1]
	_ = y[n-1]
	w4 := w &^ 3
	n4 := n &^ 3
	if w4 > 0 {
		if n4 > 0 {
			gemv4(f, ldf, z, w4, y, n4)
		}
		for i := n4; i < n; i++ {
			y[i] = dot4(f[i*ldf:], z, w4)
		}
	} else {
		for i := range y[:n] {
			y[i] = 0
		}
	}
	if w4 < w {
		zt := z[w4:w]
		for i := 0; i < n; i++ {
			ft := f[i*ldf+w4 : i*ldf+w]
			s := y[i]
			for k, v := range zt {
				s += float64(ft[k] * v) // rounded: no fused multiply-add on any CPU
			}
			y[i] = s
		}
	}
}

// Dot returns x . y over len(x), with the AVX2 kernel where the CPU has
// it (for the long inner products of the per-row passes).
func Dot(x, y []float64) float64 {
	n := len(x)
	if n < 16 {
		return DotScalar(x, y)
	}
	y = y[:n]
	n4 := n &^ 3
	s := dot4(x, y, n4)
	for i := n4; i < n; i++ {
		s += float64(x[i] * y[i])
	}
	return s
}

// Dot2 returns x . y1 and x . y2 over len(x), each with the bits of Dot,
// reading x once: the triangular solves of many right-hand sides
// (Factor.SolveLMulti) take the rows of L two right-hand sides at a
// time, which keeps eight multiply-add chains busy where Dot's four wait
// on their latency.
func Dot2(x, y1, y2 []float64) (float64, float64) {
	n := len(x)
	if n < 16 {
		return DotScalar(x, y1), DotScalar(x, y2)
	}
	y1, y2 = y1[:n], y2[:n]
	n4 := n &^ 3
	var s1, s2 float64
	if useAVX {
		s1, s2 = dot2AVX(&x[0], &y1[0], &y2[0], n4)
	} else {
		s1, s2 = dot4(x, y1, n4), dot4(x, y2, n4)
	}
	for i := n4; i < n; i++ {
		s1 += float64(x[i] * y1[i])
		s2 += float64(x[i] * y2[i])
	}
	return s1, s2
}

// Dot3 is Dot2 for three vectors: twelve chains and the loads of x
// shared by three, which is what the sixteen AVX2 registers hold.
func Dot3(x, y1, y2, y3 []float64) (float64, float64, float64) {
	n := len(x)
	if n < 16 {
		return DotScalar(x, y1), DotScalar(x, y2), DotScalar(x, y3)
	}
	y1, y2, y3 = y1[:n], y2[:n], y3[:n]
	n4 := n &^ 3
	var s1, s2, s3 float64
	if useAVX {
		s1, s2, s3 = dot3AVX(&x[0], &y1[0], &y2[0], &y3[0], n4)
	} else {
		s1, s2, s3 = dot4(x, y1, n4), dot4(x, y2, n4), dot4(x, y3, n4)
	}
	for i := n4; i < n; i++ {
		s1 += float64(x[i] * y1[i])
		s2 += float64(x[i] * y2[i])
		s3 += float64(x[i] * y3[i])
	}
	return s1, s2, s3
}

// GemvRows2 is GemvRows for two vectors: y1 = F z1, y2 = F z2, reading F
// once.
func GemvRows2(f []float64, n, w, ldf int, z1, z2, y1, y2 []float64) {
	if n < 4 || w < 4 {
		GemvRows(f, n, w, ldf, z1, y1)
		GemvRows(f, n, w, ldf, z2, y2)
		return
	}
	_ = f[(n-1)*ldf+w-1]
	_, _ = z1[w-1], z2[w-1]
	_, _ = y1[n-1], y2[n-1]
	w4, n4 := w&^3, n&^3
	if useAVX {
		gemv4x2AVX(&f[0], ldf, &z1[0], &z2[0], w4, &y1[0], &y2[0], n4)
	} else {
		// Each row's sums are gemv4AVX's for either vector.
		gemv4(f, ldf, z1, w4, y1, n4)
		gemv4(f, ldf, z2, w4, y2, n4)
	}
	for i := n4; i < n; i++ {
		y1[i] = dot4(f[i*ldf:], z1, w4)
		y2[i] = dot4(f[i*ldf:], z2, w4)
	}
	if w4 < w {
		for i := 0; i < n; i++ {
			ft := f[i*ldf+w4 : i*ldf+w]
			s1, s2 := y1[i], y2[i]
			for k, v := range ft {
				s1 += float64(v * z1[w4+k])
				s2 += float64(v * z2[w4+k])
			}
			y1[i], y2[i] = s1, s2
		}
	}
}

// Axpy adds a x to y (len(x) elements), with the AVX2 kernel where the
// CPU has it.
func Axpy(a float64, x, y []float64) {
	n := len(x)
	y = y[:n]
	i := 0
	if n >= 8 {
		i = n &^ 3
		if useAVX {
			axpyAVX(a, &x[0], &y[0], i)
		} else {
			for k := range i {
				y[k] = math.FMA(a, x[k], y[k]) // axpyAVX's VFMADD231PD
			}
		}
	}
	for ; i < n; i++ {
		y[i] += float64(a * x[i])
	}
}

// AxpyUnfused adds a * x to y, each product rounded before its add:
// exactly the loop y[i] += a * x[i], four at a time where the CPU has
// AVX2 (each element is its own sum, so the bits do not depend on the
// width). It is the kernel of loops whose stored studies replay with
// unfused products (package gp's rebuild of V).
func AxpyUnfused(a float64, x, y []float64) {
	n := len(x)
	y = y[:n]
	i := 0
	if n >= 8 && useAVX {
		i = n &^ 3
		axpyUnfusedAVX(a, &x[0], &y[0], i)
	}
	for ; i < n; i++ {
		y[i] += float64(a * x[i])
	}
}

// DotScalar is the plain inner product, with four accumulators: Dot's
// fallback, and the inner product for callers whose rounding must not
// depend on the CPU's vector instructions (package gp's per-arm updates
// outside the batched kernels).
func DotScalar(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+3 < len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Accelerated reports whether the kernels run the AVX2/FMA code. The
// portable kernels compute the same bits, more slowly.
func Accelerated() bool { return useAVX }

// gemv4 is gemv4AVX (w and n multiples of 4), in assembly or in Go.
func gemv4(f []float64, ldf int, z []float64, w int, y []float64, n int) {
	if useAVX {
		gemv4AVX(&f[0], ldf, &z[0], w, &y[0], n)
		return
	}
	z = z[:w]
	for r := range n {
		row := f[r*ldf : r*ldf+w]
		// One 4-wide accumulator, lane l summing columns = l mod 4 with
		// fused multiply-adds (VFMADD231PD), then the horizontal adds
		// (VHADDPD, VPERM2F128, VBLENDPD, VADDPD): (l0+l1) + (l2+l3).
		var a0, a1, a2, a3 float64
		for k := 0; k < w; k += 4 {
			a0 = math.FMA(row[k], z[k], a0)
			a1 = math.FMA(row[k+1], z[k+1], a1)
			a2 = math.FMA(row[k+2], z[k+2], a2)
			a3 = math.FMA(row[k+3], z[k+3], a3)
		}
		y[r] = (a0 + a1) + (a2 + a3)
	}
}

// dot4 is dotAVX (n a multiple of 4), in assembly or in Go.
func dot4(x, y []float64, n int) float64 {
	if n == 0 {
		return 0
	}
	if useAVX {
		return dotAVX(&x[0], &y[0], n)
	}
	x, y = x[:n], y[:n]
	// Four 4-wide accumulators b[j] over blocks of 16, then blocks of 4
	// into b[0]; lane sums (b0+b1)+(b2+b3), then the halves and the
	// horizontal add: (l0+l2) + (l1+l3).
	var b [4][4]float64
	k := 0
	for ; k+16 <= n; k += 16 {
		for j := range 4 {
			for l := range 4 {
				b[j][l] = math.FMA(x[k+4*j+l], y[k+4*j+l], b[j][l])
			}
		}
	}
	for ; k < n; k += 4 {
		for l := range 4 {
			b[0][l] = math.FMA(x[k+l], y[k+l], b[0][l])
		}
	}
	var lane [4]float64
	for l := range 4 {
		lane[l] = (b[0][l] + b[1][l]) + (b[2][l] + b[3][l])
	}
	return (lane[0] + lane[2]) + (lane[1] + lane[3])
}
