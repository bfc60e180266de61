package study

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// goldenStudies are the studies recorded at every configuration version
// (testdata/golden/vN-NAME.jsonl): Hartmann 3 with BKB, noise-free and
// with heavy noise (the noise rules of versions 4 and 7), two
// objectives with a constraint where the version models them, Levy in 30
// dimensions from version 9 on, a mixed space from version 12 on and a
// fixed arm set from version 13 on.
var goldenStudies = []struct {
	name       string
	minVersion int
	cfg        func(sp Space) Config
	value      func(i int, x []float64) Outcome
}{
	{"hartmann3", 1, func(sp Space) Config { return Config{Space: sp, Budget: 60, Seed: 3} },
		func(_ int, x []float64) Outcome { return Outcome{Value: objectives.Hartmann3().Value(x)} }},
	{"hartmann3-noisy", 1, func(sp Space) Config { return Config{Space: sp, Budget: 60, Seed: 4} },
		func(i int, x []float64) Outcome {
			return Outcome{Value: objectives.Hartmann3().Value(x) + 0.3*goldenNoise(i)}
		}},
	{"tradeoffs", 2, func(sp Space) Config {
		return Config{Space: sp, Budget: 40, Seed: 5, Directions: []Direction{Minimize, Minimize}, Constraints: 1}
	}, func(_ int, x []float64) Outcome {
		f := objectives.Hartmann3().Value(x)
		g := (x[0]-0.2)*(x[0]-0.2) + (x[1]-0.8)*(x[1]-0.8)
		return Outcome{Values: []float64{f, g}, Constraints: []float64{x[2] - 0.9}}
	}},
	// Many parameters: version 9's rules above 20 coordinates (the
	// initial design capped at 20, asks without a polish, the trust
	// region's failure tolerance).
	{"levy30", 9, func(Space) Config {
		f := objectives.Levy(30)
		sp, err := Box(nil, f.Lower, f.Upper)
		if err != nil {
			panic(err)
		}
		return Config{Space: sp, Budget: 45, Seed: 6}
	}, func(_ int, x []float64) Outcome { return Outcome{Value: objectives.Levy(30).Value(x)} }},
	// Integers and a categorical, a deterministic value with plateaus:
	// version 12's fresh asks (no repeated configuration).
	{"mixed", 12, func(Space) Config {
		sp, err := NewSpace(Int("k", 1, 12), Categorical("w", "a", "b", "c"), Int("p", 1, 4))
		if err != nil {
			panic(err)
		}
		return Config{Space: sp, Budget: 50, Seed: 7}
	}, func(_ int, x []float64) Outcome { return Outcome{Value: goldenPlateau(x)} }},
	// A fixed arm set: version 13's fresh asks there (version 12's BKB
	// asks its best arm again once sure of it).
	{"arms", 13, func(sp Space) Config {
		return Config{Space: sp, Budget: 60, Seed: 8, Candidates: CandidatesFixed, Arms: Arms{Kind: "sobol", N: 128}}
	}, func(_ int, x []float64) Outcome { return Outcome{Value: objectives.Hartmann3().Value(x)} }},
}

// goldenPlateau is a deterministic value on the mixed golden study's
// space (k, the index of w, p) with plateaus over ranges of k, as
// cross-validation errors have.
func goldenPlateau(x []float64) float64 {
	v := math.Floor(math.Abs(x[0]-7)/3) * 0.1
	if x[1] != 1 {
		v += 0.05
	}
	return v + math.Abs(x[2]-2)*0.02
}

// goldenNoise is a fixed pseudo-random sequence in [-1, 1] (the noise of
// the i-th evaluation), the same on every machine.
func goldenNoise(i int) float64 {
	u := uint64(i+1) * 0x9e3779b97f4a7c15
	u ^= u >> 29
	u *= 0xbf58476d1ce4e5b9
	u ^= u >> 32
	return float64(u>>11)/float64(1<<53)*2 - 1
}

// goldenNext is what a golden journal's sidecar holds: the point the
// study asks after its records.
type goldenNext struct {
	X []float64 `json:"x"`
}

// TestReplayGolden replays the journal recorded at each configuration
// version and asks one more trial: every stored ask must be the engine's
// own choice (no divergence) and the next point the one recorded beside
// the journal, bit for bit. It runs again in a child process on
// internal/chol's portable kernels (BKB_NOAVX2=1), which compute the
// assembly's bits: the journals replay on a CPU without AVX2 too.
// BKB_UPDATE_GOLDEN=1 records the journals of versions that have none.
func TestReplayGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	if os.Getenv("BKB_UPDATE_GOLDEN") != "" {
		recordGolden(t, dir)
	}
	for v := 1; v <= LatestVersion; v++ {
		for _, g := range goldenStudies {
			if v < g.minVersion {
				continue
			}
			t.Run(fmt.Sprintf("v%d-%s", v, g.name), func(t *testing.T) {
				t.Parallel()
				replayGolden(t, filepath.Join(dir, fmt.Sprintf("v%d-%s.jsonl", v, g.name)))
			})
		}
	}
	if chol.Accelerated() && !t.Failed() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReplayGolden$", "-test.count=1")
		cmd.Env = append(os.Environ(), "BKB_NOAVX2=1", "BKB_UPDATE_GOLDEN=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the golden journals on the portable kernels (BKB_NOAVX2=1): %v\n%s", err, out)
		}
	}
}

func replayGolden(t *testing.T, path string) {
	ctx := context.Background()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with BKB_UPDATE_GOLDEN=1)", err)
	}
	var next goldenNext
	b, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".next.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &next); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "g.jsonl") // no snapshot: the whole journal replays
	if err := os.WriteFile(copyPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := storage.OpenJournalStore(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Records(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	trials := 0
	for _, r := range recs {
		trials = max(trials, r.Trial+1)
	}
	s, err := Load(ctx, st, "", Options{Budget: trials + 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Ask(ctx)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d := s.Info().Diverged; d != 0 {
		t.Errorf("%s: %d stored asks differ from the engine's choice", path, d)
	}
	if !slices.Equal(bitsOfX(tr.X), bitsOfX(next.X)) {
		t.Errorf("%s (accelerated %v): the next trial is %v, recorded %v", path, chol.Accelerated(), tr.X, next.X)
	}
}

func bitsOfX(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

// recordGolden records the journals (and next points) of the versions
// that have none: a released version's journal is never rewritten.
func recordGolden(t *testing.T, dir string) {
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := objectives.Hartmann3()
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= LatestVersion; v++ {
		for _, g := range goldenStudies {
			path := filepath.Join(dir, fmt.Sprintf("v%d-%s.jsonl", v, g.name))
			if v < g.minVersion {
				continue
			}
			if _, err := os.Stat(path); err == nil {
				continue
			}
			cfg := g.cfg(sp)
			cfg.Version = v
			if cfg.Directions != nil && v < 2 {
				continue
			}
			st, err := storage.OpenJournalStore(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Create(ctx, st, "golden", cfg, Options{Worker: "golden"})
			if err != nil {
				t.Fatalf("v%d %s: %v", v, g.name, err)
			}
			for i := 0; i < cfg.Budget; i++ {
				tr, err := s.Ask(ctx)
				if err != nil {
					t.Fatal(err)
				}
				o := g.value(i, tr.X)
				o.Seconds = 1
				if err := s.TellOutcome(ctx, tr.Number, o); err != nil {
					t.Fatal(err)
				}
			}
			st.Close()
			os.Remove(storage.SnapshotPath(path))
			os.RemoveAll(storage.SnapshotChunksPath(path))
			// The next point, from a fresh replay of the journal.
			raw, _ := os.ReadFile(path)
			cp := filepath.Join(t.TempDir(), "n.jsonl")
			os.WriteFile(cp, raw, 0o644)
			st2, err := storage.OpenJournalStore(cp)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := Load(ctx, st2, "", Options{Budget: cfg.Budget + 1})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := s2.Ask(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st2.Close()
			b, _ := json.Marshal(goldenNext{X: tr.X})
			if err := os.WriteFile(strings.TrimSuffix(path, ".jsonl")+".next.json", append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("recorded %s", path)
		}
	}
}
