package online

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// TestFORKSGermanRankBound (with -full) measures what a rank-k feature map
// can do on german at all, in hindsight, for every width of seed 003's grid
// 2^[-5:0.5:7]. FORKS predicts with w.phi(x), phi a rank-k map of a Nystrom
// sketch (k = 0.1 B = 5 in Table 1). The best rank-k map of the data (the
// top-k kernel principal components of the full 1000 x 1000 kernel
// matrix, which any rank-k sketch of it can only approximate) with the
// least-squares fit of the labels on all 1000 examples (and an intercept,
// which FORKS does not have), scored on the same examples, bounds from
// below what the online learner can reach on a random order. The test
// logs the best mistake rate over the widths for each k.
func TestFORKSGermanRankBound(t *testing.T) {
	if !*full {
		t.Skip("full-dataset analysis; use -full")
	}
	ds, err := openDataset(EmbeddedPrefix + "german.csv.gz") // == ../shared/data/german.csv.gz
	if err != nil {
		t.Fatal(err)
	}
	ds.Scale(&FeatureRange, nil)
	n := ds.N
	ranks := []int{5, 10, 20, 50}
	best := make([]float64, len(ranks))
	bestW := make([]float64, len(ranks))
	for i := range best {
		best[i] = 1
	}
	for e := -5.0; e <= 7; e += 0.5 {
		w := math.Pow(2, e)
		k := kernel.RBF{LengthScale: w}
		K := mat.NewSymDense(n, nil)
		for a := 0; a < n; a++ {
			for b := a; b < n; b++ {
				K.SetSym(a, b, k.Eval(ds.Row(a), ds.Row(b)))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(K, true) {
			t.Fatal("eigen decomposition failed")
		}
		var V mat.Dense
		eig.VectorsTo(&V)
		vals := eig.Values(nil) // ascending
		for ri, r := range ranks {
			// Features: top-r components scaled by sqrt(lambda) plus an
			// intercept column; least squares on the +-1 labels.
			X := mat.NewDense(n, r+1, nil)
			for a := 0; a < n; a++ {
				X.Set(a, r, 1)
				for c := 0; c < r; c++ {
					j := n - 1 - c
					X.Set(a, c, V.At(a, j)*math.Sqrt(math.Max(vals[j], 0)))
				}
			}
			var beta mat.VecDense
			if err := beta.SolveVec(X, mat.NewVecDense(n, ds.Y)); err != nil {
				continue
			}
			var pred mat.VecDense
			pred.MulVec(X, &beta)
			mistakes := 0
			for a := 0; a < n; a++ {
				if sign(pred.AtVec(a)) != ds.Y[a] {
					mistakes++
				}
			}
			if rate := float64(mistakes) / float64(n); rate < best[ri] {
				best[ri], bestW[ri] = rate, w
			}
		}
	}
	for ri, r := range ranks {
		t.Logf("rank %2d: best in-sample mistake rate %.1f%% (width %.3g)", r, 100*best[ri], bestW[ri])
	}
}

// lsMistakes fits the +-1 labels by least squares on the rows of X (n x
// p) and returns the in-sample mistake rate of the sign of the fit.
func lsMistakes(t *testing.T, X *mat.Dense, y []float64) float64 {
	n, _ := X.Dims()
	var beta mat.VecDense
	if err := beta.SolveVec(X, mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	var pred mat.VecDense
	pred.MulVec(X, &beta)
	m := 0
	for a := 0; a < n; a++ {
		if sign(pred.AtVec(a)) != y[a] {
			m++
		}
	}
	return float64(m) / float64(n)
}

// TestFORKSGermanOwnMap (with -full) runs FORKS with the Table 1 settings
// on 20 orders of german and, after each pass, fits the labels of all 1000
// examples in hindsight by least squares on FORKS's own final rank-k
// feature map (with and without an intercept): the best any linear
// learner on that map could have done on the examples it saw, which an
// online learner on a random order does not beat.
func TestFORKSGermanOwnMap(t *testing.T) {
	if !*full {
		t.Skip("full-dataset analysis; use -full")
	}
	ds, err := openDataset(EmbeddedPrefix + "german.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	ds.Scale(&FeatureRange, nil)
	for _, rank := range []int{5, 20} {
		for _, width := range []float64{2, 4, 8} {
			var online, plain, icpt []float64
			for o := uint64(1); o <= 20; o++ {
				c := PaperFORKS(kernel.RBF{LengthScale: width}, ds.D, ds.N, o)
				if rank != c.Rank {
					c.Rank, c.Sm = rank, 2*rank
				}
				f, err := NewFORKS(c)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Prequential(t.Context(), f, NewDatasetStream(ds, o), nil)
				if err != nil {
					t.Fatal(err)
				}
				online = append(online, res.MistakeRate())
				p := len(f.Features(ds.Row(0)))
				X := mat.NewDense(ds.N, p, nil)
				Xi := mat.NewDense(ds.N, p+1, nil)
				for a := 0; a < ds.N; a++ {
					phi := f.Features(ds.Row(a))
					for j, v := range phi {
						X.Set(a, j, v)
						Xi.Set(a, j, v)
					}
					Xi.Set(a, p, 1)
				}
				plain = append(plain, lsMistakes(t, X, ds.Y))
				icpt = append(icpt, lsMistakes(t, Xi, ds.Y))
			}
			mo, _ := meanStd(online)
			mp, _ := meanStd(plain)
			mi, _ := meanStd(icpt)
			t.Logf("k = %2d, width %g: FORKS online %.1f%%; least squares in hindsight on its final map %.1f%%, with intercept %.1f%%",
				rank, width, 100*mo, 100*mp, 100*mi)
		}
	}
}
