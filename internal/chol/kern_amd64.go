package chol

// The per-row inner products of a BKB step in package gp (the pass over
// all arms that a dictionary change or an observation costs) and the
// triangular solves of this package, in AVX2 with fused multiply-add. They are written by hand because no Go library has them:
// gonum's assembly kernels are SSE2 (two doubles per instruction, no FMA)
// and the compiler does not vectorize; on the rows of a dictionary
// (m = 100-600, in L1) the 4-wide FMA kernels run 2-3x the flop rate of
// gonum's Dgemv and 3-4x that of a scalar loop (BenchmarkKernels), which
// is what brings a change step near the cost of reading the row.

//go:noescape
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv() (eax, edx uint32)

//go:noescape
func gemv4AVX(f *float64, ldf int, z *float64, w int, y *float64, n int)

//go:noescape
func gemv4x2AVX(f *float64, ldf int, z1, z2 *float64, w int, y1, y2 *float64, n int)

//go:noescape
func axpyAVX(a float64, x, y *float64, n int)

//go:noescape
func dotAVX(x, y *float64, n int) float64

//go:noescape
func axpyUnfusedAVX(a float64, x, y *float64, n int)

//go:noescape
func dot2AVX(x, y1, y2 *float64, n int) (s1, s2 float64)

//go:noescape
func dot3AVX(x, y1, y2, y3 *float64, n int) (s1, s2, s3 float64)

// hasAVX2FMA reports AVX2 and FMA support, with the OS saving the YMM
// state (CPUID leaf 1: FMA bit 12, OSXSAVE bit 27, AVX bit 28; XCR0 bits
// 1-2; leaf 7: AVX2 bit 5).
var hasAVX2FMA = func() bool {
	max, _, _, _ := cpuid(0, 0)
	if max < 7 {
		return false
	}
	_, _, c, _ := cpuid(1, 0)
	if c&(1<<12) == 0 || c&(1<<27) == 0 || c&(1<<28) == 0 {
		return false
	}
	if a, _ := xgetbv(); a&6 != 6 {
		return false
	}
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<5) != 0
}()
