//go:build !amd64

package gp

const hasAVX2FMA = false

func gemv4AVX(f *float64, ldf int, z *float64, w int, y *float64, n int) {
	panic("gp: gemv4AVX without AVX2")
}

func dotAVX(x, y *float64, n int) float64 { panic("gp: dotAVX without AVX2") }

func gemv4x2AVX(f *float64, ldf int, z1, z2 *float64, w int, y1, y2 *float64, n int) {
	panic("gp: gemv4x2AVX without AVX2")
}
