package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// rows is per-point state kept in flat slices indexed by row, as the design
// sketch asks: the points, k(x,x), an embedding row that grows one
// coordinate at a time (stride >= used coordinates, so appending a
// coordinate does not move the others), and the posterior mean and
// variance. A step of GP-UCB or BKB is a few tight loops over these slices.
type rows struct {
	d      int
	x      []float64 // n x d
	kdiag  []float64
	emb    []float64 // n x stride
	stride int
	m      int // coordinates in use
	mean   []float64
	vari   []float64
}

func (r *rows) n() int { return len(r.kdiag) }

func (r *rows) point(i int) []float64 { return r.x[i*r.d : (i+1)*r.d] }

func (r *rows) row(i int) []float64 { return r.emb[i*r.stride : i*r.stride+r.m] }

// ensureCoords makes room for m coordinates per row, re-laying out the
// embedding with a larger stride (growth x1.5) when needed.
func (r *rows) ensureCoords(m int) {
	if m <= r.stride {
		return
	}
	s := r.stride + r.stride/2
	if s < 8 {
		s = 8
	}
	if s < m {
		s = m
	}
	r.setStride(s)
}

// setStride re-lays out the embedding with stride s. It reuses the
// current buffer when it is large enough (rows move down when the stride
// shrinks, up, last row first, when it grows; one serial memmove pass), so
// compacting never allocates and a growth allocates only when the
// capacity is exhausted; a new buffer gets half as much again in spare
// capacity, so that the next growth reuses it (issue 13: no fresh
// allocation of the whole embedding per growth).
func (r *rows) setStride(s int) {
	n := r.n()
	if s < 1 {
		s = 1
	}
	need := n * s
	m := min(r.m, s)
	if cap(r.emb) >= need {
		e := r.emb[:max(need, len(r.emb))]
		if s <= r.stride {
			for i := 0; i < n; i++ {
				copy(e[i*s:i*s+m], e[i*r.stride:i*r.stride+m])
			}
		} else {
			for i := n - 1; i >= 0; i-- {
				copy(e[i*s:i*s+m], e[i*r.stride:i*r.stride+m])
			}
		}
		r.emb, r.stride = e[:need], s
		return
	}
	e := make([]float64, need, need+need/2+s)
	for i := 0; i < n; i++ {
		copy(e[i*s:i*s+m], r.emb[i*r.stride:i*r.stride+m])
	}
	r.emb, r.stride = e, s
}

// add appends a point with the given initial embedding, mean and variance.
func (r *rows) add(x []float64, kxx float64, z []float64, mean, vari float64) int {
	r.x = append(r.x, x...)
	r.kdiag = append(r.kdiag, kxx)
	if r.stride == 0 {
		r.stride = 8
	}
	r.ensureCoords(r.m)
	start := len(r.emb)
	r.emb = append(r.emb, make([]float64, r.stride)...)
	copy(r.emb[start:start+r.m], z)
	r.mean = append(r.mean, mean)
	r.vari = append(r.vari, vari)
	return r.n() - 1
}

func newRows(k kernel.Kernel, x *mat.Dense) (*rows, error) {
	n, d := x.Dims()
	r := &rows{d: d, stride: 8}
	r.x = make([]float64, 0, n*d)
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
	r.emb = make([]float64, n*r.stride)
	r.mean = make([]float64, n)
	r.vari = make([]float64, n)
	return r, nil
}

// dot is the inner product; written out (with two accumulators) because
// it is the innermost loop of every per-arm update and a BLAS call per
// arm costs more than the work for the m of a dictionary.
func dot(x, y []float64) float64 {
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
