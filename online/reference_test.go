package online

import (
	"fmt"
	"math"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// TestPKAWVAllPointsEqualsKernelAWV: PKAWV-Nystrom with every point in the
// dictionary is Kernel-AWV (seed 000: H~_t = span of all phi(x_s), so
// eq. 4 is eq. 3), to 1e-8, in both modes and for two kernels.
//
// The small-lambda case is held to 1e-6: 300 points in 3-D at length scale
// 1.5 make K_SS numerically singular, and gp.Nystrom floors the squared
// pivot of a point in the numerical span of S at gp.PivotFloor = 1e-8
// k(x,x) (below that the pivots are rounding noise and the embedding
// overflows: gp's TestDTCNearlyDependentDictionary). That jitter, amplified
// by 1/lambda = 20, moves predictions by about 2e-7.
func TestPKAWVAllPointsEqualsKernelAWV(t *testing.T) {
	cases := []struct {
		name   string
		k      kernel.Kernel
		mode   Mode
		lambda float64
		tol    float64
	}{
		{"rbf-awv", kernel.RBF{LengthScale: 0.7}, AWV, 1, 1e-8},
		{"rbf-krr", kernel.RBF{LengthScale: 0.7}, KRR, 1, 1e-8},
		{"rbf-awv-small-lambda", kernel.RBF{LengthScale: 1.5}, AWV, 0.05, 1e-6},
		{"matern-awv", kernel.Matern{Nu: 1.5, LengthScale: 0.5}, AWV, 1, 1e-8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := synth(300, 3, 0.1, 7)
			ex, err := NewExact(c.k, ds.D, c.lambda, c.mode, 0)
			if err != nil {
				t.Fatal(err)
			}
			ny, err := NewPKAWVNystrom(PKAWVNystromConfig{Kernel: c.k, Dim: ds.D, Lambda: c.lambda, Mode: c.mode, All: true})
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i := 0; i < ds.N; i++ {
				x, y := ds.Row(i), ds.Y[i]
				a, b := ex.Predict(x), ny.Predict(x)
				worst = math.Max(worst, math.Abs(a-b))
				if err := ex.Learn(x, y); err != nil {
					t.Fatal(err)
				}
				if err := ny.Learn(x, y); err != nil {
					t.Fatal(err)
				}
			}
			if worst > c.tol {
				t.Errorf("max |PKAWV(all) - Kernel-AWV| = %g > %g", worst, c.tol)
			}
			if ny.Size() != ds.N {
				t.Errorf("dictionary size %d, want %d", ny.Size(), ds.N)
			}
		})
	}
}

// TestTaylorPKAWVApproachesKernelAWV: Taylor PKAWV with degree M predicts
// like Kernel-AWV with the Gaussian kernel up to an error that falls with M
// (seed 000, Lemma 13 and Theorem 4; the adversarial experiment's
// "PKAWV approximations converge very fast ... when M increases").
func TestTaylorPKAWVApproachesKernelAWV(t *testing.T) {
	const sigma = 1.0
	ds := synth(400, 3, 0.1, 3)
	k := kernel.RBF{LengthScale: sigma}
	ref := make([]float64, ds.N)
	ex, _ := NewExact(k, ds.D, 1, AWV, 0)
	for i := 0; i < ds.N; i++ {
		ref[i] = ex.Predict(ds.Row(i))
		ex.Learn(ds.Row(i), ds.Y[i])
	}
	prev := math.Inf(1)
	for _, m := range []int{1, 2, 3, 4, 6, 8, 10} {
		p, err := NewPKAWVTaylor(ds.D, m, sigma, 1, AWV)
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for i := 0; i < ds.N; i++ {
			worst = math.Max(worst, math.Abs(p.Predict(ds.Row(i))-ref[i]))
			p.Learn(ds.Row(i), ds.Y[i])
		}
		t.Logf("M = %2d (r = %4d): max |PKAWV-Taylor - Kernel-AWV| = %.3g", m, p.Size(), worst)
		if worst > prev*1.01 {
			t.Errorf("M = %d: error %g did not decrease from %g", m, worst, prev)
		}
		prev = worst
	}
	if prev > 1e-4 {
		t.Errorf("M = 10: error %g, want < 1e-4", prev)
	}
}

// TestExactEqualsScratch: the incremental Cholesky forecasters equal a
// from-scratch solve of (K + lambda I) c = [Y; 0] (seed000.md 1.1, the dual
// form of Kernel-AWV and KRR) after a long sequence.
func TestExactEqualsScratch(t *testing.T) {
	ds := synth(700, 4, 0.1, 11)
	k := kernel.RBF{LengthScale: 0.8}
	for _, mode := range []Mode{KRR, AWV} {
		ex, _ := NewExact(k, ds.D, 0.5, mode, 0)
		n := ds.N - 1
		for i := 0; i < n; i++ {
			ex.Learn(ds.Row(i), ds.Y[i])
		}
		x := ds.Row(n)
		// From scratch: K over the points (and x_t for AWV).
		m := n
		if mode == AWV {
			m = n + 1
		}
		pt := func(i int) []float64 {
			if i == n {
				return x
			}
			return ds.Row(i)
		}
		a := make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				a[i*m+j] = k.Eval(pt(i), pt(j))
			}
			a[i*m+i] += 0.5
		}
		rhs := make([]float64, m)
		copy(rhs, ds.Y[:n])
		c := solveSym(t, a, m, rhs)
		var want float64
		for i := 0; i < m; i++ {
			want += k.Eval(pt(i), x) * c[i]
		}
		if got := ex.Predict(x); math.Abs(got-want) > 1e-9 {
			t.Errorf("%v: incremental %v, from scratch %v", mode, got, want)
		}
	}
}

// TestPKAWVFeaturesEqualsScratch: after 3000 cholup updates, Taylor PKAWV
// equals the direct solve (lambda I + sum phi phi^T) w = sum y phi.
func TestPKAWVFeaturesEqualsScratch(t *testing.T) {
	ds := synth(3001, 4, 0.1, 5)
	for _, mode := range []Mode{KRR, AWV} {
		p, err := NewPKAWVTaylor(ds.D, 3, 1.2, 0.7, mode)
		if err != nil {
			t.Fatal(err)
		}
		r := p.Size()
		a := make([]float64, r*r)
		b := make([]float64, r)
		phi := make([]float64, r)
		for i := 0; i < r; i++ {
			a[i*r+i] = 0.7
		}
		add := func(x []float64, y float64, withY bool) {
			p.fm.Map(phi, x)
			for i := 0; i < r; i++ {
				for j := 0; j < r; j++ {
					a[i*r+j] += phi[i] * phi[j]
				}
				if withY {
					b[i] += y * phi[i]
				}
			}
		}
		n := ds.N - 1
		for i := 0; i < n; i++ {
			p.Learn(ds.Row(i), ds.Y[i])
			add(ds.Row(i), ds.Y[i], true)
		}
		x := ds.Row(n)
		if mode == AWV {
			add(x, 0, false)
		}
		w := solveSym(t, a, r, b)
		p.fm.Map(phi, x)
		want := dot(w, phi)
		if got := p.Predict(x); math.Abs(got-want) > 1e-9 {
			t.Errorf("%v: incremental %v, from scratch %v", mode, got, want)
		}
	}
}

// TestPKAWVNystromEqualsPaperClosedForm: PKAWV on a KORS dictionary equals
// the paper's closed form (Appendix H, Algorithm 2)
//
//	alpha_t = (K_{t,I}^T K_{t,I} + lambda K_II)^{-1} K_{t,I}^T [Y_{t-1}; 0],
//	yhat_t  = k_I(x_t)^T alpha_t,
//
// solved from scratch, after a long sequence with a growing dictionary.
func TestPKAWVNystromEqualsPaperClosedForm(t *testing.T) {
	ds := synth(1200, 3, 0.1, 9)
	k := kernel.RBF{LengthScale: 0.8}
	const lambda = 1.0
	for _, mode := range []Mode{AWV, KRR} {
		p, err := NewPKAWVNystrom(PKAWVNystromConfig{Kernel: k, Dim: ds.D, Lambda: lambda, Mode: mode, KORS: KORS{Mu: 0.5, Eps: 0.5, Beta: 1}, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for i := 0; i < ds.N; i++ {
			x := ds.Row(i)
			got := p.Predict(x)
			if i == 300 || i == ds.N-1 {
				// Dictionary of round t (x_t joins before the prediction).
				ny := p.Dictionary()
				m := ny.Size()
				rows := i // past points
				if mode == AWV {
					rows = i + 1
				}
				h := make([]float64, m*m)
				rhs := make([]float64, m)
				kr := make([]float64, m)
				for s := 0; s < rows; s++ {
					for j := 0; j < m; j++ {
						kr[j] = k.Eval(ds.Row(s), ny.Point(j))
					}
					for a := 0; a < m; a++ {
						for b := 0; b < m; b++ {
							h[a*m+b] += kr[a] * kr[b]
						}
						if s < i {
							rhs[a] += kr[a] * ds.Y[s]
						}
					}
				}
				for a := 0; a < m; a++ {
					for b := 0; b < m; b++ {
						h[a*m+b] += lambda * k.Eval(ny.Point(a), ny.Point(b))
					}
				}
				alpha := solveSym(t, h, m, rhs)
				var want float64
				for j := 0; j < m; j++ {
					want += k.Eval(x, ny.Point(j)) * alpha[j]
				}
				worst = math.Max(worst, math.Abs(got-want))
			}
			p.Learn(x, ds.Y[i])
		}
		t.Logf("%v: dictionary %d of %d points, max deviation %.2g", mode, p.Size(), ds.N, worst)
		if p.Size() < 10 || p.Size() >= ds.N {
			t.Errorf("%v: KORS kept %d of %d points; want a proper subset", mode, p.Size(), ds.N)
		}
		if worst > 1e-7 {
			t.Errorf("%v: max |incremental - closed form| = %g > 1e-7", mode, worst)
		}
	}
}

// TestPKAWVNystromKORSWeights: both weight conventions run, and KORS's
// sampling keeps fewer points with a larger mu (Proposition 5).
func TestPKAWVNystromKORSWeights(t *testing.T) {
	ds := synth(800, 2, 0.1, 1)
	k := kernel.RBF{LengthScale: 0.5}
	sizes := map[string]int{}
	for _, c := range []struct {
		name  string
		kors  KORS
		paper bool
	}{{"mu=0.1", KORS{Mu: 0.1, Eps: 0.5, Beta: 1}, false}, {"mu=10", KORS{Mu: 10, Eps: 0.5, Beta: 1}, false},
		{"paper-weights", KORS{Mu: 1, Eps: 0.5, Beta: 1, PaperWeights: true}, true}} {
		p, err := NewPKAWVNystrom(PKAWVNystromConfig{Kernel: k, Dim: ds.D, Lambda: 1, Mode: KRR, KORS: c.kors, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Prequential(t.Context(), p, NewOrderedStream(ds), nil)
		if err != nil {
			t.Fatal(err)
		}
		sizes[c.name] = r.Size
		if !(r.MSE() < 0.05) {
			t.Errorf("%s: MSE %v", c.name, r.MSE())
		}
	}
	if sizes["mu=10"] >= sizes["mu=0.1"] {
		t.Errorf("dictionary with mu = 10 (%d) not smaller than with mu = 0.1 (%d)", sizes["mu=10"], sizes["mu=0.1"])
	}
}

// nonsPaper is NONS-ALD in the paper's own form (seed 002, Algorithm 3):
// eigen features phi_j = Sigma^{-1/2} U^T k_S, the transfer matrix
// Q = Sigma_j^{-1/2} U_j^T K_{S(j),S(j-1)} U_{j-1} Sigma_{j-1}^{-1/2}, and
// A_j = mu I + Q (A_{j-1} - mu I) Q^T, w_j = Q w_{j-1}, with explicit
// inverses. It is the reference the Cholesky form is checked against.
type nonsPaper struct {
	k            kernel.Kernel
	alpha, u, mu float64
	eta          float64
	pts          [][]float64
	proj         [][]float64 // j x j: rows of Sigma^{-1/2} U^T
	a, ainv      [][]float64
	w, wtil      []float64
}

func (n *nonsPaper) features(x []float64) []float64 {
	j := len(n.pts)
	kv := make([]float64, j)
	for i, p := range n.pts {
		kv[i] = n.k.Eval(p, x)
	}
	phi := make([]float64, j)
	for r := 0; r < j; r++ {
		phi[r] = dot(n.proj[r], kv)
	}
	return phi
}

func (n *nonsPaper) step(t *testing.T, x []float64, y float64) float64 {
	phi := n.features(x)
	if len(n.pts) > 0 { // projection (8) with the old basis
		n.w = append([]float64(nil), n.wtil...)
		yt := dot(n.wtil, phi)
		if m := math.Copysign(math.Max(math.Abs(yt)-n.u, 0), yt); m != 0 {
			q := matVec(n.ainv, phi)
			axpy(-m/dot(phi, q), q, n.w)
		}
	}
	if 1-dot(phi, phi) > n.alpha { // grow and transfer
		oldProj := n.proj
		oldPts := n.pts
		n.pts = append(append([][]float64(nil), n.pts...), x)
		n.proj = eigenProj(t, n.k, n.pts)
		jn, jo := len(n.pts), len(oldPts)
		// Q = P_new K_{new,old} P_old^T.
		kno := make([][]float64, jn)
		for i := range kno {
			kno[i] = make([]float64, jo)
			for l := range kno[i] {
				kno[i][l] = n.k.Eval(n.pts[i], oldPts[l])
			}
		}
		if jo == 0 { // A_1(0) = mu, w_1 = 0
			n.a = [][]float64{{n.mu}}
			n.w = []float64{0}
		} else {
			q := matMul(matMul(n.proj, kno), transpose(oldProj))
			amu := make([][]float64, jo)
			for i := range amu {
				amu[i] = append([]float64(nil), n.a[i]...)
				amu[i][i] -= n.mu
			}
			na := matMul(matMul(q, amu), transpose(q))
			for i := range na {
				na[i][i] += n.mu
			}
			n.a = na
			n.w = matVec(q, n.w)
		}
		phi = n.features(x)
	}
	yhat := dot(n.w, phi)
	g := 2 * (yhat - y)
	for i := range n.a {
		for l := range n.a[i] {
			n.a[i][l] += n.eta * g * g * phi[i] * phi[l]
		}
	}
	n.ainv = invert(t, n.a)
	n.wtil = append([]float64(nil), n.w...)
	axpy(-g, matVec(n.ainv, phi), n.wtil)
	return yhat
}

// TestNONSALDCholeskyEqualsPaperForm: the Cholesky-basis NONS-ALD (Q = [I; 0],
// transfer by zero-padding) predicts exactly like the paper's eigen form
// with the Lemma 4.2/4.3 transfer (seed002.md Section 5.2).
func TestNONSALDCholeskyEqualsPaperForm(t *testing.T) {
	for _, sigma := range []float64{0.5, 1, 2} {
		t.Run(fmt.Sprintf("sigma=%v", sigma), func(t *testing.T) {
			ds := synth(600, 3, 0.1, 12)
			k := kernel.RBF{LengthScale: sigma}
			cfg := ALDConfig{Kernel: k, Dim: ds.D, Alpha: 0.02, U: 1, Mu: 1}
			l, err := NewNONSALD(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ref := &nonsPaper{k: k, alpha: cfg.Alpha, u: 1, mu: 1, eta: 1.0 / 8}
			var worst float64
			for i := 0; i < ds.N; i++ {
				x, y := ds.Row(i), ds.Y[i]
				got := l.Predict(x)
				want := ref.step(t, x, y)
				worst = math.Max(worst, math.Abs(got-want))
				if err := l.Learn(x, y); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("J = %d, max |Cholesky form - paper form| = %.2g", l.Size(), worst)
			if l.Size() != len(ref.pts) {
				t.Errorf("dictionary %d, paper form %d", l.Size(), len(ref.pts))
			}
			if worst > 1e-8 {
				t.Errorf("max deviation %g > 1e-8", worst)
			}
		})
	}
}

// TestAOGDALDPrimalEqualsDual: AOGD-ALD in orthonormal primal coordinates
// equals the paper's dual form (Algorithm 1 with K_S^{-1}, the ALD test of
// eq. 4-5, eq. 6 and the ball projection of eq. 3), including the B0 cap.
func TestAOGDALDPrimalEqualsDual(t *testing.T) {
	ds := synth(700, 3, 0.1, 21)
	k := kernel.RBF{LengthScale: 0.7}
	for _, b0 := range []int{0, 25} {
		cfg := ALDConfig{Kernel: k, Dim: ds.D, Alpha: 0.01, U: 2, B0: b0}
		l, err := NewAOGDALD(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var pts [][]float64
		var a []float64
		gsum := 1.0
		var worst float64
		for i := 0; i < ds.N; i++ {
			x, y := ds.Row(i), ds.Y[i]
			kv := make([]float64, len(pts))
			for j, p := range pts {
				kv[j] = k.Eval(p, x)
			}
			yhat := dot(a, kv)
			worst = math.Max(worst, math.Abs(l.Predict(x)-yhat))
			l.Learn(x, y)
			g := 2 * (yhat - y)
			ald := false
			var beta []float64
			var res float64 = 1
			if len(pts) > 0 && (b0 == 0 || len(pts) < b0) {
				ks := gram(k, pts)
				beta = matVec(invert(t, ks), kv)
				res = 1 - dot(kv, beta)
				ald = res <= cfg.Alpha
			}
			if ald {
				gsum += g * g * (1 - res)
				eta := cfg.U / math.Sqrt(gsum)
				axpy(-eta*g, beta, a)
			} else {
				gsum += g * g
				eta := cfg.U / math.Sqrt(gsum)
				pts = append(pts, x)
				a = append(a, -eta*g)
			}
			ks := gram(k, pts)
			if n2 := dot(a, matVec(ks, a)); n2 > cfg.U*cfg.U {
				s := cfg.U / math.Sqrt(n2)
				for j := range a {
					a[j] *= s
				}
			}
		}
		t.Logf("B0 = %d: |S| = %d, max |primal - dual| = %.2g", b0, l.Size(), worst)
		if l.Size() != len(pts) {
			t.Errorf("B0 = %d: dictionary %d, dual form %d", b0, l.Size(), len(pts))
		}
		if worst > 1e-8 {
			t.Errorf("B0 = %d: max deviation %g > 1e-8", b0, worst)
		}
	}
}
