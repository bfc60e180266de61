package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// go test ./kernel/ -run '^$' -bench . -benchmem

func BenchmarkRBFColumn(b *testing.B) {
	const n, d = 10000, 6
	rng := rand.New(rand.NewPCG(1, 1))
	x := randPoints(rng, n, d, -1, 1)
	y := make([]float64, d)
	for i := range y {
		y[i] = rng.Float64()
	}
	dst := make([]float64, n)
	var k Kernel = RBF{LengthScale: 0.5} // converted once: no allocation per call
	b.ReportAllocs()
	for b.Loop() {
		Column(dst, k, x, y)
	}
}

func BenchmarkRBFMatrix(b *testing.B) {
	const n, d = 500, 6
	rng := rand.New(rand.NewPCG(1, 2))
	x := randPoints(rng, n, d, -1, 1)
	dst := mat.NewDense(n, n, nil)
	var k Kernel = RBF{LengthScale: 0.5}
	b.ReportAllocs()
	for b.Loop() {
		Matrix(dst, k, x, x)
	}
}

func BenchmarkTaylorMap(b *testing.B) {
	for _, c := range []struct{ d, m int }{{5, 3}, {6, 4}, {8, 4}, {18, 2}, {18, 4}, {70, 2}} {
		tg, err := NewTaylorGaussian(c.d, c.m, 1.5)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("d=%d/M=%d/r=%d", c.d, c.m, tg.Dim()), func(b *testing.B) {
			f := mapper(tg)
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
		})
	}
}

func BenchmarkFourierMap(b *testing.B) {
	for _, c := range []struct{ d, D int }{{6, 256}, {6, 1024}, {18, 1024}} {
		rf, err := NewRandomFourier(RBF{LengthScale: 1}, c.d, c.D, 7)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("d=%d/D=%d", c.d, c.D), func(b *testing.B) {
			f := mapper(rf)
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
		})
	}
}

func BenchmarkFourierFeatureRegenerate(b *testing.B) {
	gen, err := NewFourierGenerator(Matern{Nu: 2.5, LengthScale: 1}, 7)
	if err != nil {
		b.Fatal(err)
	}
	omega := make([]float64, 6)
	b.ReportAllocs()
	j := 0
	for b.Loop() {
		gen.Feature(j, omega)
		j++
	}
}
