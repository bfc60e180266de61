package online

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
	"gonum.org/v1/gonum/mat"
)

// FORKSConfig configures FORKS (Wen et al., IJCAI 2024). The paper's Table 1 settings for
// N <= 10000 are Budget 50, Sp 50, Sm 10, Rank 5, Rho floor(0.3 N), Alpha
// 0.01, Sigma 0.5, EtaKOGD 0.2 (see PaperFORKS).
type FORKSConfig struct {
	Kernel kernel.Kernel
	Dim    int
	Loss   Loss
	// Budget B: stage 1 collects B support vectors (examples with nonzero
	// loss) by kernel OGD before the sketches are initialized.
	Budget int
	// Sp is the SJLT sketch size s_p, Sm the number of landmarks s_m
	// (sampled uniformly from the B support vectors), Rank the TISVD rank k.
	Sp, Sm, Rank int
	// Blocks is the number D of SJLT blocks (nonzeros per row); the paper's
	// "d = 1" is D = 1, CountSketch. Sp must be a multiple of Blocks.
	Blocks int
	// Rho is the update cycle: every Rho rounds after the buffer fills, the
	// current point enters the sketches (Eq. 11) and TISVD refreshes the map.
	Rho int
	// Alpha is the ONS regularization, A starts (and restarts) at Alpha I.
	Alpha float64
	// Sigma and EtaONS are the ONS weights: A += (Sigma + EtaONS) g g^T.
	Sigma, EtaONS float64
	// C is the slab width of the projection h(z) (Eq. 10), not given in the
	// paper; 0 means +Inf (no projection).
	C float64
	// EtaKOGD is the stage-1 kernel OGD step (0.2).
	EtaKOGD float64
	// MaxStored caps the number mu of sketched points (the paper's buffer
	// B~ = 2B, whose semantics the paper leaves open); 0 means no cap. Once
	// reached, update rounds still reset the ONS state but add no point.
	MaxStored int
	// FullDecomposition recomputes the rank-k eigendecomposition of the
	// (stored) Phi_pp from scratch at every update round instead of TISVD,
	// the "standard SVD" of the paper's Fig. 2.
	FullDecomposition bool
	// Seed drives the hashes and the landmark choice.
	Seed uint64
}

// PaperFORKS returns the Table 1 configuration of Wen et al. (IJCAI 2024) for a stream
// of length n (n <= 10000: B = 50; otherwise B = 100), with s_p = B,
// s_m = 0.2 s_p, k = 0.1 B, rho = floor(0.3 n), alpha = 0.01, sigma_i = 0.5,
// eta_i = 0, eta = 0.2, D = 1 and the hinge loss; C = 1 (not in the paper).
func PaperFORKS(k kernel.Kernel, dim, n int, seed uint64) FORKSConfig {
	b := 50
	if n > 10000 {
		b = 100
	}
	return FORKSConfig{
		Kernel: k, Dim: dim, Loss: Hinge,
		Budget: b, Sp: b, Sm: b / 5, Rank: b / 10, Blocks: 1,
		Rho: max(1, int(0.3*float64(n))), Alpha: 0.01, Sigma: 0.5,
		C: 1, EtaKOGD: 0.2, Seed: seed,
	}
}

// AdversarialFORKS returns the Section 5.2 configuration of Wen et al. (IJCAI 2024) for a
// block stream of length n: B = 200, s_p = 0.75 B = 150, s_m = 30,
// k = 20, rho = floor(0.005 (n - B)).
func AdversarialFORKS(k kernel.Kernel, dim, n int, seed uint64) FORKSConfig {
	c := PaperFORKS(k, dim, n, seed)
	c.Budget, c.Sp, c.Sm, c.Rank = 200, 150, 30, 20
	c.Rho = max(1, int(0.005*float64(n-200)))
	return c
}

func (c *FORKSConfig) validate() error {
	if err := kernel.Validate(c.Kernel); err != nil {
		return err
	}
	if err := c.Loss.valid(); err != nil {
		return err
	}
	if c.Blocks == 0 {
		c.Blocks = 1
	}
	switch {
	case c.Dim < 1:
		return fmt.Errorf("online: FORKS dimension %d < 1", c.Dim)
	case c.Budget < 1 || c.Sp < 1 || c.Sm < 1 || c.Rank < 1 || c.Rho < 1:
		return fmt.Errorf("online: FORKS needs B, s_p, s_m, k, rho >= 1, got %d, %d, %d, %d, %d",
			c.Budget, c.Sp, c.Sm, c.Rank, c.Rho)
	case c.Sm > c.Budget:
		return fmt.Errorf("online: FORKS s_m = %d exceeds the budget %d", c.Sm, c.Budget)
	case c.Rank > c.Sp:
		return fmt.Errorf("online: FORKS rank k = %d exceeds s_p = %d", c.Rank, c.Sp)
	case c.Blocks < 1 || c.Sp%c.Blocks != 0:
		return fmt.Errorf("online: FORKS s_p = %d is not a multiple of D = %d", c.Sp, c.Blocks)
	case c.MaxStored != 0 && c.MaxStored < c.Budget:
		return fmt.Errorf("online: FORKS cap %d below the budget %d", c.MaxStored, c.Budget)
	}
	if err := positive("ONS alpha", c.Alpha); err != nil {
		return err
	}
	if !(c.Sigma+c.EtaONS > 0) || c.Sigma < 0 || c.EtaONS < 0 {
		return fmt.Errorf("online: FORKS needs sigma_i, eta_i >= 0 with a positive sum, got %v, %v", c.Sigma, c.EtaONS)
	}
	if !(c.C >= 0) {
		return fmt.Errorf("online: FORKS slab width C must be >= 0, got %v", c.C)
	}
	return positive("KOGD step eta", c.EtaKOGD)
}

// FORKS is the Fast second-Order online kernel learner with incremental
// sketching and decomposition of Wen et al. (IJCAI 2024) (Algorithm 1):
//
//   - Stage 1 runs kernel OGD and stores the examples with nonzero loss
//     until there are B of them.
//   - Then the sketches Phi_pp = S_p^T K S_p and Phi_pm = S_p^T K S_m of the
//     B points are formed (Eq. 3; S_p an SJLT, S_m a column sampling of s_m
//     landmarks) with a rank-k eigendecomposition Phi_pp ~ V Sigma V^T, and
//     the feature map phi(x) = Z^T k_m(x), Z = pinv(Phi_pm) V Sigma^{1/2}
//     (Section 3.2).
//   - Stage 2 runs the online Newton step with the slab projection of
//     Eq. 10, A_t = Alpha I + sum (sigma_i + eta_i) g_i g_i^T held as a
//     Cholesky factor. Every Rho rounds, x_t enters the sketches by the
//     rank-one updates of Eq. 11, TISVD (Algorithm 2, Eqs. 6-9) refreshes
//     V, Sigma and the map, and A, w are reset.
//
// TISVD is done in its symmetric form (the implementation notes on Wen et al. (IJCAI 2024) trick T5): Phi_pp is
// symmetric and its update Delta1 Delta2^T of Eq. 12 equals Delta M Delta^T
// with Delta = [s_p, u] and M = [[kappa_nn, 1], [1, 0]], so one basis V is
// kept (orthogonalized by a rank-revealing Gram-Schmidt, pitfall 6) and the
// (k+2) x (k+2) core is eigendecomposed.
//
// Predictions: the prediction at round t is made with the model of round
// t-1; a map refreshed at round t is used from round t+1 on (the
// phi_{t+2} indexing of Eq. 5; the implementation notes on Wen et al. (IJCAI 2024) Section 3.2 remarks).
type FORKS struct {
	cfg FORKSConfig
	rng *rand.Rand
	t   int

	supportVectors // stage 1

	// stage 2
	stage2  bool
	t0      int
	xs      []float64 // sketched points, mu x d
	bucket  []int32   // mu x D bucket (column of S_p)
	sgn     []float64 // mu x D sign / sqrt(D)
	land    []int     // landmark indices into xs
	pm      []float64 // Phi_pm, s_p x s_m
	pp      []float64 // Phi_pp, s_p x s_p (kept for FullDecomposition and checks)
	v       []float64 // V, s_p x k (row-major)
	sig     []float64 // Sigma, k
	z       []float64 // Z, s_m x k
	updates int

	// ONS state
	af   chol.Factor
	w    []float64
	vv   []float64 // pending iterate v_{t+1}
	km   []float64
	phi  []float64
	q    []float64
	psi  []float64
	zero []float64
}

// NewFORKS returns FORKS.
func NewFORKS(cfg FORKSConfig) (*FORKS, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &FORKS{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0xf0)),
		zero: make([]float64, cfg.Rank)}, nil
}

// Name returns "forks".
func (f *FORKS) Name() string { return "forks" }

// Size returns the number of support vectors in stage 1 and the number mu
// of sketched points in stage 2.
func (f *FORKS) Size() int {
	if f.stage2 {
		return len(f.xs) / f.cfg.Dim
	}
	return len(f.a)
}

// Updates returns the number of TISVD update rounds so far.
func (f *FORKS) Updates() int { return f.updates }

// Features returns the current feature map phi(x) (nil in stage 1).
func (f *FORKS) Features(x []float64) []float64 {
	if !f.stage2 {
		return nil
	}
	f.features(x)
	return slices.Clone(f.phi)
}

func (f *FORKS) features(x []float64) {
	d, k := f.cfg.Dim, f.cfg.Rank
	for j, i := range f.land {
		f.km[j] = f.cfg.Kernel.Eval(f.xs[i*d:(i+1)*d], x)
	}
	clear(f.phi)
	for j, kv := range f.km {
		axpy(kv, f.z[j*k:(j+1)*k], f.phi)
	}
}

func (f *FORKS) clip(y float64) float64 {
	if f.cfg.C == 0 {
		return y
	}
	return math.Max(-f.cfg.C, math.Min(f.cfg.C, y))
}

// Predict returns the score f_t(x_t) = phi(x)^T w_t, where w_t is the
// A-norm projection of v_t onto the slab |phi(x)^T w| <= C, so that the
// score is clip(phi(x)^T v_t, -C, C).
func (f *FORKS) Predict(x []float64) float64 {
	if !f.stage2 {
		return f.kogd(f.cfg.Kernel, f.cfg.Dim, x)
	}
	f.features(x)
	return f.clip(dot(f.phi, f.vv))
}

// Learn performs round t.
func (f *FORKS) Learn(x []float64, y float64) error {
	if err := checkDim(x, f.cfg.Dim); err != nil {
		return err
	}
	f.t++
	if !f.stage2 {
		if f.kogdStep(f.cfg.Kernel, f.cfg.Dim, f.cfg.Loss, f.cfg.EtaKOGD, f.cfg.Budget, x, y) {
			return f.initSketch()
		}
		return nil
	}
	f.features(x)
	// Lazy projection of v onto the slab of this round (Eq. 10, line 2).
	f.w = append(f.w[:0], f.vv...)
	if f.cfg.C > 0 {
		zv := dot(f.phi, f.vv)
		if h := math.Copysign(math.Max(math.Abs(zv)-f.cfg.C, 0), zv); h != 0 {
			f.q = append(f.q[:0], f.phi...)
			f.af.Solve(f.q)
			if den := dot(f.phi, f.q); den > 0 {
				axpy(-h/den, f.q, f.w)
			}
		}
	}
	score := dot(f.phi, f.w)
	g := f.cfg.Loss.Deriv(score, y)
	f.vv = append(f.vv[:0], f.w...)
	if g != 0 {
		// A += c g g^T with g = l' phi, then v = w - A^{-1} g.
		s := math.Sqrt(f.cfg.Sigma+f.cfg.EtaONS) * g
		f.q = f.q[:0]
		for _, p := range f.phi {
			f.q = append(f.q, s*p)
		}
		f.af.RankOneUpdate(f.q)
		f.q = append(f.q[:0], f.phi...)
		f.af.Solve(f.q)
		axpy(-g, f.q, f.vv)
	}
	if (f.t-f.t0)%f.cfg.Rho == 0 {
		return f.updateRound(x)
	}
	return nil
}

// resetONS sets A = Alpha I and w = v = 0.
func (f *FORKS) resetONS() {
	k := f.cfg.Rank
	f.af.Reset()
	f.af.Reserve(k)
	for i := 0; i < k; i++ {
		f.af.AppendSolved(f.zero[:i], f.cfg.Alpha)
	}
	f.w = slices.Grow(f.w[:0], k)[:k]
	clear(f.w)
	f.vv = slices.Grow(f.vv[:0], k)[:k]
	clear(f.vv)
}

// hash draws the SJLT row of a new sketched point: in each of the D blocks
// of width s_p/D, one bucket with sign +-1/sqrt(D).
func (f *FORKS) hash() {
	dd := f.cfg.Blocks
	width := f.cfg.Sp / dd
	s := 1 / math.Sqrt(float64(dd))
	for b := 0; b < dd; b++ {
		f.bucket = append(f.bucket, int32(b*width+f.rng.IntN(width)))
		if f.rng.Uint64()&1 == 0 {
			f.sgn = append(f.sgn, s)
		} else {
			f.sgn = append(f.sgn, -s)
		}
	}
}

// initSketch is the transition at the round the buffer fills (Eq. 3).
func (f *FORKS) initSketch() error {
	c := f.cfg
	b, d, sp, sm := c.Budget, c.Dim, c.Sp, c.Sm
	f.stage2 = true
	f.t0 = f.t
	f.xs = append(f.xs[:0], f.sv...)
	for i := 0; i < b; i++ {
		f.hash()
	}
	f.land = f.rng.Perm(b)[:sm]
	slices.Sort(f.land)
	// P = S_p^T K (s_p x B), then Phi_pp = P S_p and Phi_pm = P S_m.
	kr := make([]float64, b)
	p := make([]float64, sp*b)
	for i := 0; i < b; i++ {
		xi := f.xs[i*d : (i+1)*d]
		for j := 0; j < b; j++ {
			kr[j] = c.Kernel.Eval(xi, f.xs[j*d:(j+1)*d])
		}
		for l := 0; l < c.Blocks; l++ {
			axpy(f.sgn[i*c.Blocks+l], kr, p[int(f.bucket[i*c.Blocks+l])*b:])
		}
	}
	f.pp = make([]float64, sp*sp)
	f.pm = make([]float64, sp*sm)
	for r := 0; r < sp; r++ {
		prow := p[r*b : (r+1)*b]
		for j := 0; j < b; j++ {
			for l := 0; l < c.Blocks; l++ {
				f.pp[r*sp+int(f.bucket[j*c.Blocks+l])] += f.sgn[j*c.Blocks+l] * prow[j]
			}
		}
		for j, li := range f.land {
			f.pm[r*sm+j] = prow[li]
		}
	}
	f.sv, f.a = nil, nil
	if err := f.decompose(); err != nil {
		return err
	}
	f.km = make([]float64, sm)
	f.phi = make([]float64, c.Rank)
	f.resetONS()
	return f.featureMap()
}

// decompose sets V, Sigma to the rank-k eigendecomposition of the stored
// Phi_pp (negative eigenvalues clamped to 0).
func (f *FORKS) decompose() error {
	sp, k := f.cfg.Sp, f.cfg.Rank
	sym := mat.NewSymDense(sp, nil)
	for i := 0; i < sp; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, 0.5*(f.pp[i*sp+j]+f.pp[j*sp+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return fmt.Errorf("online: FORKS eigendecomposition of Phi_pp failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	f.v = make([]float64, sp*k)
	f.sig = make([]float64, k)
	for j := 0; j < k; j++ {
		col := sp - 1 - j
		f.sig[j] = math.Max(vals[col], 0)
		for i := 0; i < sp; i++ {
			f.v[i*k+j] = vecs.At(i, col)
		}
	}
	return nil
}

// featureMap sets Z = pinv(Phi_pm) V Sigma^{1/2} through a thin SVD of Phi_pm
// with relative tolerance 1e-10 (the implementation notes on Wen et al. (IJCAI 2024) trick T6, pitfall 8).
func (f *FORKS) featureMap() error {
	sp, sm, k := f.cfg.Sp, f.cfg.Sm, f.cfg.Rank
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(sp, sm, slices.Clone(f.pm)), mat.SVDThin) {
		return fmt.Errorf("online: FORKS SVD of Phi_pm failed")
	}
	vals := svd.Values(nil)
	var u, vt mat.Dense
	svd.UTo(&u)
	svd.VTo(&vt)
	r := len(vals)
	tol := 1e-10 * vals[0]
	// T = diag(1/s) U^T V Sigma^{1/2}  (r x k), then Z = Vsvd T (s_m x k).
	vs := mat.NewDense(sp, k, nil)
	for i := 0; i < sp; i++ {
		for j := 0; j < k; j++ {
			vs.Set(i, j, f.v[i*k+j]*math.Sqrt(f.sig[j]))
		}
	}
	var tm mat.Dense
	tm.Mul(u.T(), vs)
	for i := 0; i < r; i++ {
		s := 0.0
		if vals[i] > tol {
			s = 1 / vals[i]
		}
		for j := 0; j < k; j++ {
			tm.Set(i, j, tm.At(i, j)*s)
		}
	}
	var zm mat.Dense
	zm.Mul(&vt, &tm)
	f.z = slices.Grow(f.z[:0], sm*k)[:sm*k]
	for i := 0; i < sm; i++ {
		for j := 0; j < k; j++ {
			f.z[i*k+j] = zm.At(i, j)
		}
	}
	return nil
}

// updateRound adds x to the sketches (Eq. 11), refreshes V, Sigma by TISVD
// (or a full decomposition) and Z, and resets the ONS state.
func (f *FORKS) updateRound(x []float64) error {
	c := f.cfg
	d, sp, sm, dd := c.Dim, c.Sp, c.Sm, c.Blocks
	mu := len(f.xs) / d
	if c.MaxStored > 0 && mu >= c.MaxStored {
		f.resetONS()
		return nil
	}
	f.psi = slices.Grow(f.psi[:0], mu)[:mu]
	for i := 0; i < mu; i++ {
		f.psi[i] = c.Kernel.Eval(f.xs[i*d:(i+1)*d], x)
	}
	knn := kernel.Diag(c.Kernel, x)
	// u = S_p^T psi (scatter-add); e = the new SJLT row.
	u := make([]float64, sp)
	for i := 0; i < mu; i++ {
		for l := 0; l < dd; l++ {
			u[f.bucket[i*dd+l]] += f.sgn[i*dd+l] * f.psi[i]
		}
	}
	f.hash()
	e := make([]float64, sp)
	for l := 0; l < dd; l++ {
		e[f.bucket[mu*dd+l]] += f.sgn[mu*dd+l]
	}
	// Phi_pm += e (psi at the landmarks)^T (x is not a landmark).
	for r := 0; r < sp; r++ {
		if e[r] == 0 {
			continue
		}
		for j, li := range f.land {
			f.pm[r*sm+j] += e[r] * f.psi[li]
		}
	}
	// Phi_pp += e u^T + u e^T + knn e e^T.
	for r := 0; r < sp; r++ {
		for s := 0; s < sp; s++ {
			f.pp[r*sp+s] += e[r]*u[s] + u[r]*e[s] + knn*e[r]*e[s]
		}
	}
	f.xs = append(f.xs, x...)
	f.updates++
	var err error
	if c.FullDecomposition {
		err = f.decompose()
	} else {
		err = f.tisvd(e, u, knn)
	}
	if err != nil {
		return err
	}
	f.resetONS()
	return f.featureMap()
}

// tisvd updates V Sigma V^T to the rank-k approximation of
// V Sigma V^T + Delta M Delta^T, Delta = [e, u], M = [[knn, 1], [1, 0]]
// (Algorithm 2 in symmetric form).
func (f *FORKS) tisvd(e, u []float64, knn float64) error {
	sp, k := f.cfg.Sp, f.cfg.Rank
	delta := [2][]float64{e, u}
	// Coefficients of Delta in the basis V: C1 = V^T Delta (k x 2).
	var c1 [2][]float64
	var perp [2][]float64
	for c := 0; c < 2; c++ {
		c1[c] = make([]float64, k)
		perp[c] = slices.Clone(delta[c])
	}
	basis := [][]float64{}
	orth := func(vec []float64) {
		for j := 0; j < k; j++ { // against V
			s := 0.0
			for i := 0; i < sp; i++ {
				s += f.v[i*k+j] * vec[i]
			}
			for i := 0; i < sp; i++ {
				vec[i] -= s * f.v[i*k+j]
			}
		}
		for _, p := range basis {
			axpy(-dot(p, vec), p, vec)
		}
	}
	for c := 0; c < 2; c++ {
		for j := 0; j < k; j++ {
			s := 0.0
			for i := 0; i < sp; i++ {
				s += f.v[i*k+j] * delta[c][i]
			}
			c1[c][j] = s
		}
		n0 := math.Sqrt(dot(delta[c], delta[c]))
		orth(perp[c])
		orth(perp[c]) // twice is enough (Kahan-Parlett)
		n1 := math.Sqrt(dot(perp[c], perp[c]))
		if n1 > 1e-10*n0 && n1 > 0 {
			for i := range perp[c] {
				perp[c][i] /= n1
			}
			basis = append(basis, perp[c])
		}
	}
	r := len(basis)
	n := k + r
	// Coefficient matrix Cc ((k+r) x 2): [V^T Delta; P^T Delta].
	cc := make([][2]float64, n)
	for j := 0; j < k; j++ {
		cc[j] = [2]float64{c1[0][j], c1[1][j]}
	}
	for j, p := range basis {
		cc[k+j] = [2]float64{dot(p, delta[0]), dot(p, delta[1])}
	}
	// H = diag(Sigma, 0) + Cc M Cc^T.
	h := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			ci, cj := cc[i], cc[j]
			v := knn*ci[0]*cj[0] + ci[0]*cj[1] + ci[1]*cj[0]
			if i == j && i < k {
				v += f.sig[i]
			}
			h.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return fmt.Errorf("online: FORKS TISVD eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	nv := make([]float64, sp*k)
	for j := 0; j < k; j++ {
		col := n - 1 - j
		f.sig[j] = math.Max(vals[col], 0)
		for i := 0; i < sp; i++ {
			var s float64
			for l := 0; l < k; l++ {
				s += f.v[i*k+l] * vecs.At(l, col)
			}
			for l, p := range basis {
				s += p[i] * vecs.At(k+l, col)
			}
			nv[i*k+j] = s
		}
	}
	f.v = nv
	return nil
}
