package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The hand-written kernels against a plain loop, on every shape that
// exercises their blocks and tails (rows by 4, columns by 4 and 16), with
// a row stride beyond the width; and the gonum fallback on the same cases.
func TestKernelsAgainstLoop(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(t *testing.T) {
		for n := 0; n <= 9; n++ {
			for w := 0; w <= 41; w++ {
				ldf := w + rng.IntN(3)
				f := make([]float64, max(n*ldf, 1))
				for i := range f {
					f[i] = rng.NormFloat64()
				}
				z := make([]float64, w+1)
				for i := range z {
					z[i] = rng.NormFloat64()
				}
				y := make([]float64, n+1)
				y[n] = 42 // beyond n: untouched
				GemvRows(f, n, w, ldf, z, y)
				for i := 0; i < n; i++ {
					var s, a float64
					for k := 0; k < w; k++ {
						s += f[i*ldf+k] * z[k]
						a += math.Abs(f[i*ldf+k] * z[k])
					}
					if math.Abs(y[i]-s) > 1e-14*a+1e-300 {
						t.Fatalf("gemvRows n=%d w=%d ldf=%d row %d: %v, want %v", n, w, ldf, i, y[i], s)
					}
				}
				z2 := make([]float64, w+1)
				for i := range z2 {
					z2[i] = rng.NormFloat64()
				}
				y1, y2 := make([]float64, n+1), make([]float64, n+1)
				GemvRows2(f, n, w, ldf, z, z2, y1, y2)
				for i := 0; i < n; i++ {
					var s, s2, a, a2 float64
					for k := 0; k < w; k++ {
						s += f[i*ldf+k] * z[k]
						a += math.Abs(f[i*ldf+k] * z[k])
						s2 += f[i*ldf+k] * z2[k]
						a2 += math.Abs(f[i*ldf+k] * z2[k])
					}
					if math.Abs(y1[i]-s) > 1e-14*a+1e-300 || math.Abs(y2[i]-s2) > 1e-14*a2+1e-300 {
						t.Fatalf("gemvRows2 n=%d w=%d ldf=%d row %d: %v %v, want %v %v", n, w, ldf, i, y1[i], y2[i], s, s2)
					}
				}
				if y[n] != 42 {
					t.Fatalf("gemvRows n=%d w=%d wrote beyond n", n, w)
				}
				if n > 0 {
					var s, a float64
					for k := 0; k < w; k++ {
						s += f[k] * z[k]
						a += math.Abs(f[k] * z[k])
					}
					if d := Dot(f[:w], z); math.Abs(d-s) > 1e-14*a+1e-300 {
						t.Fatalf("Dot w=%d: %v, want %v", w, d, s)
					}
					ax := append([]float64(nil), z[:w]...)
					Axpy(0.75, f[:w], ax)
					for k := range ax {
						if want := z[k] + 0.75*f[k]; math.Abs(ax[k]-want) > 1e-15*(math.Abs(z[k])+math.Abs(f[k])) {
							t.Fatalf("Axpy w=%d at %d: %v, want %v", w, k, ax[k], want)
						}
					}
				}
			}
		}
	}
	t.Run(fmt.Sprintf("avx=%v", hasAVX2FMA), check)
	if hasAVX2FMA {
		t.Run("fallback", func(t *testing.T) {
			hasAVX2FMA = false
			defer func() { hasAVX2FMA = true }()
			check(t)
		})
	}
}

// BenchmarkKernels compares the per-row inner products on a table of rows
// in cache: 16 vectors against one row (an addition's two vectors, eight
// additions), as gonum's Dgemv, GemvRows and GemvRows2; one inner product as a
// scalar loop and Dot.
func BenchmarkKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{128, 400} {
		const k, n = 16, 64
		z := make([]float64, n*m)
		g := make([]float64, k*m)
		for i := range z {
			z[i] = rng.Float64()
		}
		for i := range g {
			g[i] = rng.Float64()
		}
		y := make([]float64, k)
		flops := func(b *testing.B) {
			b.ReportMetric(float64(2*n*m*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
		}
		b.Run(fmt.Sprintf("dgemv/m=%d", m), func(b *testing.B) {
			save := hasAVX2FMA
			hasAVX2FMA = false
			defer func() { hasAVX2FMA = save }()
			for it := 0; it < b.N; it++ {
				for j := 0; j < n; j++ {
					GemvRows(g, k, m, m, z[j*m:(j+1)*m], y)
				}
			}
			flops(b)
		})
		b.Run(fmt.Sprintf("gemvRows/m=%d", m), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for j := 0; j < n; j++ {
					GemvRows(g, k, m, m, z[j*m:(j+1)*m], y)
				}
			}
			flops(b)
		})
		y2 := make([]float64, k)
		b.Run(fmt.Sprintf("gemvRows2/m=%d", m), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for j := 0; j+1 < n; j += 2 {
					GemvRows2(g, k, m, m, z[j*m:(j+1)*m], z[(j+1)*m:(j+2)*m], y, y2)
				}
			}
			flops(b)
		})
		b.Run(fmt.Sprintf("scalar/m=%d", m), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for j := 0; j < n; j++ {
					y[0] += DotScalar(g[:m], z[j*m:(j+1)*m])
				}
			}
			b.ReportMetric(float64(2*n*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
		})
		b.Run(fmt.Sprintf("Dot/m=%d", m), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for j := 0; j < n; j++ {
					y[0] += Dot(g[:m], z[j*m:(j+1)*m])
				}
			}
			b.ReportMetric(float64(2*n*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
		})
	}
}

// TestPortableKernelsBitForBit: the portable kernels compute the same bits
// as the AVX2/FMA assembly on every shape of their blocks and tails, so
// that a study recorded on one CPU replays on any other. (Not parallel: it
// switches the package's path, and parallel tests start after it ends.)
func TestPortableKernelsBitForBit(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("this CPU has no AVX2/FMA: the assembly cannot be run to compare with (the golden replays of package study check the portable path against journals recorded with it)")
	}
	defer func(v bool) { useAVX = v }(useAVX)
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 0; n <= 9; n++ {
		for w := 0; w <= 41; w++ {
			ldf := w + rng.IntN(3)
			f := make([]float64, max(n*ldf, 1))
			for i := range f {
				f[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
			}
			z1, z2 := make([]float64, w+1), make([]float64, w+1)
			for i := range z1 {
				z1[i], z2[i] = rng.NormFloat64(), rng.NormFloat64()*1e3
			}
			z3 := make([]float64, w+1)
			for i := range z3 {
				z3[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
			var got [2][6][]float64
			for p, avx := range []bool{true, false} {
				useAVX = avx
				y, y1, y2, ax := make([]float64, n), make([]float64, n), make([]float64, n), append([]float64(nil), z2...)
				GemvRows(f, n, w, ldf, z1, y)
				GemvRows2(f, n, w, ldf, z1, z2, y1, y2)
				Axpy(0.37, z1[:w], ax)
				// AxpyUnfused is the scalar loop, bit for bit.
				au, loop := append([]float64(nil), z2...), append([]float64(nil), z2...)
				AxpyUnfused(-1.7e-3, z3[:w], au)
				for i := range w {
					loop[i] += float64(-1.7e-3 * z3[i])
				}
				for i := range au {
					if math.Float64bits(au[i]) != math.Float64bits(loop[i]) {
						t.Fatalf("AxpyUnfused w=%d (assembly %v) [%d]: %v, the loop gives %v", w, avx, i, au[i], loop[i])
					}
				}
				d1, d2 := Dot2(z1[:w], z2[:w], z3[:w])
				e1, e2, e3 := Dot3(z1[:w], z2[:w], z3[:w], z1[:w])
				got[p] = [6][]float64{y, y1, y2, ax, {Dot(z1[:w], z2[:w])},
					{d1, d2, Dot(z1[:w], z3[:w]), e1, e2, e3, Dot(z1[:w], z1[:w])}}
			}
			// Dot2's and Dot3's sums are Dot's, on either path.
			for p := range got {
				d, dot := got[p][5], got[p][4][0]
				for k, want := range []float64{dot, d[2], dot, d[2], d[6]} {
					if math.Float64bits(d[[]int{0, 1, 3, 4, 5}[k]]) != math.Float64bits(want) {
						t.Fatalf("Dot2/Dot3 w=%d (assembly %v): sums %v, Dot gives %v, %v and %v", w, p == 0, d[:6], dot, d[2], d[6])
					}
				}
			}
			for k, name := range []string{"GemvRows", "GemvRows2 (1)", "GemvRows2 (2)", "Axpy", "Dot", "Dot2 and Dot3"} {
				for i := range got[0][k] {
					if math.Float64bits(got[0][k][i]) != math.Float64bits(got[1][k][i]) {
						t.Fatalf("%s n=%d w=%d ldf=%d [%d]: assembly %v, portable %v", name, n, w, ldf, i, got[0][k][i], got[1][k][i])
					}
				}
			}
		}
	}
}
