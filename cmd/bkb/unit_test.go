package main

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

func testConfig(policy string, budget int) *studyConfig {
	f, _ := objectives.Lookup("branin")
	return &studyConfig{
		Objective: objectiveSpec{Kind: "builtin", Name: "branin:2"},
		Space:     spaceSpec{Names: []string{"x1", "x2"}, Lower: f.Lower, Upper: f.Upper},
		Arms:      armsSpec{Kind: "sobol", N: 256, Seed: 3},
		Policy:    policy, Kernel: kernelSpec{Name: "rbf", LengthScale: 0.2},
		Lambda: 0.001, Qbar: 2, Beta: "2", Budget: budget, Seed: 7, Direction: "minimize",
		Init: 5, Standardize: true, FitEvery: 8,
	}
}

// TestEngineReplay: replaying the records of a run (with failures and a
// pending ask) into a fresh engine gives the same next arms as the engine
// that wrote them, for every policy.
func TestEngineReplay(t *testing.T) {
	for _, policy := range policyNames {
		cfg := testConfig(policy, 40)
		arms, err := cfg.buildArms()
		if err != nil {
			t.Fatal(err)
		}
		f := cfg.function()
		live := newEngine(cfg, arms)
		var recs []storage.Record
		for trial := 0; trial < 30; trial++ {
			arm, err := live.Ask()
			if err != nil {
				t.Fatal(err)
			}
			x := arms.RawRowView(arm)
			recs = append(recs, storage.Record{Kind: storage.KindAsk, Trial: trial, Arm: arm, X: x})
			if trial%9 == 4 {
				recs = append(recs, storage.Record{Kind: storage.KindFail, Trial: trial, Arm: arm, X: x, Error: "boom"})
				continue
			}
			y := f.Value(x)
			recs = append(recs, storage.Record{Kind: storage.KindTell, Trial: trial, Arm: arm, X: x, Y: &y})
			if err := live.Tell(trial, arm, y); err != nil {
				t.Fatal(err)
			}
		}
		// One pending ask, as a killed run leaves it.
		arm, _ := live.Ask()
		recs = append(recs, storage.Record{Kind: storage.KindAsk, Trial: 30, Arm: arm, X: arms.RawRowView(arm)})

		replayed := newEngine(cfg, arms)
		trials, diverged, err := replayed.replay(recs)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		if diverged != 0 || len(trials) != 31 || trials[30].Status != "pending" || trials[4].Status != "failed" {
			t.Fatalf("%s: diverged %d, %d trials, statuses %s %s", policy, diverged, len(trials), trials[30].Status, trials[4].Status)
		}
		for k := 0; k < 5; k++ {
			a, _ := live.Ask()
			b, _ := replayed.Ask()
			if a != b {
				t.Errorf("%s: ask %d after replay: arm %d, live engine %d", policy, k, b, a)
			}
		}
		if !reflect.DeepEqual(live.Fits, replayed.Fits) || live.lengthScale != replayed.lengthScale {
			t.Errorf("%s: fits differ after replay", policy)
		}
	}
}

// TestReplayRejectsContradictions: records that contradict each other are
// errors, not panics.
func TestReplayRejectsContradictions(t *testing.T) {
	cfg := testConfig("bkb", 10)
	arms, _ := cfg.buildArms()
	y := 1.0
	x := []float64{0, 0}
	for name, recs := range map[string][]storage.Record{
		"tell before ask": {{Kind: storage.KindTell, Trial: 0, Arm: 1, X: x, Y: &y}},
		"skipped trial":   {{Kind: storage.KindAsk, Trial: 1, Arm: 1, X: x}},
		"arm out of set":  {{Kind: storage.KindAsk, Trial: 0, Arm: 9999, X: x}},
		"told twice": {{Kind: storage.KindAsk, Trial: 0, Arm: 1, X: x}, {Kind: storage.KindTell, Trial: 0, Arm: 1, X: x, Y: &y},
			{Kind: storage.KindTell, Trial: 0, Arm: 1, X: x, Y: &y}},
		"other arm": {{Kind: storage.KindAsk, Trial: 0, Arm: 1, X: x}, {Kind: storage.KindTell, Trial: 0, Arm: 2, X: x, Y: &y}},
	} {
		if _, _, err := newEngine(cfg, arms).replay(recs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestFitLengthScale: the marginal-likelihood fit prefers a short length
// scale for a wiggly function and a long one for a smooth one.
func TestFitLengthScale(t *testing.T) {
	const n = 40
	x := make([]float64, n)
	wiggly, smooth := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) / (n - 1)
		wiggly[i] = math.Sin(2 * math.Pi * x[i] / 0.15)
		smooth[i] = x[i] - 0.5
	}
	ks := kernelSpec{Name: "rbf", LengthScale: 0.2}
	w := fitLengthScale(ks, 1e-3, 1, x, wiggly, 0.2)
	s := fitLengthScale(ks, 1e-3, 1, x, smooth, 0.2)
	if !(w.LengthScale < 0.1) || !(s.LengthScale > 0.3) {
		t.Errorf("fitted length scales: wiggly %v (want < 0.1), smooth %v (want > 0.3)", w.LengthScale, s.LengthScale)
	}
	if w.Evaluations != 21 || math.IsInf(w.LogMarginal, 0) {
		t.Errorf("fit: %+v", w)
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`python3 branin.py`:              {"python3", "branin.py"},
		`  a   'b c'  "d \"e\"" f\ g `:   {"a", "b c", `d "e"`, "f g"},
		`prog --x=''`:                    {"prog", "--x="},
		`'/path with space/plugin' -v 2`: {"/path with space/plugin", "-v", "2"},
	} {
		got, err := splitCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `   `, `a 'b`, `a \`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q): no error", bad)
		}
	}
}

// TestRecoverPanic: a panic becomes one "bkb: internal error" line and exit 1.
func TestRecoverPanic(t *testing.T) {
	var stderr bytes.Buffer
	code := func() (code int) {
		defer recoverPanic(&code, &stderr)
		panic("boom")
	}()
	if code != exitFailure || !strings.HasPrefix(stderr.String(), "bkb: internal error: boom") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

// TestRunInProcess exercises dispatch without the binary.
func TestRunInProcess(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"optimize", "-T", "8", "-q", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"complete": 8`) {
		t.Errorf("output:\n%s", out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"optimize", "-T", "8", "-q"}, &out, &errb); code != exitInterrupt || !strings.Contains(errb.String(), "interrupted after 0 trials") {
		t.Errorf("cancelled run: exit %d, stderr %q", code, errb.String())
	}
}
