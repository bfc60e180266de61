package study

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestObjectiveNaNAndPanicFailTheTrial: an objective that returns NaN or
// ±Inf, or panics, fails its trial (with the panic's message) and the run
// goes on to the budget, as an objective returning an error does.
func TestObjectiveNaNAndPanicFailTheTrial(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 2} {
		ctx := context.Background()
		cfg := braninConfig(t)
		cfg.Budget = 12
		s, err := Create(ctx, storage.NewMemory(), "bad", cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
			switch tr.Number {
			case 2:
				return math.NaN(), nil
			case 3:
				return math.Inf(-1), nil
			case 5:
				var m map[string]int
				m["boom"]++ // a nil-map panic, as a buggy objective would have
			case 7:
				panic("out of memory in the simulator")
			}
			return tr.Params.Float("x1") + tr.Params.Float("x2"), nil
		}, RunOptions{Workers: workers})
		if err != nil {
			t.Fatalf("workers %d: Run: %v", workers, err)
		}
		trials := s.Trials()
		if len(trials) != 12 {
			t.Fatalf("workers %d: %d trials, want 12", workers, len(trials))
		}
		want := map[int]string{2: "objective returned NaN", 3: "objective returned -Inf",
			5: "objective panicked: assignment to entry in nil map", 7: "objective panicked: out of memory in the simulator"}
		for _, tr := range trials {
			msg, bad := want[tr.Number]
			switch {
			case bad && (tr.State != Failed || !strings.Contains(tr.Error, msg)):
				t.Errorf("workers %d: trial %d: state %v error %q, want failed with %q", workers, tr.Number, tr.State, tr.Error, msg)
			case !bad && tr.State != Complete:
				t.Errorf("workers %d: trial %d: state %v (%s), want complete", workers, tr.Number, tr.State, tr.Error)
			}
		}
	}
}

// TestPanicErrorCarriesValue: the error of a panicking objective is a
// *PanicError holding the panic's value and a stack.
func TestPanicErrorCarriesValue(t *testing.T) {
	t.Parallel()
	_, err := callObjective(context.Background(), func(context.Context, *Trial) (float64, error) {
		panic(42)
	}, &Trial{})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != 42 || len(pe.Stack) == 0 {
		t.Fatalf("err %v, want a *PanicError with value 42 and a stack", err)
	}
}

func TestCheckedParams(t *testing.T) {
	t.Parallel()
	p := Params{"lr": 0.01, "layers": 3, "act": "relu", "half": 2.5}
	if v, err := p.GetFloat("lr"); err != nil || v != 0.01 {
		t.Errorf("GetFloat(lr) = %v, %v", v, err)
	}
	if v, err := p.GetFloat("layers"); err != nil || v != 3 {
		t.Errorf("GetFloat(layers) = %v, %v", v, err)
	}
	if v, err := p.GetInt("layers"); err != nil || v != 3 {
		t.Errorf("GetInt(layers) = %v, %v", v, err)
	}
	if v, err := p.GetString("act"); err != nil || v != "relu" {
		t.Errorf("GetString(act) = %v, %v", v, err)
	}
	for _, c := range []struct {
		get  func() error
		want string
	}{
		{func() error { _, err := p.GetFloat("lrr"); return err }, `no parameter "lrr" (the parameters are act, half, layers, lr)`},
		{func() error { _, err := p.GetInt("half"); return err }, `parameter "half" is 2.5 (float64), not an integer`},
		{func() error { _, err := p.GetFloat("act"); return err }, `parameter "act" is relu (string), not a number`},
		{func() error { _, err := p.GetString("Act"); return err }, `no parameter "Act"`},
	} {
		if err := c.get(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestNameListsAreCopies: changing the slice a name list returns does not
// change what a Config accepts.
func TestNameListsAreCopies(t *testing.T) {
	t.Parallel()
	p := PolicyNames()
	p[0] = "mine"
	ArmKinds()[0] = "mine"
	KernelNames()[0] = "mine"
	if PolicyNames()[0] != "bkb" || ArmKinds()[0] != "sobol" || KernelNames()[0] != "rbf" {
		t.Fatal("a name list changed through a returned slice")
	}
	cfg := braninConfig(t)
	cfg.Policy = "mine"
	if err := cfg.Normalize(); err == nil {
		t.Fatal("Normalize accepted policy \"mine\"")
	}
}
