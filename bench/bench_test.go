package bench

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
)

var bwOnce = sync.OnceValue(func() float64 { return MemoryBandwidth(256<<20, 0, 5) })

// BenchmarkBKBStep is a BKB step over A = 100,000 Hartmann 6 arms when the
// dictionary does not change: the rank-one update of every arm's mean and
// variance (one pass over the A x m embedding), then the UCB scores and
// their argmax (the Ask). pass-ratio is the time over one read of the
// embedding at the bandwidth measured in the same run (issue target: <= 2).
func BenchmarkBKBStep(b *testing.B) {
	for _, a := range []int{10000, 100000} {
		for _, m := range []int{100, 300} {
			b.Run(fmt.Sprintf("A=%d/m=%d", a, m), func(b *testing.B) {
				f := objectives.Hartmann6()
				arms, _ := objectives.Uniform(f.Domain(), a, 1)
				g, _ := gp.NewDTC(kernel.RBF{LengthScale: 0.2}, 6, 0.0025)
				g.SetCandidates(arms)
				dict := make([]int, m)
				for i := range dict {
					dict[i] = i
					g.ObserveCandidate(i, -f.Value(arms.RawRowView(i)))
				}
				if _, _, err := g.SetDictionary(dict); err != nil {
					b.Fatal(err)
				}
				scores := make([]float64, a)
				rng := rand.New(rand.NewPCG(1, 2))
				bw := bwOnce()
				b.ReportAllocs()
				b.ResetTimer()
				for it := 0; it < b.N; it++ {
					i := rng.IntN(m)
					g.ObserveCandidate(i, -f.Value(arms.RawRowView(i)))
					acquisition.UCB(scores, g.Means(), g.Variances(), 0.15)
					sinkInt = acquisition.Argmax(scores)
				}
				b.StopTimer()
				pass := float64(a) * float64(m) * 8 / bw
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/pass, "pass-ratio")
				b.ReportMetric(bw/1e9, "GB/s")
			})
		}
	}
}

var sinkInt int

// BenchmarkPolicyStep is a whole BKB or GP-UCB step (Ask and Tell, with
// resampling) through the bandit API on Hartmann 6 arms, after a
// warm-up of t steps.
func BenchmarkPolicyStep(b *testing.B) {
	for _, tc := range []struct {
		variant string
		a, t    int
		ls      float64
	}{{"bkb", 10000, 1000, 0.3}, {"bkb", 10000, 2000, 0.2}, {"gp-ucb", 10000, 1000, 0.3}, {"bkb-paper", 10000, 200, 0.3}, {"bkb", 100000, 1000, 0.3}} {
		b.Run(fmt.Sprintf("%s/A=%d/t=%d/l=%g", tc.variant, tc.a, tc.t, tc.ls), func(b *testing.B) {
			f := objectives.Hartmann6()
			arms, _ := objectives.Uniform(f.Domain(), tc.a, 1)
			obj, _ := newHartmann6(arms, 1)
			p, err := NewPolicy(tc.variant, arms, tc.ls, 1, tc.t+b.N+10)
			if err != nil {
				b.Fatal(err)
			}
			step := func() {
				a, _ := p.Ask()
				p.Tell(a, obj.noiseless(arms.RawRowView(a)))
			}
			for i := 0; i < tc.t; i++ {
				step()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.StopTimer()
			if s, ok := p.(bandit.StatsReporter); ok {
				st := s.Stats()
				b.ReportMetric(float64(st.DictionarySize), "m")
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/(float64(tc.a)*float64(st.DictionarySize)*8/bwOnce()), "pass-ratio")
			}
		})
	}
}
