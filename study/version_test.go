package study

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestVersion: a new configuration is the current version (4) with its
// defaults; version 2 keeps its constant beta; a stored configuration
// without a version (every journal written before versions) decodes as
// version 1, keeps version 1's defaults and refuses version 2's fields.
func TestVersion(t *testing.T) {
	t.Parallel()
	sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Space: sp}
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	if c.Version != CurrentVersion || c.Candidates != CandidatesGrow || c.Fit != FitARD || c.FitEvery != DefaultFitEvery || c.Kernel.Name != DefaultKernelV2 {
		t.Errorf("new config: %+v", c)
	}
	if c.Beta != DefaultBetaV3 { // no budget: no horizon appended
		t.Errorf("new config: beta %q, want %q", c.Beta, DefaultBetaV3)
	}
	v2 := Config{Space: sp, Version: 2}
	if err := v2.Normalize(); err != nil {
		t.Fatal(err)
	}
	if v2.Beta != DefaultBetaV2 || v2.Candidates != CandidatesGrow || v2.Fit != FitARD {
		t.Errorf("version 2 config: %+v", v2)
	}
	old := Config{Space: sp, Version: 1}
	if err := old.Normalize(); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "version")
	raw, _ = json.Marshal(m)
	got, err := DecodeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.Candidates != "" || got.Fit != "" || got.FitEvery != 0 || got.Arms.N != DefaultArmCount || got.Kernel.Name != DefaultKernel {
		t.Errorf("old config decoded as %+v", got)
	}
	bad := Config{Space: sp, Version: 1, Fit: FitARD}
	if err := bad.Normalize(); err == nil {
		t.Error("version 1 with fit ard: no error")
	}
	for _, c := range []Config{
		{Space: sp, Version: LatestVersion + 1},
		{Space: sp, Beta: "horizon"},
		{Space: sp, Beta: "horizon:-1"},
		{Space: sp, Beta: "horizon:x"},
		{Space: sp, Beta: "horizon:2:-3"},
		{Space: sp, Beta: "horizon:2:x"},
		{Space: sp, Fit: "magic"},
		{Space: sp, Candidates: "more"},
		{Space: sp, Fit: FitARD, Kernel: Kernel{Name: "matern32"}},
		{Space: sp, Policy: "ada-bkb", Candidates: CandidatesFixed},
	} {
		if err := c.Normalize(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestDomainDecode: every valid point of a mixed space encodes to a valid
// point of Space.Domain, and Decode inverts Encode; Decode of any point of
// the box is a valid point of the space.
func TestDomainDecode(t *testing.T) {
	t.Parallel()
	sp, err := NewSpace(Float("a", -1, 2), LogFloat("b", 1e-4, 1), Int("c", 1, 9), LogInt("d", 1, 1000),
		Discrete("e", 0, 1, 0.1), Categorical("f", "x", "y", "z"))
	if err != nil {
		t.Fatal(err)
	}
	dom := sp.Domain()
	if err := dom.Validate(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	u := make([]float64, sp.Dim())
	x, back := make([]float64, sp.Dim()), make([]float64, sp.Dim())
	enc := make([]float64, sp.EncodedDim())
	for i := 0; i < 500; i++ {
		for j := range u {
			u[j] = rng.Float64()
		}
		sp.FromUnit(x, u)
		sp.Encode(enc, x)
		if err := dom.Check(enc); err != nil {
			t.Fatalf("%v encodes to an invalid domain point: %v", x, err)
		}
		sp.Decode(back, enc)
		for j := range x {
			if d := back[j] - x[j]; d > 1e-9*(1+abs(x[j])) || -d > 1e-9*(1+abs(x[j])) {
				t.Fatalf("decode(encode(%v)) = %v", x, back)
			}
		}
		for j := range enc {
			enc[j] = rng.Float64()
		}
		sp.Decode(back, enc)
		if err := sp.Check(back); err != nil {
			t.Fatalf("decode of %v: %v", enc, err)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestReplayMixed: a version 2 study on a mixed space (log float, integer,
// step, categorical) grows valid candidates, and its records replay to the
// same points.
func TestReplayMixed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := NewSpace(LogFloat("lr", 1e-4, 1), Int("layers", 1, 8), Discrete("drop", 0, 0.5, 0.1), Categorical("act", "relu", "tanh", "gelu"))
	if err != nil {
		t.Fatal(err)
	}
	f := func(p Params) float64 {
		v := math.Pow(math.Log10(p.Float("lr"))+2.5, 2) + math.Pow(float64(p.Int("layers"))-5, 2)/4 + math.Abs(p.Float("drop")-0.2)
		if p.String("act") != "gelu" {
			v += 0.5
		}
		return v
	}
	st := storage.NewMemory()
	live, err := Create(ctx, st, "m", Config{Space: sp, Budget: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		if err := sp.Check(tr.X); err != nil {
			t.Errorf("trial %d: %v", tr.Number, err)
		}
		return f(tr.Params), nil
	}, 0); err != nil {
		t.Fatal(err)
	}
	re := loadReplayed(t, st, "m")
	if d := re.Info().Diverged; d != 0 {
		t.Errorf("replay diverged on %d asks", d)
	}
	best, _ := live.Best()
	if best.Value > 0.6 {
		t.Errorf("best %v after 40 trials (minimum 0)", best.Value)
	}
}

// TestUserArmsStayFixed: a grid arm set keeps every suggestion on the grid
// under version 2's defaults; Candidates grow refines it (asks points off
// the grid).
func TestUserArmsStayFixed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := objectives.Branin()
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	for _, grow := range []bool{false, true} {
		cfg := Config{Space: sp, Arms: Arms{Kind: "grid", PerDim: 12}, Budget: 30, Seed: 2}
		if grow {
			cfg.Candidates = CandidatesGrow
		}
		s, err := Create(ctx, storage.NewMemory(), "g", cfg)
		if err != nil {
			t.Fatal(err)
		}
		grid := map[string]bool{}
		arms := s.Arms()
		n, _ := arms.Dims()
		for i := 0; i < n; i++ {
			grid[pointKey(arms.RawRowView(i))] = true
		}
		off := 0
		if err := s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) {
			if !grid[pointKey(tr.X)] {
				off++
			}
			return f.Value(tr.X), nil
		}, 0); err != nil {
			t.Fatal(err)
		}
		if !grow && off > 0 {
			t.Errorf("fixed grid: %d of 30 suggestions off the grid", off)
		}
		if grow && off == 0 {
			t.Error("candidates grow: every suggestion on the grid")
		}
	}
}

// TestVersion2Golden: a version 2 study asks, after this change, the very
// points it asked before version 3 existed: trials 25 to 30 of a Branin
// study (seed 5, budget 30) for BKB and GP-UCB, as printed by the code of
// commit e4e588f (version 2 the current version, with the AVX2/FMA kernels
// of internal/chol; 4c7708e's scalar kernels differ from it at trial 25 in
// the fifth digit through rounding alone). A version 2 journal therefore
// replays as it was written.
func TestVersion2Golden(t *testing.T) {
	t.Parallel()
	want := map[string][][2]float64{
		"bkb": {{-3.1208972779532167, 12.603141387307733}, {9.2008284653667367, 2.2363258503335564}, {10, 2.3873776706982039},
			{9.2840831284660918, 3.5431692429937258}, {9.5254566284821554, 2.6720780058371787}, {8.5950971951901778, 0}},
		"gp-ucb": {{9.7408474432144772, 2.7352277705838728}, {3.2400496662943521, 0}, {9.318772296575272, 3.7215005047327705},
			{-2.8970469158895074, 12.285042971238719}, {9.4318121306220775, 2.5965400103913807}, {3.2006623557976361, 2.1440723258631151}},
	}
	f := objectives.Branin()
	for policy, pts := range want {
		checkGolden(t, Config{Version: 2, Policy: policy, Budget: 30, Seed: 5}, func(_ int, x []float64) float64 { return f.Value(x) }, pts)
	}
}

// checkGolden runs a Branin study with cfg (its space set here) for
// cfg.Budget trials, telling value(i, x) for the i-th ask x, and checks
// that the last len(want) asks are want: exactly on the build that
// recorded them (the tolerance only absorbs fused multiply-adds on other
// architectures).
func checkGolden(t *testing.T, cfg Config, value func(i int, x []float64) float64, want [][2]float64) {
	t.Helper()
	ctx := context.Background()
	f := objectives.Branin()
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Space = sp
	s, err := Create(ctx, storage.NewMemory(), "g", cfg)
	if err != nil {
		t.Fatal(err)
	}
	from := cfg.Budget - len(want)
	for i := 0; i < cfg.Budget; i++ {
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i >= from {
			w := want[i-from]
			for j := range w {
				if math.Abs(tr.X[j]-w[j]) > 1e-9*(1+math.Abs(w[j])) {
					t.Fatalf("version %d %s trial %d: %v, recorded %v", cfg.Version, cfg.Policy, i+1, tr.X, w)
				}
			}
		}
		if err := s.Tell(ctx, tr.Number, value(i, tr.X)); err != nil {
			t.Fatal(err)
		}
	}
}
