package online

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// TestKONSAgainstDenseReference replays PROS-N-KONS and CON-KONS against a
// dense implementation of the same algorithm written from the paper's
// formulas with gonum (A as a full matrix, A^{-1} by LU solve): the
// A-norm projection onto |w.phi| <= C, the Newton step A += eta g^2 phi
// phi^T, wtil = w - g A^{-1} phi, and at a dictionary change either the
// restart A = alpha I, w = 0 or the transfer A <- blockdiag(A, alpha),
// w <- (w; 0). The dictionary and features are the learner's (KORS is
// random); everything else is recomputed.
func TestKONSAgainstDenseReference(t *testing.T) {
	t.Parallel()
	ds := synth(400, 3, 0.1, 9)
	for _, restart := range []bool{true, false} {
		cfg := KONSConfig{Kernel: kernel.RBF{LengthScale: 0.7}, Dim: ds.D, KORS: KORS{Mu: 0.5, Eps: 0.5, Beta: 1},
			Alpha: 2, C: 1, Restart: restart, Seed: 3}
		k, err := NewKONS(cfg)
		if err != nil {
			t.Fatal(err)
		}
		eta := 1 / (16 * cfg.C * cfg.C)
		var A *mat.Dense
		var wtil []float64
		solve := func(b []float64) []float64 {
			var x mat.VecDense
			if err := x.SolveVec(A, mat.NewVecDense(len(b), append([]float64(nil), b...))); err != nil {
				t.Fatal(err)
			}
			return x.RawVector().Data
		}
		var maxDiff float64
		grown := 0
		for i := 0; i < ds.N; i++ {
			x, y := ds.Row(i), ds.Y[i]
			m := k.Size()
			z := make([]float64, m)
			k.ny.Embed(z, x)
			var want float64
			if m > 0 {
				want = math.Max(-cfg.C, math.Min(cfg.C, dot(wtil, z)))
			}
			maxDiff = math.Max(maxDiff, math.Abs(k.Predict(x)-want))
			if m > 0 {
				w := append([]float64(nil), wtil...)
				if yt := dot(wtil, z); math.Abs(yt) > cfg.C {
					q := solve(z)
					axpy(-(yt-math.Copysign(cfg.C, yt))/dot(z, q), q, w)
				}
				g := 2 * (dot(w, z) - y)
				for a := 0; a < m; a++ {
					for b := 0; b < m; b++ {
						A.Set(a, b, A.At(a, b)+eta*g*g*z[a]*z[b])
					}
				}
				q := solve(z)
				wtil = w
				axpy(-g, q, wtil)
			}
			if err := k.Learn(x, y); err != nil {
				t.Fatal(err)
			}
			if k.Size() == m+1 {
				grown++
				B := mat.NewDense(m+1, m+1, nil)
				if restart {
					wtil = make([]float64, m+1)
				} else {
					for a := 0; a < m; a++ {
						for b := 0; b < m; b++ {
							B.Set(a, b, A.At(a, b))
						}
					}
					wtil = append(wtil, 0)
				}
				for a := 0; a < m+1; a++ {
					if restart || a == m {
						B.Set(a, a, cfg.Alpha)
					}
				}
				A = B
			}
		}
		if grown < 10 {
			t.Fatalf("restart=%v: only %d dictionary changes, the test needs more", restart, grown)
		}
		if maxDiff > 1e-9 {
			t.Errorf("restart=%v: predictions differ from the dense reference by %g", restart, maxDiff)
		}
	}
}

// TestWidthMixRegretBound checks the exponentially weighted forecaster's
// guarantee for eta = 1/2 (Cesa-Bianchi and Lugosi 2006, Prop. 3.1) on a
// stream where the experts' predictions and the targets are in [0, 1]: the
// mix's cumulative square loss is at most the best expert's plus
// ln(K)/(1/2). WidthMix uses a data-dependent eta_t >= 1/2, for which the
// bound is not a theorem; this checks it still holds. The experts are FOGD
// learners at four widths (clipped to [0, 1] by a wrapper).
func TestWidthMixRegretBound(t *testing.T) {
	t.Parallel()
	ds := synth(1500, 3, 0.1, 4)
	ds.Scale(nil, &UnitRange)
	widths := WidthGrid(1)
	experts := make([]Learner, len(widths))
	refs := make([]Learner, len(widths))
	for i, w := range widths {
		for _, dst := range []*Learner{&experts[i], &refs[i]} {
			l, err := NewFOGD(FOGDConfig{Kernel: kernel.RBF{LengthScale: w}, Dim: ds.D, Frequencies: 50, Eta: 0.1, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			*dst = clipped{l}
		}
	}
	mix, err := NewWidthMix(experts, widths, Regression, ds.N)
	if err != nil {
		t.Fatal(err)
	}
	var mixLoss float64
	expLoss := make([]float64, len(refs))
	for i := 0; i < ds.N; i++ {
		x, y := ds.Row(i), ds.Y[i]
		p := mix.Predict(x)
		mixLoss += (p - y) * (p - y)
		if err := mix.Learn(x, y); err != nil {
			t.Fatal(err)
		}
		for j, r := range refs {
			f := r.Predict(x)
			expLoss[j] += (f - y) * (f - y)
			r.Learn(x, y)
		}
	}
	best := math.Inf(1)
	for _, l := range expLoss {
		best = math.Min(best, l)
	}
	bound := best + math.Log(float64(len(widths)))/0.5
	if mixLoss > bound {
		t.Errorf("mix loss %v > best expert %v + ln K / eta = %v", mixLoss, best, bound)
	}
	worst := 0.0
	for _, l := range expLoss {
		worst = math.Max(worst, l)
	}
	if !(worst > best+1) {
		t.Fatalf("experts too similar (%v): the test cannot tell a mix from any expert", expLoss)
	}
}

// clipped clips a learner's predictions to [0, 1].
type clipped struct{ Learner }

func (c clipped) Predict(x []float64) float64 {
	return math.Max(0, math.Min(1, c.Learner.Predict(x)))
}

// TestWidthMixPruning: dropping the experts PruneNats behind the leader
// changes the mix's predictions by at most their weight, exp(-PruneNats)
// = 1e-13 of the range, against the same mix that runs every expert to
// the end; and it does drop experts (the test would otherwise compare a
// mix with itself).
func TestWidthMixPruning(t *testing.T) {
	t.Parallel()
	ds := synth(1500, 3, 0.05, 9)
	ds.Scale(&FeatureRange, &UnitRange)
	widths := []float64{0.05, 0.1, 0.5, 1, 4}
	mixes := make([]*WidthMix, 2)
	for m := range mixes {
		experts := make([]Learner, len(widths))
		for i, w := range widths {
			l, err := NewFOGD(FOGDConfig{Kernel: kernel.RBF{LengthScale: w}, Dim: ds.D, Frequencies: 50, Eta: 0.1, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			experts[i] = l
		}
		mix, err := NewWidthMix(experts, widths, Regression, ds.N)
		if err != nil {
			t.Fatal(err)
		}
		mixes[m] = mix
	}
	mixes[1].prune = math.Inf(1)
	var worst float64
	for i := 0; i < ds.N; i++ {
		x, y := ds.Row(i), ds.Y[i]
		worst = math.Max(worst, math.Abs(mixes[0].Predict(x)-mixes[1].Predict(x)))
		for _, m := range mixes {
			if err := m.Learn(x, y); err != nil {
				t.Fatal(err)
			}
		}
	}
	if mixes[0].Active() >= len(widths) || mixes[1].Active() != len(widths) {
		t.Fatalf("active experts %d (pruned) and %d (not pruned) of %d: nothing to compare", mixes[0].Active(), mixes[1].Active(), len(widths))
	}
	if worst > 1e-9 {
		t.Errorf("pruning moved a prediction by %g", worst)
	}
	t.Logf("%d of %d experts left; largest difference %g", mixes[0].Active(), len(widths), worst)
}
