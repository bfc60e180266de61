package online

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// SyntheticSpec is a generated regression stream of any dimension, for
// testing the learners on data nobody tuned them for:
//
//	friedman:d=16   Friedman's function #1 (Friedman 1991, MARS paper):
//	                y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + noise,
//	                x uniform on [0, 1]^d, d >= 5 (the other d - 5 inputs are
//	                irrelevant);
//	gp:d=8          a sample of a zero-mean GP prior with the Gaussian kernel of
//	                width ls = sqrt(d)/2 on x uniform in [-1, 1]^d (about the
//	                median distance / 1.6), drawn as
//	                f(x) = sqrt(2/D) sum_i a_i cos(omega_i.x + b_i) with D = 2000
//	                random Fourier features (a ~ N(0, 1), omega ~ N(0, I/ls^2),
//	                b ~ U[0, 2 pi)), whose covariance tends to the kernel as D
//	                grows (Rahimi and Recht 2007); noise is added to f;
//	relevant:d=32:k=3
//	                the same GP-prior sample, of width sqrt(k)/2, on k of the d
//	                inputs (drawn from the seed, see Relevant); the other d - k
//	                inputs are uniform in [-1, 1] and do not affect y: a stream
//	                on which only per-input relevance (ARD) finds the inputs
//	                that matter.
type SyntheticSpec struct {
	Kind string // "friedman", "gp" or "relevant"
	Dim  int
	// K is the number of inputs that matter (relevant only; default 3).
	K int
}

// ParseSyntheticSpec parses "friedman[:d=D]", "gp[:d=D]" (default d = 8)
// or "relevant[:d=D][:k=K]" (default d = 32, k = 3). ok is false when name
// is none of these kinds (an objective of package objectives, say).
func ParseSyntheticSpec(name string) (spec SyntheticSpec, ok bool, err error) {
	parts := strings.Split(name, ":")
	switch parts[0] {
	case "friedman", "gp":
		spec = SyntheticSpec{Kind: parts[0], Dim: 8}
	case "relevant":
		spec = SyntheticSpec{Kind: parts[0], Dim: 32, K: 3}
	default:
		return SyntheticSpec{}, false, nil
	}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		if k != "d" && (k != "k" || spec.Kind != "relevant") {
			want := "d=<dimension>"
			if spec.Kind == "relevant" {
				want = "d=<dimension> or k=<relevant inputs>"
			}
			return spec, true, fmt.Errorf("online: synthetic %s: unknown parameter %q (want %s)", parts[0], kv, want)
		}
		n, e := strconv.Atoi(v)
		if e != nil || n < 1 || n > 10000 {
			what := "dimension"
			if k == "k" {
				what = "number of relevant inputs"
			}
			return spec, true, fmt.Errorf("online: synthetic %s: bad %s %q", parts[0], what, v)
		}
		if k == "d" {
			spec.Dim = n
		} else {
			spec.K = n
		}
	}
	if spec.Kind == "relevant" && spec.K > spec.Dim {
		return spec, true, fmt.Errorf("online: synthetic relevant: k = %d relevant inputs of only d = %d", spec.K, spec.Dim)
	}
	if spec.Kind == "friedman" && spec.Dim < 5 {
		return spec, true, fmt.Errorf("online: synthetic friedman needs d >= 5, got %d", spec.Dim)
	}
	return spec, true, nil
}

// Generate draws n examples with Gaussian noise of standard deviation noise
// from seed. The GP sample itself (its frequencies) depends on seed too.
func (s SyntheticSpec) Generate(n int, noise float64, seed uint64) (*Dataset, error) {
	if n < 1 {
		return nil, fmt.Errorf("online: synthetic stream needs n >= 1, got %d", n)
	}
	if !(noise >= 0) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("online: noise must be finite and >= 0, got %v", noise)
	}
	d := s.Dim
	rng := rand.New(rand.NewPCG(seed, 0x5e7))
	name := fmt.Sprintf("%s:d=%d", s.Kind, d)
	if s.Kind == "relevant" {
		name += fmt.Sprintf(":k=%d", s.K)
	}
	ds := &Dataset{Name: name, N: n, D: d, Task: Regression,
		X: make([]float64, n*d), Y: make([]float64, n)}
	var f func(x []float64) float64
	switch s.Kind {
	case "friedman":
		f = func(x []float64) float64 {
			return 10*math.Sin(math.Pi*x[0]*x[1]) + 20*(x[2]-0.5)*(x[2]-0.5) + 10*x[3] + 5*x[4]
		}
	case "gp", "relevant":
		const D = 2000
		rel := s.Relevant(seed)
		if s.Kind == "gp" {
			rel = nil
		}
		dg := d // the dimension of the GP sample
		if rel != nil {
			dg = len(rel)
		}
		ls := math.Sqrt(float64(dg)) / 2
		om := make([]float64, D*dg)
		for i := range om {
			om[i] = rng.NormFloat64() / ls
		}
		a, b := make([]float64, D), make([]float64, D)
		for i := range a {
			a[i] = rng.NormFloat64()
			b[i] = 2 * math.Pi * rng.Float64()
		}
		c := math.Sqrt(2.0 / D)
		z := make([]float64, dg)
		f = func(x []float64) float64 {
			if rel != nil {
				for i, j := range rel {
					z[i] = x[j]
				}
			} else {
				z = x
			}
			var s float64
			for i := 0; i < D; i++ {
				s += a[i] * math.Cos(dot(om[i*dg:(i+1)*dg], z)+b[i])
			}
			return c * s
		}
	default:
		return nil, fmt.Errorf("online: unknown synthetic stream %q", s.Kind)
	}
	for i := 0; i < n; i++ {
		x := ds.Row(i)
		for j := range x {
			if s.Kind != "friedman" {
				x[j] = 2*rng.Float64() - 1
			} else {
				x[j] = rng.Float64()
			}
		}
		ds.Y[i] = f(x) + noise*rng.NormFloat64()
	}
	return ds, nil
}

// Relevant returns the inputs that matter, in increasing order: the first
// five for friedman, all d for gp, and for relevant k inputs drawn without
// replacement from seed (a stream of the same seed uses them).
func (s SyntheticSpec) Relevant(seed uint64) []int {
	switch s.Kind {
	case "friedman":
		return []int{0, 1, 2, 3, 4}
	case "relevant":
		rng := rand.New(rand.NewPCG(seed, 0x4e1e))
		rel := rng.Perm(s.Dim)[:s.K]
		slices.Sort(rel)
		return rel
	}
	rel := make([]int, s.Dim)
	for i := range rel {
		rel[i] = i
	}
	return rel
}
