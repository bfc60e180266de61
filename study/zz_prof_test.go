package study

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

func cpuNow() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func TestZZProfile(t *testing.T) {
	T, _ := strconv.Atoi(os.Getenv("ZZT"))
	if T == 0 {
		t.Skip()
	}
	from, _ := strconv.Atoi(os.Getenv("ZZFROM"))
	ver, _ := strconv.Atoi(os.Getenv("ZZV"))
	seed, _ := strconv.Atoi(os.Getenv("ZZSEED"))
	fn := os.Getenv("ZZF")
	if fn == "" {
		fn = "hartmann6"
	}
	f, err := objectives.Lookup(fn)
	if err != nil {
		t.Fatal(err)
	}
	space, _ := Box(nil, f.Lower, f.Upper)
	ctx := context.Background()
	s, err := Create(ctx, storage.NewMemory(), "p", Config{Space: space, Budget: T, Seed: uint64(max(seed, 1)), Version: ver})
	if err != nil {
		t.Fatal(err)
	}
	best := 1e300
	start := time.Now()
	c0 := cpuNow()
	every := max(T/20, 50)
	for i := 1; i <= T; i++ {
		if i == from && from > 0 {
			pf, _ := os.Create(os.Getenv("ZZPROF"))
			pprof.StartCPUProfile(pf)
			defer pprof.StopCPUProfile()
		}
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		y := f.Value(tr.X)
		best = min(best, y-f.MinValue)
		if err := s.Tell(ctx, tr.Number, y); err != nil {
			t.Fatal(err)
		}
		if i%every == 0 {
			c := cpuNow()
			st := s.eng.stats()
			rs := 0
			if s.eng.ref != nil {
				rs = s.eng.ref.resparsified
			}
			fmt.Printf("%s v%d seed %d t=%d cpu %.1f ms/trial (window) wall %.0fs dict %d resp %d best %.3g\n", fn, s.cfg.Version, seed, i, 1e3*(c-c0)/float64(every), time.Since(start).Seconds(), st.DictionarySize, rs, best)
			c0 = c
		}
	}
}
