package kernel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// maxFourierEntries caps numFeatures*inputDim, the number of stored
// frequency coordinates of a RandomFourier map (2^28 float64 = 2 GiB).
const maxFourierEntries = 1 << 28

// FourierGenerator regenerates random Fourier features (omega_j, b_j) of a
// shift-invariant kernel from a base seed and the feature index j alone,
// without storing them: the "pseudo-random seed trick" of the doubly
// stochastic gradients of Dai et al. (NIPS 2014), where a model keeps only coefficients and
// a seed and must re-draw exactly the same frequencies at prediction time.
//
// Feature j is drawn from its own PCG stream, math/rand/v2
// rand.NewPCG(seed, uint64(j)), so features can be regenerated in any order,
// in parallel and independently of each other. Within the stream the phase
// is drawn first, b_j = 2 pi U with U = Float64() in [0, 1), and then omega_j
// by k.SampleFrequency. The values therefore depend on the kernel's sampler,
// on len(omega) and on math/rand/v2's PCG, Float64 and NormFloat64 (the Go
// release pins these streams with regression tests, but does not promise
// them in its API documentation: serialised models should record the
// generator together with the seed).
//
// A FourierGenerator holds one reusable stream and is not safe for
// concurrent use; give each goroutine its own (they are cheap). Feature does
// not allocate.
type FourierGenerator struct {
	k    SpectralSampler
	seed uint64
	pcg  *rand.PCG
	rng  *rand.Rand
}

// NewFourierGenerator returns a generator of the random Fourier features of
// k keyed by seed. It reports a nil or invalid kernel.
func NewFourierGenerator(k SpectralSampler, seed uint64) (*FourierGenerator, error) {
	if err := validateSampler(k); err != nil {
		return nil, err
	}
	return newFourierGenerator(k, seed), nil
}

func newFourierGenerator(k SpectralSampler, seed uint64) *FourierGenerator {
	p := rand.NewPCG(seed, 0)
	return &FourierGenerator{k: k, seed: seed, pcg: p, rng: rand.New(p)}
}

// Kernel returns the kernel whose features g generates.
func (g *FourierGenerator) Kernel() SpectralSampler { return g.k }

// Seed returns the base seed of g.
func (g *FourierGenerator) Seed() uint64 { return g.seed }

// Feature writes the frequency omega_j of feature j into omega (whose length
// is the input dimension) and returns its phase b_j in [0, 2 pi). It panics
// if j is negative or omega is empty.
func (g *FourierGenerator) Feature(j int, omega []float64) (b float64) {
	if j < 0 {
		panic(fmt.Sprintf("kernel: negative feature index %d", j))
	}
	if len(omega) == 0 {
		panic("kernel: empty frequency buffer")
	}
	g.pcg.Seed(g.seed, uint64(j))
	b = 2 * math.Pi * g.rng.Float64()
	g.k.SampleFrequency(omega, g.rng)
	return b
}

// FourierFeature regenerates feature j of the random Fourier features of k
// with base seed: it writes omega_j into omega and returns the phase b_j.
// It gives exactly the frequencies and phases of NewRandomFourier(k,
// len(omega), D, seed) for every D > j, and of FourierGenerator.Feature. It
// allocates a fresh stream per call; regenerate many features with a
// FourierGenerator instead. It panics on a nil kernel, a negative j or an
// empty omega.
func FourierFeature(k SpectralSampler, seed uint64, j int, omega []float64) (b float64) {
	if k == nil {
		panic("kernel: nil kernel")
	}
	return newFourierGenerator(k, seed).Feature(j, omega)
}

func validateSampler(k SpectralSampler) error {
	if k == nil {
		return errors.New("kernel: nil spectral sampler")
	}
	if err := Validate(k); err != nil {
		return err
	}
	if err := checkPositive("kernel scale k(x, x)", k.Scale()); err != nil {
		return err
	}
	return nil
}

// RandomFourier is the random Fourier feature map of a shift-invariant
// kernel k (Rahimi and Recht; Bochner's theorem, Theorem 2 of Dai et al. (NIPS 2014)):
//
//	phi_j(x) = sqrt(2 k.Scale() / D) cos(omega_j . x + b_j),  j = 0..D-1,
//
// with omega_j drawn from k's normalised spectral measure and b_j ~ U[0, 2 pi),
// so that E[phi(x).phi(y)] = k(x, y) and the error of phi(x).phi(y) decays as
// O(1/sqrt(D)). The features are those of FourierFeature(k, seed, j, .), so a
// map can be rebuilt from (k, inputDim, D, seed) alone. A RandomFourier is
// immutable and safe for concurrent use; Map does not allocate.
type RandomFourier struct {
	k     SpectralSampler
	seed  uint64
	d     int
	omega []float64 // D x d, row j is omega_j
	phase []float64 // b_j
	scale float64   // sqrt(2 k.Scale() / D)
}

// NewRandomFourier draws numFeatures random Fourier features of k for
// inputs of dimension inputDim from the per-feature streams of seed (see
// FourierGenerator). It reports a nil or invalid kernel, a non-positive
// dimension or feature count, and maps with more than 2^28 stored
// frequency coordinates.
func NewRandomFourier(k SpectralSampler, inputDim, numFeatures int, seed uint64) (*RandomFourier, error) {
	if err := validateSampler(k); err != nil {
		return nil, err
	}
	if inputDim < 1 {
		return nil, fmt.Errorf("kernel: random Fourier input dimension must be >= 1, got %d", inputDim)
	}
	if numFeatures < 1 {
		return nil, fmt.Errorf("kernel: random Fourier feature count must be >= 1, got %d", numFeatures)
	}
	if numFeatures > maxFourierEntries/inputDim {
		return nil, fmt.Errorf("kernel: %d random Fourier features of dimension %d exceed the cap of %d stored coordinates",
			numFeatures, inputDim, maxFourierEntries)
	}
	rf := &RandomFourier{
		k:     k,
		seed:  seed,
		d:     inputDim,
		omega: make([]float64, numFeatures*inputDim),
		phase: make([]float64, numFeatures),
		scale: math.Sqrt(2 * k.Scale() / float64(numFeatures)),
	}
	g := newFourierGenerator(k, seed)
	for j := range rf.phase {
		rf.phase[j] = g.Feature(j, rf.omega[j*inputDim:(j+1)*inputDim])
	}
	return rf, nil
}

// InputDim returns the dimension of the inputs.
func (rf *RandomFourier) InputDim() int { return rf.d }

// Dim returns the number of features D.
func (rf *RandomFourier) Dim() int { return len(rf.phase) }

// Seed returns the base seed the features were drawn from.
func (rf *RandomFourier) Seed() uint64 { return rf.seed }

// Kernel returns the kernel that rf approximates.
func (rf *RandomFourier) Kernel() SpectralSampler { return rf.k }

// Frequency copies omega_j into omega, which must have length InputDim(),
// and returns the phase b_j.
func (rf *RandomFourier) Frequency(j int, omega []float64) (b float64) {
	if len(omega) != rf.d {
		panic(fmt.Sprintf("kernel: frequency buffer has length %d, want %d", len(omega), rf.d))
	}
	copy(omega, rf.omega[j*rf.d:(j+1)*rf.d])
	return rf.phase[j]
}

// Map writes phi(x) into dst. It panics if len(x) != InputDim() or
// len(dst) != Dim().
func (rf *RandomFourier) Map(dst, x []float64) {
	if len(x) != rf.d {
		panic(fmt.Sprintf("kernel: dimension mismatch %d != %d", len(x), rf.d))
	}
	if len(dst) != len(rf.phase) {
		panic(fmt.Sprintf("kernel: destination has length %d, want %d", len(dst), len(rf.phase)))
	}
	d := rf.d
	for j, b := range rf.phase {
		w := rf.omega[j*d : j*d+d]
		s := b
		for i, v := range w {
			s += v * x[i]
		}
		dst[j] = rf.scale * math.Cos(s)
	}
}
