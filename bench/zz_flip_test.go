package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/bkb-go/bkb/internal/cputime"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

func TestZZFlip(t *testing.T) {
	T, _ := strconv.Atoi(os.Getenv("ZZ_T"))
	if T == 0 {
		t.Skip()
	}
	seed, _ := strconv.ParseUint(os.Getenv("ZZ_SEED"), 10, 64)
	ver, _ := strconv.Atoi(os.Getenv("ZZ_V"))
	nf, _ := strconv.ParseFloat(os.Getenv("ZZ_NOISE"), 64)
	fn := os.Getenv("ZZ_F")
	if fn == "" {
		fn = "hartmann6"
	}
	f, _ := objectives.Lookup(fn)
	space, _ := study.Box(nil, f.Lower, f.Upper)
	cfg := study.Config{Space: space, Budget: T, Seed: seed, Version: ver}
	ctx := context.Background()
	s, err := study.Create(ctx, storage.NewMemory(), "z", cfg)
	if err != nil {
		t.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(seed, noiseStream))
	sd := nf * Range(f)
	nf0 := 0
	c0, _ := cputime.Process()
	best := math.Inf(1)
	pf, _ := strconv.Atoi(os.Getenv("ZZ_PROF_FROM"))
	for i := 1; i <= T; i++ {
		if pf > 0 && i == pf {
			f, _ := os.Create("/tmp/zzlate.prof")
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		y := f.Value(tr.X)
		best = math.Min(best, y-f.MinValue)
		y += sd * noise.NormFloat64()
		if err := s.Tell(ctx, tr.Number, y); err != nil {
			t.Fatal(err)
		}
		info := s.Info()
		for _, fr := range info.Fits[nf0:] {
			gm := 1.0
			for _, l := range fr.LengthScales {
				gm *= l
			}
			gm = math.Pow(gm, 1/float64(len(fr.LengthScales)))
			fmt.Printf("fit t=%d cold=%v noise=%.3g signal=%.3g rho=%.3g ls=%.3g lml=%.4g warp=%v\n", fr.Observations, fr.Cold, fr.NoiseVariance, fr.SignalVariance, fr.NoiseVariance/(fr.NoiseVariance+fr.SignalVariance), gm, fr.LogMarginal, info.Warp.Active())
		}
		nf0 = len(info.Fits)
		if i%250 == 0 || i == T {
			c1, _ := cputime.Process()
			fmt.Printf("t=%d cpu ms/trial %.1f dict %d best %.3g\n", i, float64((c1-c0).Microseconds())/1e3/250, info.Stats.DictionarySize, best)
			c0 = c1
		}
	}
}
