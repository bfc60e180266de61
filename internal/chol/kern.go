package chol

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// blasImpl is gonum's pure-Go BLAS, called directly (not through blas64's
// interface) on the fallback path of the kernels.
var blasImpl gonum.Implementation

// GemvRows sets y[i] = f[i*ldf : i*ldf+w] . z[:w] for i < n (y = F z for
// the n x w row-major F): AVX2 kernels where the CPU has them, gonum's
// Dgemv otherwise.
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
	if !hasAVX2FMA {
		blasImpl.Dgemv(blas.NoTrans, n, w, 1, f, ldf, z, 1, 0, y, 1)
		return
	}
	_ = f[(n-1)*ldf+w-1]
	_ = z[w-1]
	_ = y[n-1]
	w4 := w &^ 3
	n4 := n &^ 3
	if w4 > 0 {
		if n4 > 0 {
			gemv4AVX(&f[0], ldf, &z[0], w4, &y[0], n4)
		}
		for i := n4; i < n; i++ {
			y[i] = dotAVX(&f[i*ldf], &z[0], w4)
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
				s += ft[k] * v
			}
			y[i] = s
		}
	}
}

// Dot returns x . y over len(x), with the AVX2 kernel where the CPU has
// it (for the long inner products of the per-row passes).
func Dot(x, y []float64) float64 {
	n := len(x)
	if !hasAVX2FMA || n < 16 {
		return DotScalar(x, y)
	}
	y = y[:n]
	n4 := n &^ 3
	s := dotAVX(&x[0], &y[0], n4)
	for i := n4; i < n; i++ {
		s += x[i] * y[i]
	}
	return s
}

// GemvRows2 is GemvRows for two vectors: y1 = F z1, y2 = F z2, reading F
// once.
func GemvRows2(f []float64, n, w, ldf int, z1, z2, y1, y2 []float64) {
	if !hasAVX2FMA || n < 4 || w < 4 {
		GemvRows(f, n, w, ldf, z1, y1)
		GemvRows(f, n, w, ldf, z2, y2)
		return
	}
	_ = f[(n-1)*ldf+w-1]
	_, _ = z1[w-1], z2[w-1]
	_, _ = y1[n-1], y2[n-1]
	w4, n4 := w&^3, n&^3
	gemv4x2AVX(&f[0], ldf, &z1[0], &z2[0], w4, &y1[0], &y2[0], n4)
	for i := n4; i < n; i++ {
		y1[i] = dotAVX(&f[i*ldf], &z1[0], w4)
		y2[i] = dotAVX(&f[i*ldf], &z2[0], w4)
	}
	if w4 < w {
		for i := 0; i < n; i++ {
			ft := f[i*ldf+w4 : i*ldf+w]
			s1, s2 := y1[i], y2[i]
			for k, v := range ft {
				s1 += v * z1[w4+k]
				s2 += v * z2[w4+k]
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
	if hasAVX2FMA && n >= 8 {
		i = n &^ 3
		axpyAVX(a, &x[0], &y[0], i)
	}
	for ; i < n; i++ {
		y[i] += a * x[i]
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
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Accelerated reports whether the kernels run the AVX2/FMA code. Results
// agree with the fallback's to rounding only (fused multiply-adds), so
// tests that compare chosen points bit for bit with recorded ones hold on
// the path they were recorded with.
func Accelerated() bool { return hasAVX2FMA }
