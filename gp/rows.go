package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// rows is per-point state kept in flat slices indexed by row, as the design
// sketch asks: the points, k(x,x), an embedding row that grows one
// coordinate at a time, and the posterior mean and variance. A step of
// GP-UCB or BKB is a few tight loops over these slices.
//
// The embedding is stored in column blocks of blockW coordinates: block b
// holds coordinates [b*blockW, (b+1)*blockW) of every row, row-major
// (n x blockW). Appending a coordinate writes into the last block; when
// it is full a new block is allocated. Nothing is ever re-laid out, so
// a growing dictionary (or a growing exact GP) costs no copy of the table
// and no second buffer: the memory is n x blockW x ceil(m/blockW) floats,
// within blockW-1 coordinates per row of the embedding itself (issue 13:
// peak memory within 1.5x the embedding; before, a flat table with spare
// capacity was re-laid out, with both buffers alive, at every 1.5x
// growth). A pass over the rows reads each block sequentially: a few
// streams of 256-byte runs, which the hardware prefetchers follow.
type rows struct {
	d      int
	x      []float64 // n x d
	kdiag  []float64
	blocks [][]float64 // coordinate blocks, n x blockW each
	m      int         // coordinates in use
	mean   []float64
	vari   []float64
}

// blockW is the number of coordinates per column block: 32 float64s are
// four cache lines per row and block.
const blockW = 32

func (r *rows) n() int { return len(r.kdiag) }

func (r *rows) point(i int) []float64 { return r.x[i*r.d : (i+1)*r.d] }

// load copies the first m coordinates of row j into dst (len >= m) and
// returns dst[:m].
func (r *rows) load(dst []float64, j, m int) []float64 {
	dst = dst[:m]
	for b := 0; b*blockW < m; b++ {
		w := min(blockW, m-b*blockW)
		copy(dst[b*blockW:b*blockW+w], r.blocks[b][j*blockW:j*blockW+w])
	}
	return dst
}

// store copies src (the first len(src) coordinates) into row j.
func (r *rows) store(j int, src []float64) {
	m := len(src)
	for b := 0; b*blockW < m; b++ {
		w := min(blockW, m-b*blockW)
		copy(r.blocks[b][j*blockW:j*blockW+w], src[b*blockW:b*blockW+w])
	}
}

// dotRow returns v . z_j over the first len(v) coordinates of row j,
// reading the row in place.
func (r *rows) dotRow(j int, v []float64) float64 {
	m := len(v)
	var s float64
	for b := 0; b*blockW < m; b++ {
		w := min(blockW, m-b*blockW)
		s += dot(v[b*blockW:b*blockW+w], r.blocks[b][j*blockW:j*blockW+w])
	}
	return s
}

// axpyRow adds alpha * z_j (its first len(dst) coordinates) to dst,
// reading the row in place.
func (r *rows) axpyRow(dst []float64, alpha float64, j int) {
	m := len(dst)
	for b := 0; b*blockW < m; b++ {
		w := min(blockW, m-b*blockW)
		d, z := dst[b*blockW:b*blockW+w], r.blocks[b][j*blockW:j*blockW+w]
		for i, v := range z {
			d[i] += alpha * v
		}
	}
}

// set writes coordinate c of row j.
func (r *rows) set(j, c int, v float64) { r.blocks[c/blockW][j*blockW+c%blockW] = v }

// ensureCoords makes room for m coordinates per row: new blocks are
// allocated as needed; nothing moves.
func (r *rows) ensureCoords(m int) {
	for len(r.blocks)*blockW < m {
		r.blocks = append(r.blocks, make([]float64, r.n()*blockW))
	}
}

// trimBlocks frees blocks beyond the one after the last in use (one spare
// is kept so that a dictionary oscillating around a block boundary does
// not allocate).
func (r *rows) trimBlocks() {
	need := (r.m+blockW-1)/blockW + 1
	for len(r.blocks) > need {
		r.blocks[len(r.blocks)-1] = nil
		r.blocks = r.blocks[:len(r.blocks)-1]
	}
}

// add appends a point with the given initial embedding (len r.m), mean
// and variance.
func (r *rows) add(x []float64, kxx float64, z []float64, mean, vari float64) int {
	r.x = append(r.x, x...)
	r.kdiag = append(r.kdiag, kxx)
	r.mean = append(r.mean, mean)
	r.vari = append(r.vari, vari)
	j := r.n() - 1
	for b := range r.blocks {
		r.blocks[b] = append(r.blocks[b], make([]float64, blockW)...)
	}
	r.ensureCoords(r.m)
	r.store(j, z[:r.m])
	return j
}

func newRows(k kernel.Kernel, x *mat.Dense) (*rows, error) {
	n, d := x.Dims()
	r := &rows{d: d}
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
