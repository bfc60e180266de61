package online

import (
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// ALDConfig configures the approximate-linear-dependence learners of
// Li and Liao (ICML 2023) (AOGD-ALD, NONS-ALD).
type ALDConfig struct {
	Kernel kernel.Kernel
	Dim    int
	// Alpha is the ALD threshold of eq. 5: x_t joins the dictionary when its
	// squared RKHS residual k(x_t,x_t) - k^T K_S^{-1} k exceeds Alpha. The
	// experiments use 25/T (ALDThreshold).
	Alpha float64
	// U is the radius of the RKHS ball (AOGD-ALD, eq. 3) or of the
	// prediction slab |w.phi(x)| <= U (NONS-ALD, eq. 8). The experiments use
	// U = 2 (AOGD-ALD) and U = 1 (NONS-ALD).
	U float64
	// B0 is AOGD-ALD's dictionary cap (Theorem 3.2; AOGDCap); beyond it every
	// example is appended, as in KOGD. 0 means no cap.
	B0 int
	// Mu is NONS-ALD's regularization, A starts at Mu I (tuned in {1, 5, 15}).
	Mu float64
	// MaxDictionary is the dictionary budget J (0: none): once the
	// dictionary has J atoms it never grows again, whatever the ALD test
	// (or AOGD-ALD's B0 rule) says, and every later x_t is represented by
	// its projection onto the span of the J atoms (the ALD branch of eq. 6,
	// with a residual that may exceed alpha). This keeps the per-round cost
	// at O(dJ + J^2); it is not in Li and Liao (ICML 2023), whose alpha = 25/T lets the
	// dictionary grow with T.
	MaxDictionary int
	// Eta is NONS-ALD's constant step, 1/(4 (U^2 + Y^2)) by Theorem 4.6
	// (1/8 for U = Y = 1). 0 means that value with Y = U.
	Eta float64
}

// ALDThreshold returns the experiments' ALD threshold alpha = 25/T
// (Li and Liao, ICML 2023, Appendix A; the R code's sqrt(alpha_t) <= 5/sqrt(T)).
func ALDThreshold(T int) float64 { return 25 / float64(T) }

// AOGDCap returns B0 = floor((sqrt(d^2 + 4 d T) - d)/2) of Theorem 3.2,
// the dictionary size at which AOGD-ALD's per-round cost d B + B^2 reaches
// KOGD's d T.
func AOGDCap(d, T int) int {
	fd, ft := float64(d), float64(T)
	return int(math.Floor((math.Sqrt(fd*fd+4*fd*ft) - fd) / 2))
}

func (c *ALDConfig) validate() error {
	if err := positive("ALD threshold alpha", c.Alpha); err != nil {
		return err
	}
	if err := positive("radius U", c.U); err != nil {
		return err
	}
	if c.B0 < 0 {
		return fmt.Errorf("online: negative dictionary cap B0 = %d", c.B0)
	}
	if c.MaxDictionary < 0 {
		return fmt.Errorf("online: negative dictionary budget %d", c.MaxDictionary)
	}
	return nil
}

// AOGDALD is AOGD-ALD (Li and Liao, ICML 2023, Algorithm 1): kernel online gradient
// descent on the square loss whose gradient g k(x_t, .) is replaced by its
// projection g P_S k(x_t, .) onto the dictionary span when x_t passes the ALD
// test (eq. 6), with the adaptive step eta_t = U / sqrt(1 + sum_{tau<=t}
// ||grad_tau||^2) (including the current gradient, pitfall 3) and the
// projection onto the ball ||f||_H <= U (eq. 3).
//
// It runs in the primal orthonormal coordinates of the implementation notes on Li and Liao (ICML 2023) Section 2: with
// the Cholesky-form Nystrom embedding phi(x) = L^{-1} k_S(x) of gp.Nystrom,
// f = w.phi and ||f||_H = ||w||; an ALD round's gradient is g phi(x_t) (norm^2
// g^2 (k(x_t,x_t) - alpha_t)), a growth round appends the coordinate
// sqrt(alpha_t) to phi(x_t) and 0 to w. O(d|S| + |S|^2) per round.
type AOGDALD struct {
	embedCache
	cfg   ALDConfig
	w     []float64
	gsum  float64
	grown int
}

// embedCache holds the Nystrom embedding z of the last point x embedded
// and its residual, so that Learn after Predict at the same x (every
// prequential round) embeds once. cok is cleared when the dictionary
// changes.
type embedCache struct {
	ny   *gp.Nystrom
	z    []float64
	cx   []float64
	cres float64
	cok  bool
}

// embed sets z = L^{-1} k_S(x) and cres = max(k(x,x) - ||z||^2, 0), unless
// they are already those of x.
func (c *embedCache) embed(x []float64) {
	if c.cok && slices.Equal(c.cx, x) {
		return
	}
	m := c.ny.Size()
	c.z = slices.Grow(c.z[:0], m+1)[:m]
	c.cres = math.Max(c.ny.Embed(c.z, x), 0)
	c.cx = append(c.cx[:0], x...)
	c.cok = true
}

// NewAOGDALD returns AOGD-ALD.
func NewAOGDALD(cfg ALDConfig) (*AOGDALD, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ny, err := gp.NewNystrom(cfg.Kernel, cfg.Dim)
	if err != nil {
		return nil, err
	}
	return &AOGDALD{embedCache: embedCache{ny: ny}, cfg: cfg, gsum: 1}, nil
}

// Name returns "aogd-ald".
func (a *AOGDALD) Name() string { return "aogd-ald" }

// Size returns the dictionary size |S_t|.
func (a *AOGDALD) Size() int { return a.ny.Size() }

// Predict returns f_t(x) = w.phi(x).
func (a *AOGDALD) Predict(x []float64) float64 {
	a.embed(x)
	return dot(a.w, a.z)
}

// Learn performs the gradient step of round t with the square loss.
func (a *AOGDALD) Learn(x []float64, y float64) error {
	if err := checkDim(x, a.cfg.Dim); err != nil {
		return err
	}
	a.embed(x)
	yhat := dot(a.w, a.z)
	g := 2 * (yhat - y)
	phi := a.z
	capped := a.cfg.B0 > 0 && a.ny.Size() >= a.cfg.B0
	full := a.cfg.MaxDictionary > 0 && a.ny.Size() >= a.cfg.MaxDictionary
	var n2 float64
	if !full && (capped || a.cres > a.cfg.Alpha) {
		// ALD fails (or KOGD beyond B0): x_t joins S, the gradient is g k(x_t, .).
		a.ny.Add(x, a.z)
		phi = a.ny.LastRow()
		a.w = append(a.w, 0)
		n2 = dot(phi, phi)
		a.grown++
	} else {
		n2 = dot(phi, phi) // = k(x,x) - alpha_t
	}
	a.gsum += g * g * n2
	eta := a.cfg.U / math.Sqrt(a.gsum)
	axpy(-eta*g, phi, a.w)
	if nw := math.Sqrt(dot(a.w, a.w)); nw > a.cfg.U {
		s := a.cfg.U / nw
		for i := range a.w {
			a.w[i] *= s
		}
	}
	a.cok = false
	return nil
}

// NONSALD is NONS-ALD (Li and Liao, ICML 2023, Algorithm 3): the online Newton step on
// Nystrom features phi_j of the ALD dictionary S(j), with the constant step
// eta, A_j(t) = A_j(t-1) + eta grad grad^T, the generalized projection onto
// the slab {w : |w.phi_j(x_{t+1})| <= U} (eq. 8, Theorem 4.9) and, when the
// dictionary grows, the state transfer of Lemmas 4.2 and 4.3
//
//	A_j = mu I + Q (A_{j-1} - mu I) Q^T,   w_j = Q w_{j-1}.
//
// In the Cholesky basis phi_j(x) = L_j^{-1} k_S(x) of gp.Nystrom, Q = [I; 0]
// (the implementation notes on Li and Liao (ICML 2023) Section 5.2), so the transfer is A <- blockdiag(A, mu),
// w <- (w; 0): an O(j) append to A's Cholesky factor instead of an SVD, Q and
// an O(j^3) inverse. The projection of eq. 8 needs x_{t+1}; it is done at
// the start of round t+1 with the old basis, before the dictionary grows
// (pitfall 5), so Predict returns clip(wtil.phi(x), -U, U).
// O(dJ + J^2) per round.
type NONSALD struct {
	embedCache
	cfg  ALDConfig
	eta  float64
	a    chol.Factor // A
	wtil []float64   // unprojected iterate
	w    []float64
	q    []float64
	zero []float64
}

// NewNONSALD returns NONS-ALD.
func NewNONSALD(cfg ALDConfig) (*NONSALD, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := positive("regularization mu", cfg.Mu); err != nil {
		return nil, err
	}
	eta := cfg.Eta
	if eta == 0 {
		eta = 1 / (8 * cfg.U * cfg.U)
	}
	if err := positive("step eta", eta); err != nil {
		return nil, err
	}
	ny, err := gp.NewNystrom(cfg.Kernel, cfg.Dim)
	if err != nil {
		return nil, err
	}
	return &NONSALD{embedCache: embedCache{ny: ny}, cfg: cfg, eta: eta}, nil
}

// Name returns "nons-ald".
func (n *NONSALD) Name() string { return "nons-ald" }

// Size returns the dictionary size J.
func (n *NONSALD) Size() int { return n.ny.Size() }

// Predict returns yhat_t = clip(wtil.phi_j(x), -U, U), the prediction of the
// iterate projected onto W_t (Theorem 4.9). It equals the prediction after
// a growth at x, since the transferred w has a zero last coordinate
// (Lemma 4.3).
func (n *NONSALD) Predict(x []float64) float64 {
	n.embed(x)
	y := dot(n.wtil, n.z)
	return math.Max(-n.cfg.U, math.Min(n.cfg.U, y))
}

// project sets w to the A-norm projection of wtil onto |w.p| <= U (eq. 8).
func (n *NONSALD) project(p []float64) {
	n.w, n.q = slabProject(n.w, n.q, n.wtil, p, n.cfg.U, &n.a)
}

// slabProject returns the A-norm projection of wtil onto the slab
// |w.p| <= c (eq. 8 of Li and Liao (ICML 2023), used by NONS-ALD and KONS), written into
// w, with q as scratch for A^{-1} p.
func slabProject(w, q, wtil, p []float64, c float64, a *chol.Factor) (wOut, qOut []float64) {
	w = append(w[:0], wtil...)
	yt := dot(wtil, p)
	m := math.Copysign(math.Max(math.Abs(yt)-c, 0), yt)
	if m == 0 {
		return w, q
	}
	q = append(q[:0], p...)
	a.Solve(q) // A^{-1} p
	den := dot(p, q)
	if den <= 0 {
		den = 1e-5 // the official code's guard
	}
	axpy(-m/den, q, w)
	return w, q
}

// Learn performs round t: lazy projection with the old basis, ALD test and
// transfer, then the Newton step on the square loss.
func (n *NONSALD) Learn(x []float64, y float64) error {
	if err := checkDim(x, n.cfg.Dim); err != nil {
		return err
	}
	n.embed(x)
	n.project(n.z)
	phi := n.z
	if n.cres > n.cfg.Alpha && (n.cfg.MaxDictionary == 0 || n.ny.Size() < n.cfg.MaxDictionary) {
		n.ny.Add(x, n.z)
		phi = n.ny.LastRow()
		n.zero = append(n.zero, 0)
		n.a.AppendSolved(n.zero[:n.a.Size()], n.cfg.Mu) // A <- blockdiag(A, mu)
		n.w = append(n.w, 0)
	}
	yhat := dot(n.w, phi)
	g := 2 * (yhat - y)
	// A += eta g^2 phi phi^T; wtil = w - A^{-1} g phi.
	s := math.Sqrt(n.eta) * g
	n.q = n.q[:0]
	for _, v := range phi {
		n.q = append(n.q, s*v)
	}
	n.a.RankOneUpdate(n.q)
	n.q = append(n.q[:0], phi...)
	n.a.Solve(n.q)
	n.wtil = append(n.wtil[:0], n.w...)
	axpy(-g, n.q, n.wtil)
	n.cok = false
	return nil
}
