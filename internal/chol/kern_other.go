//go:build !amd64

package chol

var hasAVX2FMA = false

func gemv4AVX(f *float64, ldf int, z *float64, w int, y *float64, n int) {
	panic("chol: gemv4AVX without AVX2")
}

func dotAVX(x, y *float64, n int) float64 { panic("chol: dotAVX without AVX2") }

func dot2AVX(x, y1, y2 *float64, n int) (s1, s2 float64) { panic("chol: dot2AVX without AVX2") }

func dot3AVX(x, y1, y2, y3 *float64, n int) (s1, s2, s3 float64) {
	panic("chol: dot3AVX without AVX2")
}

func gemv4x2AVX(f *float64, ldf int, z1, z2 *float64, w int, y1, y2 *float64, n int) {
	panic("chol: gemv4x2AVX without AVX2")
}

func axpyAVX(a float64, x, y *float64, n int) { panic("chol: axpyAVX without AVX2") }

func axpyUnfusedAVX(a float64, x, y *float64, n int) { panic("chol: axpyUnfusedAVX without AVX2") }
