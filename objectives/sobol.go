package objectives

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// This file is hand-written because no dependency of the module provides a
// Sobol sequence: gonum's stat/samplemv has the (Owen-scrambled) Halton
// sequence and Latin hypercube sampling, but not Sobol.
//
// The generator is the Gray-code construction of Antonov and Saleev (1979)
// as in Bratley and Fox, "Algorithm 659" (ACM TOMS 14, 1988), with the
// direction numbers of S. Joe and F. Y. Kuo, "Constructing Sobol sequences
// with better two-dimensional projections", SIAM J. Sci. Comput. 30 (2008)
// 2635-2654, file new-joe-kuo-6.21201 from
// https://web.maths.unsw.edu.au/~fkuo/sobol/, redistributed under this
// licence:
//
//	Copyright (c) 2008, Frances Y. Kuo and Stephen Joe
//	All rights reserved.
//
//	Redistribution and use in source and binary forms, with or without
//	modification, are permitted provided that the following conditions are
//	met:
//
//	    * Redistributions of source code must retain the above copyright
//	      notice, this list of conditions and the following disclaimer.
//
//	    * Redistributions in binary form must reproduce the above copyright
//	      notice, this list of conditions and the following disclaimer in
//	      the documentation and/or other materials provided with the
//	      distribution.
//
//	    * Neither the names of the copyright holders nor the names of the
//	      University of New South Wales and the University of Waikato
//	      and its contributors may be used to endorse or promote products
//	      derived from this software without specific prior written
//	      permission.
//
//	THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY
//	EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
//	WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
//	DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDERS BE LIABLE FOR ANY
//	DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
//	DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS
//	OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)
//	HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT,
//	STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN
//	ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
//	POSSIBILITY OF SUCH DAMAGE.
//
// The randomisation is a random linear matrix scramble followed by a random
// digital shift (Matousek, "On the L2-discrepancy for anchored boxes",
// J. Complexity 14, 1998; Owen, "Scrambling Sobol' and Niederreiter-Xing
// points", J. Complexity 14, 1998). Both are invertible GF(2)-linear (resp.
// affine) maps of the binary digits in which the first k output digits
// depend only on the first k input digits, so they preserve every
// (t, m, s)-net property of the sequence: in particular the first 2^k points
// still put exactly one point in each dyadic interval [j/2^k, (j+1)/2^k) of
// every coordinate, and each point is uniformly distributed on [0, 1)^d.

// sobolParam is one line of new-joe-kuo-6.21201: the degree s and the
// coefficients a of the primitive polynomial
// x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1 (a's bits, most significant
// first), and the initial direction numbers m_1, ..., m_s.
type sobolParam struct {
	s, a uint32
	m    []uint32
}

// sobolParams[j] holds the parameters of dimension j+2 (dimension 1 is the
// van der Corput sequence and needs none).
var sobolParams = []sobolParam{
	{1, 0, []uint32{1}},
	{2, 1, []uint32{1, 3}},
	{3, 1, []uint32{1, 3, 1}},
	{3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}},
	{4, 4, []uint32{1, 3, 5, 13}},
	{5, 2, []uint32{1, 1, 5, 5, 17}},
	{5, 4, []uint32{1, 1, 5, 5, 5}},
	{5, 7, []uint32{1, 1, 7, 11, 19}},
	{5, 11, []uint32{1, 1, 5, 1, 1}},
	{5, 13, []uint32{1, 1, 1, 3, 11}},
	{5, 14, []uint32{1, 3, 5, 5, 31}},
	{6, 1, []uint32{1, 3, 3, 9, 7, 49}},
	{6, 13, []uint32{1, 1, 1, 15, 21, 21}},
	{6, 16, []uint32{1, 3, 1, 13, 27, 49}},
	{6, 19, []uint32{1, 1, 1, 15, 7, 5}},
	{6, 22, []uint32{1, 3, 1, 15, 13, 25}},
	{6, 25, []uint32{1, 1, 5, 5, 19, 61}},
	{7, 1, []uint32{1, 3, 7, 11, 23, 15, 103}},
	{7, 4, []uint32{1, 3, 7, 13, 13, 15, 69}},
	{7, 7, []uint32{1, 1, 3, 13, 7, 35, 63}},
	{7, 8, []uint32{1, 3, 5, 9, 1, 25, 53}},
	{7, 14, []uint32{1, 3, 1, 13, 9, 35, 107}},
	{7, 19, []uint32{1, 3, 1, 5, 27, 61, 31}},
	{7, 21, []uint32{1, 1, 5, 11, 19, 41, 61}},
	{7, 28, []uint32{1, 3, 5, 3, 3, 13, 69}},
	{7, 31, []uint32{1, 1, 7, 13, 1, 19, 1}},
	{7, 32, []uint32{1, 3, 7, 5, 13, 19, 59}},
	{7, 37, []uint32{1, 1, 3, 9, 25, 29, 41}},
	{7, 41, []uint32{1, 3, 5, 13, 23, 1, 55}},
	{7, 42, []uint32{1, 3, 7, 3, 13, 59, 17}},
}

// MaxSobolDim is the largest dimension Sobol supports: dimension 1 plus
// one per line of sobolParams (the first 31 lines of new-joe-kuo-6.21201).
const MaxSobolDim = 32

// sobolBits is the number of binary digits generated per coordinate; it
// bounds the number of distinct points at 2^32.
const sobolBits = 32

// sobolDirections returns the direction numbers v_1, ..., v_32 of dimension
// dim (0-based), as 32-bit fractions (bit 31 is 1/2).
func sobolDirections(dim int) [sobolBits]uint32 {
	var v [sobolBits]uint32
	if dim == 0 {
		for k := range v {
			v[k] = 1 << (sobolBits - 1 - k)
		}
		return v
	}
	p := sobolParams[dim-1]
	s := int(p.s)
	for k := 0; k < s && k < sobolBits; k++ {
		v[k] = p.m[k] << (sobolBits - 1 - k)
	}
	// Bratley and Fox's recurrence:
	// v_k = v_(k-s) ^ (v_(k-s) >> s) ^ a_1 v_(k-1) ^ ... ^ a_(s-1) v_(k-s+1).
	for k := s; k < sobolBits; k++ {
		x := v[k-s] ^ (v[k-s] >> s)
		for j := 1; j < s; j++ {
			if (p.a>>(s-1-j))&1 == 1 {
				x ^= v[k-j]
			}
		}
		v[k] = x
	}
	return v
}

// scrambleDirections applies a random lower-triangular (in digit order,
// unit diagonal) binary matrix L to each direction number: output digit p
// is the parity of input digits 0..p selected by row p of L.
func scrambleDirections(v *[sobolBits]uint32, rng *rand.Rand) {
	var rows [sobolBits]uint32
	for p := range rows {
		// Digit p lives in bit 31-p; row p may select digits 0..p-1
		// (bits above 31-p) at random and always selects digit p.
		rows[p] = rng.Uint32()&^(1<<(sobolBits-p)-1) | 1<<(sobolBits-1-p)
	}
	for k, x := range v {
		var y uint32
		for p, row := range rows {
			y |= uint32(bits.OnesCount32(row&x)&1) << (sobolBits - 1 - p)
		}
		v[k] = y
	}
}

// sobolUnit writes the first n points of the d-dimensional Sobol sequence
// in Gray-code order into dst (n x d, values in [0, 1)). With a nil rng the
// sequence is the plain one, starting at the origin; otherwise it is
// scrambled and shifted with randomness from rng.
func sobolUnit(dst *mat.Dense, rng *rand.Rand) {
	n, d := dst.Dims()
	const scale = 1.0 / (1 << sobolBits)
	for j := 0; j < d; j++ {
		v := sobolDirections(j)
		var x uint32
		if rng != nil {
			scrambleDirections(&v, rng)
			x = rng.Uint32()
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				// Point i is the XOR of v_k over the set bits of the Gray
				// code i ^ (i>>1), which differs from that of i-1 in bit
				// trailing-zeros(i).
				x ^= v[bits.TrailingZeros64(uint64(i))]
			}
			dst.Set(i, j, float64(x)*scale)
		}
	}
}

// Sobol returns the first n points of a randomly scrambled Sobol sequence
// (Joe-Kuo direction numbers, random linear matrix scramble plus digital
// shift drawn from seed), mapped affinely onto the box. The box dimension
// may be at most MaxSobolDim. Taking n a power of two gives the best
// uniformity: the first 2^k points put exactly one point in each of the 2^k
// equal-width strata of every coordinate.
func Sobol(b Box, n int, seed uint64) (*mat.Dense, error) {
	if err := checkSize("Sobol", b, n); err != nil {
		return nil, err
	}
	d := b.Dim()
	if d > MaxSobolDim {
		return nil, fmt.Errorf("objectives: Sobol: dimension %d exceeds the %d supported", d, MaxSobolDim)
	}
	if uint64(n) > 1<<sobolBits {
		return nil, fmt.Errorf("objectives: Sobol: %d points exceed the 2^%d supported", n, sobolBits)
	}
	out := mat.NewDense(n, d, nil)
	sobolUnit(out, newRand(seed, streamSobol))
	for r := 0; r < n; r++ {
		row := out.RawRowView(r)
		for i, u := range row {
			row[i] = b.scale(i, u)
		}
	}
	return out, nil
}
