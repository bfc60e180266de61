package online

import (
	"math"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/kernel"
	"gonum.org/v1/gonum/mat"
)

// TestDSGReproducesFromSeeds: the doubly stochastic predictor is its seed and
// coefficients only (seed 001, Algorithm 2, "the pseudo-random seed trick"):
// a model rebuilt from (kernel, seed, block, scale, beta) predicts bit for
// bit like the learner; a reference that stores every frequency drawn with
// kernel.FourierFeature gives the same predictions; the same seed gives the
// same run and another seed another one.
func TestDSGReproducesFromSeeds(t *testing.T) {
	for _, c := range []struct {
		name  string
		loss  Loss
		block int
		nu    float64
		class bool
	}{
		{"square", Square, 1, 0, false},
		{"square-block4-nu", Square, 4, 1e-3, false},
		{"hinge", Hinge, 1, 1e-3, true},
		{"logistic", Logistic, 2, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := synth(300, 3, 0.1, 4)
			if c.class {
				ds = synthClass(300, 3, 4)
			}
			k := kernel.RBF{LengthScale: 0.8}
			cfg := DSGConfig{Kernel: k, Dim: ds.D, Loss: c.loss, Nu: c.nu, Theta: 1, T0: 5, Block: c.block, Seed: 99}
			run := func(cfg DSGConfig) (*DSG, []float64) {
				g, err := NewDSG(cfg)
				if err != nil {
					t.Fatal(err)
				}
				var preds []float64
				for i := 0; i < ds.N; i++ {
					preds = append(preds, g.Predict(ds.Row(i)))
					g.Learn(ds.Row(i), ds.Y[i])
				}
				return g, preds
			}
			g, p1 := run(cfg)
			_, p2 := run(cfg)
			if !slices.Equal(p1, p2) {
				t.Error("same seed, different predictions")
			}
			other := cfg
			other.Seed = 100
			if _, p3 := run(other); slices.Equal(p1, p3) {
				t.Error("another seed gave identical predictions")
			}
			if g.Size() != ds.N*c.block {
				t.Errorf("features %d, want %d", g.Size(), ds.N*c.block)
			}
			// Rebuild the predictor from its seed and coefficients alone.
			m := g.Model()
			rebuilt := DSGModel{Kernel: k, Dim: ds.D, Seed: 99, Block: c.block, Scale: m.Scale, Beta: slices.Clone(m.Beta)}
			// Reference with stored frequencies, regenerated one by one.
			omegas := make([][]float64, len(m.Beta))
			phases := make([]float64, len(m.Beta))
			for j := range omegas {
				omegas[j] = make([]float64, ds.D)
				phases[j] = kernel.FourierFeature(k, 99, j, omegas[j])
			}
			amp := math.Sqrt(2 / float64(c.block))
			for i := 0; i < 50; i++ {
				x := ds.Row(i)
				want := g.Predict(x)
				got, err := rebuilt.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("rebuilt model %v, learner %v (must be bitwise equal)", got, want)
				}
				var ref float64
				for j, b := range m.Beta {
					ref += b * amp * math.Cos(dot(omegas[j], x)+phases[j])
				}
				ref *= m.Scale
				if math.Abs(ref-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("stored-frequency reference %v, learner %v", ref, want)
				}
			}
		})
	}
}

// TestDSGClosedForm checks eq. 7 of seed 001 with r = 1: after t steps
// alpha_i = -gamma_i prod_{j=i+1..t}(1 - gamma_j nu) l'_i phi_i(x_i).
func TestDSGClosedForm(t *testing.T) {
	ds := synth(60, 2, 0.1, 8)
	k := kernel.RBF{LengthScale: 1}
	cfg := DSGConfig{Kernel: k, Dim: ds.D, Loss: Square, Nu: 0.05, Theta: 2, T0: 3, Seed: 5}
	g, _ := NewDSG(cfg)
	gen, _ := kernel.NewFourierGenerator(k, 5)
	om := make([]float64, ds.D)
	var derivs, gammas, feats []float64
	for i := 0; i < ds.N; i++ {
		f := g.Predict(ds.Row(i))
		derivs = append(derivs, Square.Deriv(f, ds.Y[i]))
		gammas = append(gammas, 2/(3+float64(i+1)))
		feats = append(feats, feature(gen, i, om, ds.Row(i), math.Sqrt2))
		g.Learn(ds.Row(i), ds.Y[i])
	}
	m := g.Model()
	for i := range m.Beta {
		a := -gammas[i] * derivs[i] * feats[i]
		for j := i + 1; j < ds.N; j++ {
			a *= 1 - gammas[j]*cfg.Nu
		}
		if got := m.Scale * m.Beta[i]; math.Abs(got-a) > 1e-12 {
			t.Fatalf("alpha_%d = %v, eq. 7 gives %v", i, got, a)
		}
	}
}

// TestFORKSSketchIncremental: the incremental sketches of Eq. 11 equal the
// explicit S_p^T K S_p and S_p^T K S_m over the sketched points, and TISVD
// without truncation (k = s_p) reproduces Phi_pp (Eq. 7), after several
// update rounds.
func TestFORKSSketchIncremental(t *testing.T) {
	ds := synthClass(400, 4, 3)
	k := kernel.RBF{LengthScale: 1}
	for _, blocks := range []int{1, 2} {
		cfg := FORKSConfig{Kernel: k, Dim: ds.D, Loss: Hinge, Budget: 20, Sp: 12, Sm: 4, Rank: 12, Blocks: blocks,
			Rho: 30, Alpha: 0.01, Sigma: 0.5, C: 1, EtaKOGD: 0.2, Seed: 7}
		f, err := NewFORKS(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Prequential(t.Context(), f, NewOrderedStream(ds), nil); err != nil {
			t.Fatal(err)
		}
		if f.Updates() < 5 {
			t.Fatalf("only %d update rounds", f.Updates())
		}
		mu := len(f.xs) / ds.D
		sp, sm := cfg.Sp, cfg.Sm
		// Explicit S_p (mu x s_p).
		s := mat.NewDense(mu, sp, nil)
		for i := 0; i < mu; i++ {
			for l := 0; l < blocks; l++ {
				s.Set(i, int(f.bucket[i*blocks+l]), s.At(i, int(f.bucket[i*blocks+l]))+f.sgn[i*blocks+l])
			}
		}
		km := mat.NewDense(mu, mu, nil)
		for i := 0; i < mu; i++ {
			for j := 0; j < mu; j++ {
				km.Set(i, j, k.Eval(f.xs[i*ds.D:(i+1)*ds.D], f.xs[j*ds.D:(j+1)*ds.D]))
			}
		}
		var stk, pp mat.Dense
		stk.Mul(s.T(), km)
		pp.Mul(&stk, s)
		var worst float64
		for r := 0; r < sp; r++ {
			for c := 0; c < sp; c++ {
				worst = math.Max(worst, math.Abs(pp.At(r, c)-f.pp[r*sp+c]))
			}
			for j, li := range f.land {
				worst = math.Max(worst, math.Abs(stk.At(r, li)-f.pm[r*sm+j]))
			}
		}
		if worst > 1e-10 {
			t.Errorf("D = %d: incremental sketches deviate by %g", blocks, worst)
		}
		// TISVD with k = s_p keeps Phi_pp exactly (up to clamped negatives,
		// none for a PSD sketch).
		var rec float64
		for r := 0; r < sp; r++ {
			for c := 0; c < sp; c++ {
				var v float64
				for j := 0; j < cfg.Rank; j++ {
					v += f.v[r*cfg.Rank+j] * f.sig[j] * f.v[c*cfg.Rank+j]
				}
				rec = math.Max(rec, math.Abs(v-f.pp[r*sp+c]))
			}
		}
		if rec > 1e-9 {
			t.Errorf("D = %d: V Sigma V^T deviates from Phi_pp by %g after %d TISVD updates", blocks, rec, f.Updates())
		}
	}
}

// TestFORKSTISVDMatchesFullDecomposition: with k < s_p, TISVD and a full
// eigendecomposition at every update round give close leading spectra
// (seed003.md trick T8: the truncation error accumulates slowly).
func TestFORKSTISVDMatchesFullDecomposition(t *testing.T) {
	ds := synthClass(500, 3, 5)
	k := kernel.RBF{LengthScale: 1}
	mk := func(full bool) *FORKS {
		cfg := FORKSConfig{Kernel: k, Dim: ds.D, Loss: Hinge, Budget: 30, Sp: 20, Sm: 6, Rank: 6, Rho: 100,
			Alpha: 0.01, Sigma: 0.5, C: 1, EtaKOGD: 0.2, Seed: 3, FullDecomposition: full}
		f, _ := NewFORKS(cfg)
		if _, err := Prequential(t.Context(), f, NewOrderedStream(ds), nil); err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := mk(false), mk(true)
	if a.Updates() != b.Updates() || a.Updates() < 3 {
		t.Fatalf("updates %d and %d", a.Updates(), b.Updates())
	}
	if d := math.Abs(a.sig[0]-b.sig[0]) / b.sig[0]; d > 1e-2 {
		t.Errorf("top eigenvalue: TISVD %v, full %v", a.sig[0], b.sig[0])
	}
	for j := range a.sig {
		if a.sig[j] > b.sig[j]*(1+1e-9) {
			t.Errorf("TISVD eigenvalue %d = %v exceeds the exact %v", j, a.sig[j], b.sig[j])
		}
	}
}

// TestFORKSSlabProjection: after the projection of Eq. 10 the score is
// clipped to [-C, C], and the Newton step uses A including g_t.
func TestFORKSSlabProjection(t *testing.T) {
	ds := synth(600, 3, 0.05, 2)
	k := kernel.RBF{LengthScale: 1}
	cfg := FORKSConfig{Kernel: k, Dim: ds.D, Loss: Square, Budget: 40, Sp: 30, Sm: 8, Rank: 5, Rho: 200,
		Alpha: 0.01, Sigma: 0.5, C: 0.7, EtaKOGD: 0.2, Seed: 1}
	f, _ := NewFORKS(cfg)
	for i := 0; i < ds.N; i++ {
		p := f.Predict(ds.Row(i))
		if f.stage2 && math.Abs(p) > cfg.C+1e-12 {
			t.Fatalf("round %d: score %v outside the slab [-%v, %v]", i, p, cfg.C, cfg.C)
		}
		f.Learn(ds.Row(i), ds.Y[i])
		if f.stage2 && len(f.w) > 0 {
			phi := f.Features(ds.Row(i))
			if s := dot(phi, f.w); math.Abs(s) > cfg.C+1e-9 {
				t.Fatalf("round %d: projected w has score %v", i, s)
			}
		}
	}
}

// TestLearnersDeterministicAndPure runs every learner twice on the same
// stream: once plainly and once with Predict probes at other points before
// every Learn (what the seed 000 adversary does). Both runs must predict
// identically, and a rerun must reproduce them.
func TestLearnersDeterministicAndPure(t *testing.T) {
	reg := synth(500, 3, 0.1, 31)
	cls := synthClass(500, 3, 31)
	probes := synth(50, 3, 0, 77)
	for _, name := range LearnerNames {
		for _, ds := range []*Dataset{reg, cls} {
			if ds.Task == Classification && (name == "kawv" || name == "aogd-ald" || name == "nons-ald" ||
				name == "pkawv-nystrom" || name == "pkawv-taylor") {
				continue
			}
			t.Run(name+"/"+ds.Task.String(), func(t *testing.T) {
				set := Setting{Dim: ds.D, N: ds.N, Task: ds.Task, Width: 1, Seed: 5}
				spec := name
				if name == "forks" {
					spec = "forks:b=100:rho=100"
				}
				// PROS-N-KONS restarts at every dictionary change: on its own
				// it is worse than the mean on a short stream; centered (as
				// bkb regress runs it outside the papers) it must beat it.
				set.Center = name == "pros-n-kons"
				run := func(probe bool) []float64 {
					l, err := Build(spec, set)
					if err != nil {
						t.Fatal(err)
					}
					var out []float64
					for i := 0; i < ds.N; i++ {
						if probe {
							for j := 0; j < 3; j++ {
								l.Predict(probes.Row((i + j) % probes.N))
							}
						}
						out = append(out, l.Predict(ds.Row(i)))
						if probe {
							l.Predict(probes.Row(i % probes.N))
						}
						if err := l.Learn(ds.Row(i), ds.Y[i]); err != nil {
							t.Fatal(err)
						}
					}
					return out
				}
				a, b, c := run(false), run(true), run(false)
				if !slices.Equal(a, c) {
					t.Error("two runs with the same seed differ")
				}
				if d := maxAbs(a, b); d > 1e-12 {
					t.Errorf("probing Predict changed the predictions by %g", d)
				}
				var sq float64
				for i, p := range a {
					if math.IsNaN(p) || math.IsInf(p, 0) {
						t.Fatalf("round %d: prediction %v", i, p)
					}
					sq += (p - ds.Y[i]) * (p - ds.Y[i])
				}
				if name == "pros-n-kons" && ds.Task == Regression {
					// PROS-N-KONS restarts at every dictionary change (about
					// every 10th round here): it only has to beat the mean.
					var m, msq float64
					for i, y := range ds.Y {
						if i > 0 {
							msq += (m/float64(i) - y) * (m/float64(i) - y)
						} else {
							msq += y * y
						}
						m += y
					}
					if sq >= msq {
						t.Errorf("online MSE %v, running mean %v", sq/float64(ds.N), msq/float64(ds.N))
					}
				} else if ds.Task == Regression && name != "mean" && sq/float64(ds.N) > 0.1 {
					t.Errorf("online MSE %v on an easy stream", sq/float64(ds.N))
				}
			})
		}
	}
}

// TestLossDerivatives compares Deriv with a central difference.
func TestLossDerivatives(t *testing.T) {
	for _, l := range []Loss{Square, Hinge, Logistic} {
		for _, y := range []float64{-1, 1, 0.3} {
			for _, f := range []float64{-2.1, -0.4, 0.2, 0.77, 3} {
				h := 1e-6
				num := (l.Value(f+h, y) - l.Value(f-h, y)) / (2 * h)
				if d := l.Deriv(f, y); math.Abs(d-num) > 1e-5 {
					t.Errorf("%v at f=%v y=%v: Deriv %v, numeric %v", l, f, y, d, num)
				}
			}
		}
		if _, err := ParseLoss(l.String()); err != nil {
			t.Error(err)
		}
	}
	if Logistic.Value(-1000, 1) != 1000 || math.IsInf(Logistic.Value(1000, -1), 0) {
		t.Error("logistic loss overflows")
	}
	if _, err := ParseLoss("huber"); err == nil {
		t.Error("ParseLoss accepted huber")
	}
}

// TestConstructorErrors: invalid parameters are errors, not panics.
func TestConstructorErrors(t *testing.T) {
	k := kernel.RBF{LengthScale: 1}
	cases := []struct {
		name string
		err  func() error
	}{
		{"exact lambda", func() error { _, e := NewExact(k, 2, 0, KRR, 0); return e }},
		{"exact kernel", func() error { _, e := NewExact(kernel.RBF{}, 2, 1, KRR, 0); return e }},
		{"taylor degree", func() error { _, e := NewPKAWVTaylor(2, -1, 1, 1, AWV); return e }},
		{"nystrom lambda", func() error {
			_, e := NewPKAWVNystrom(PKAWVNystromConfig{Kernel: k, Dim: 2, Lambda: -1})
			return e
		}},
		{"kors beta", func() error {
			_, e := NewPKAWVNystrom(PKAWVNystromConfig{Kernel: k, Dim: 2, Lambda: 1, KORS: KORS{Mu: 1, Beta: 0}})
			return e
		}},
		{"ald alpha", func() error { _, e := NewAOGDALD(ALDConfig{Kernel: k, Dim: 2, U: 1}); return e }},
		{"nons mu", func() error { _, e := NewNONSALD(ALDConfig{Kernel: k, Dim: 2, Alpha: 0.1, U: 1}); return e }},
		{"forks rank", func() error {
			c := PaperFORKS(k, 2, 100, 1)
			c.Rank = 100
			_, e := NewFORKS(c)
			return e
		}},
		{"forks blocks", func() error {
			c := PaperFORKS(k, 2, 100, 1)
			c.Blocks = 3
			_, e := NewFORKS(c)
			return e
		}},
		{"fogd eta", func() error { _, e := NewFOGD(FOGDConfig{Kernel: k, Dim: 2, Frequencies: 10}); return e }},
		{"fogd features", func() error { _, e := NewFOGD(FOGDConfig{Kernel: k, Dim: 2, Eta: 1}); return e }},
		{"nogd budget", func() error { _, e := NewNOGD(NOGDConfig{Kernel: k, Dim: 2, Eta: 1}); return e }},
		{"dsg theta", func() error { _, e := NewDSG(DSGConfig{Kernel: k, Dim: 2}); return e }},
		{"dsg loss", func() error { _, e := NewDSG(DSGConfig{Kernel: k, Dim: 2, Theta: 1, Loss: 7}); return e }},
	}
	for _, c := range cases {
		if c.err() == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	ex, _ := NewExact(k, 2, 1, KRR, 3)
	for i := 0; i < 3; i++ {
		if err := ex.Learn([]float64{float64(i), 0}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ex.Learn([]float64{9, 9}, 1); err == nil {
		t.Error("exact learner grew past its capacity")
	}
	if err := ex.Learn([]float64{1}, 1); err == nil {
		t.Error("wrong dimension accepted")
	}
}
