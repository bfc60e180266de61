package study

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

func TestDiagH6(t *testing.T) {
	if os.Getenv("BKB_DIAG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	f := objectives.Hartmann6()
	sp, _ := Box(nil, f.Lower, f.Upper)
	s, _ := Create(ctx, storage.NewMemory(), "h6", Config{Space: sp, Budget: 200, Seed: 1})
	xstar := []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	for i := 1; i <= 200; i++ {
		tr, _ := s.Ask(ctx)
		s.Tell(ctx, tr.Number, f.Value(tr.X))
		if i%25 == 0 {
			e := s.eng
			r := e.ref
			m, v := r.predict(xstar)
			inc := r.incumbent(e)
			mi, vi := r.predict(inc)
			fit := e.fits[len(e.fits)-1]
			t.Logf("t=%d shift %.3g scale %.3g ls %.3g sv %.3g nv %.3g radius %.3g restarts %d | x*: m %.3g sd %.3g | inc %.3g: m %.3g sd %.3g dict %d", i, r.shift, r.scale,
				fit.LengthScales, fit.SignalVariance, fit.NoiseVariance, r.region.Radius, r.region.Restarts, m, math.Sqrt(v), inc, mi, math.Sqrt(vi), r.dtc.DictionarySize())
		}
	}
}
