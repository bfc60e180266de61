package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/internal/chol"

	"github.com/bkb-go/bkb/kernel"
)

// rows is per-point state kept in flat slices indexed by row, as the design
// sketch asks: the points, k(x,x), an embedding row that grows one
// coordinate at a time, and the posterior mean and variance. A step of
// GP-UCB or BKB is a few tight loops over these slices.
//
// The embedding rows are row-major with a common stride (>= the
// coordinates in use, so appending a coordinate moves nothing), stored in
// chunks of about chunkFloats numbers each, so that a pass reads one
// sequential stream per chunk. When the stride changes (growth x1.5 when
// the spare capacity runs out, compaction to the exact width once S is
// stable), the rows are copied chunk by chunk into new chunks, and every
// old chunk, once all its rows are copied, is reused as a new one: the
// re-layout never holds two copies of the table, only the new table plus
// one chunk (no fresh allocation of the whole embedding per
// growth, and peak memory near the embedding itself). A column-block
// layout, which never re-lays out at all, was measured 1.6-2.9x slower on
// the per-observation pass (many concurrent streams) and rejected.
type rows struct {
	d      int
	x      []float64 // n x d
	kdiag  []float64
	chunks [][]float64 // rpc rows of stride numbers each (the last may be shorter)
	spare  [][]float64 // full-size chunks kept for the next re-layout
	stride int
	rpc    int // rows per chunk
	m      int // coordinates in use
	mean   []float64
	vari   []float64
}

// chunkFloats is the size of an embedding chunk: 4 MB, large enough that
// a pass streams, small enough that the re-layout's spare chunk is cheap.
const chunkFloats = 1 << 19

func (r *rows) n() int { return len(r.kdiag) }

func (r *rows) point(i int) []float64 { return r.x[i*r.d : (i+1)*r.d] }

// slot returns row j's storage, of length stride.
func (r *rows) slot(j int) []float64 {
	c, o := j/r.rpc, (j%r.rpc)*r.stride
	return r.chunks[c][o : o+r.stride : o+r.stride]
}

// load copies the first m coordinates of row j into dst (len >= m) and
// returns dst[:m].
func (r *rows) load(dst []float64, j, m int) []float64 {
	dst = dst[:m]
	copy(dst, r.slot(j)[:m])
	return dst
}

// store copies src into the first len(src) coordinates of row j.
func (r *rows) store(j int, src []float64) { copy(r.slot(j)[:len(src)], src) }

// dotRow returns v . z_j over the first len(v) coordinates of row j.
func (r *rows) dotRow(j int, v []float64) float64 { return chol.Dot(v, r.slot(j)[:len(v)]) }

// axpyRow adds alpha * z_j (its first len(dst) coordinates) to dst.
func (r *rows) axpyRow(dst []float64, alpha float64, j int) {
	chol.Axpy(alpha, r.slot(j)[:len(dst)], dst)
}

// set writes coordinate c of row j.
func (r *rows) set(j, c int, v float64) { r.slot(j)[c] = v }

// ensureCoords makes room for m coordinates per row, re-laying out the
// rows with a larger stride when needed: by an eighth, and to at least
// m + 2 slack(m), which compact leaves alone. (Growth by a half, then a
// quarter, left spare capacity that compact removed 8 quiet steps later,
// so that S growing by a point every few steps paid a copy of the table
// twice every few points; and the spare capacity is heap beyond the
// embedding, which must stay within 1.5 times it.)
func (r *rows) ensureCoords(m int) {
	if m <= r.stride {
		return
	}
	r.setStride(max(m+2*slack(m), r.stride+r.stride/8, 8))
}

// slack is the spare capacity that a compacted row keeps: a few more
// points can enter S without a re-layout. Compacting to the exact width
// made every point entering S after a quiet spell cost two copies of the
// table (grow, then compact again 8 steps later), 3-4 passes over the
// embedding on a step that should cost about one; a gap of a sixteenth
// costs a pass about that much more bandwidth.
func slack(m int) int { return max(4, m/16) }

// compact re-lays out the rows with stride m + slack(m) when the spare
// capacity is more than twice that.
func (r *rows) compact() {
	if r.m > 0 && r.stride > r.m+2*slack(r.m) {
		r.setStride(r.m + slack(r.m))
	}
}

// setStride re-lays out the rows with stride s, copying the first
// min(m, s) coordinates of each, chunk by chunk, recycling the old chunks.
func (r *rows) setStride(s int) {
	n := r.n()
	rpc := max(1, chunkFloats/s)
	old, oldRPC, oldStride := r.chunks, r.rpc, r.stride
	w := min(r.m, s)
	free := r.spare // full-size chunks left over by earlier re-layouts
	var out [][]float64
	var cur []float64
	for j := 0; j < n; j++ {
		if j%rpc == 0 {
			size := min(rpc, n-j) * s
			cur = nil
			for k, f := range free {
				if cap(f) >= size {
					cur = f[:size]
					free = append(free[:k], free[k+1:]...)
					break
				}
			}
			if cur == nil {
				c := size
				if size == rpc*s {
					c = max(size, chunkFloats) // full chunks are interchangeable
				}
				cur = make([]float64, size, c)
			}
			out = append(out, cur)
		}
		if oldStride > 0 {
			c, o := j/oldRPC, (j%oldRPC)*oldStride
			copy(cur[(j%rpc)*s:(j%rpc)*s+w], old[c][o:o+w])
			if (j+1)%oldRPC == 0 || j == n-1 {
				free = append(free, old[c])
				old[c] = nil
			}
		}
	}
	// Chunks not reused (the table shrank, or rounding) are kept for the
	// next growth rather than left to the garbage collector, which with
	// few allocations runs rarely: the heap stays within the largest
	// table so far plus one chunk.
	r.spare = r.spare[:0]
	for _, f := range free {
		if cap(f) >= chunkFloats {
			r.spare = append(r.spare, f[:0])
		}
	}
	r.chunks, r.rpc, r.stride = out, rpc, s
}

// add appends a point with the given initial embedding (len r.m), mean
// and variance.
func (r *rows) add(x []float64, kxx float64, z []float64, mean, vari float64) int {
	if r.stride == 0 {
		r.setStride(max(r.m, 8))
	}
	r.x = append(r.x, x...)
	r.kdiag = append(r.kdiag, kxx)
	r.mean = append(r.mean, mean)
	r.vari = append(r.vari, vari)
	j := r.n() - 1
	if j%r.rpc == 0 {
		r.chunks = append(r.chunks, make([]float64, r.stride, min(r.rpc, 64)*r.stride))
	} else {
		c := &r.chunks[len(r.chunks)-1]
		*c = append(*c, make([]float64, r.stride)...)
	}
	r.store(j, z[:r.m])
	return j
}

func newRows(k kernel.Kernel, x *mat.Dense) (*rows, error) {
	n, d := x.Dims()
	r := &rows{d: d}
	r.x = make([]float64, 0, n*d)
	defer r.setStride(8)
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		p := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("gp: candidate %d coordinate %d is %v", i, j, v)
			}
		}
		r.x = append(r.x, p...)
	}
	r.kdiag = make([]float64, n)
	for i := range r.kdiag {
		r.kdiag[i] = kernel.Diag(k, r.point(i))
	}
	r.mean = make([]float64, n)
	r.vari = make([]float64, n)
	return r, nil
}

func checkPoint(x []float64, d int) error {
	if len(x) != d {
		return fmt.Errorf("gp: point has dimension %d, want %d", len(x), d)
	}
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("gp: point coordinate %d is %v", j, v)
		}
	}
	return nil
}

// MaxAbsValue is the largest magnitude of an observed value. Posterior
// means sum observed values (weighted by counts and by embeddings up to
// 1/sqrt(lambda)), so values near the float64 range (1e308) overflow to
// +Inf after a few observations; 1e100 leaves room for 1e100 times that
// and is far beyond any reward that is not a units mistake.
const MaxAbsValue = 1e100

func checkValue(y float64) error {
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("gp: observed value is %v", y)
	}
	if math.Abs(y) > MaxAbsValue {
		return fmt.Errorf("gp: observed value %g is beyond +-%g: the posterior sums would overflow; rescale the values", y, MaxAbsValue)
	}
	return nil
}

// dot2 returns a.z and b.z reading z once: passes over the embedding are
// memory-bound, so fusing their inner products halves their cost.
func dot2(a, b, z []float64) (float64, float64) {
	a, b = a[:len(z)], b[:len(z)]
	var s0, s1, t0, t1 float64
	i := 0
	for ; i+1 < len(z); i += 2 {
		z0, z1 := z[i], z[i+1]
		s0 += a[i] * z0
		s1 += a[i+1] * z1
		t0 += b[i] * z0
		t1 += b[i+1] * z1
	}
	if i < len(z) {
		s0 += a[i] * z[i]
		t0 += b[i] * z[i]
	}
	return s0 + s1, t0 + t1
}

// dot3 returns a.z, b.z and c.z reading z once.
func dot3(a, b, c, z []float64) (float64, float64, float64) {
	a, b, c = a[:len(z)], b[:len(z)], c[:len(z)]
	var s, t, u float64
	for i, v := range z {
		s += a[i] * v
		t += b[i] * v
		u += c[i] * v
	}
	return s, t, u
}

// dot is the inner product of the per-arm updates outside the batched
// kernels: chol.DotScalar, whose rounding does not depend on the CPU.
func dot(x, y []float64) float64 { return chol.DotScalar(x, y) }
