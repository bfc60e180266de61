package bandit

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"

	"github.com/bkb-go/bkb/kernel"
)

// freshPolicy is a policy that also asks fresh.
type freshPolicy interface {
	Policy
	FreshAsker
}

// TestAskFresh checks AskFresh on every policy against Ask, by brute force
// over a deterministic reward on 40 arms: a fresh run asks 40 distinct
// arms in its first 40 asks, then repeats without an error; and it asks
// what a plain run of the same policy asks, told the same rewards, up to
// the first ask at which the plain run repeats an arm (where the fresh run
// asks an untold one), so that AskFresh changes Ask only where Ask would
// repeat. The plain runs must repeat, or the second part would pass
// vacuously.
func TestAskFresh(t *testing.T) {
	t.Parallel()
	const n, asks = 40, 60
	arms := randArms(7, n, 2)
	f := &bumpy{c: []float64{0.3, 0.7}}
	reward := func(a int) float64 { return f.value(arms.RawRowView(a)) }
	opt := func() Options {
		return Options{Kernel: kernel.RBF{LengthScale: 0.3}, Lambda: 1e-3, Beta: acquisition.Constant(2), Seed: 3}
	}
	lazy := func() Options { o := opt(); o.Lazy = true; return o }
	for _, c := range []struct {
		name string
		make func() (freshPolicy, error)
	}{
		{"gp-ucb", func() (freshPolicy, error) { return NewGPUCB(arms, opt()) }},
		{"bkb", func() (freshPolicy, error) { return NewBKB(arms, opt()) }},
		{"thompson", func() (freshPolicy, error) { return NewThompson(arms, opt(), false) }},
		{"ei", func() (freshPolicy, error) { return NewEI(arms, opt()) }},
		{"gp-ucb lazy", func() (freshPolicy, error) { return NewGPUCB(arms, lazy()) }},
		{"bkb lazy", func() (freshPolicy, error) { return NewBKB(arms, lazy()) }},
		{"bbkb", func() (freshPolicy, error) { return NewBBKB(arms, BBKBOptions{Options: opt()}) }},
		{"bbkb lazy", func() (freshPolicy, error) { return NewBBKB(arms, BBKBOptions{Options: lazy()}) }},
		{"random", func() (freshPolicy, error) { return NewRandom(n, 3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fresh, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			plain, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			told := make([]bool, n)
			lockstep, plainRepeated := true, false
			for i := 0; i < asks; i++ {
				a, err := fresh.AskFresh()
				if err != nil {
					t.Fatalf("ask %d: %v", i, err)
				}
				if i < n && told[a] {
					t.Fatalf("ask %d: arm %d again, with %d arms never asked", i, a, n-i)
				}
				if lockstep {
					b, err := plain.Ask()
					if err != nil {
						t.Fatalf("plain ask %d: %v", i, err)
					}
					switch {
					case told[b]:
						plainRepeated, lockstep = true, false // the plain run repeats: fresh asks differ from here
					case a != b:
						t.Fatalf("ask %d: AskFresh %d, Ask %d (not a repeat)", i, a, b)
					default:
						if err := plain.Tell(b, reward(b)); err != nil {
							t.Fatal(err)
						}
					}
				}
				told[a] = true
				if err := fresh.Tell(a, reward(a)); err != nil {
					t.Fatal(err)
				}
			}
			if !plainRepeated && c.name != "random" {
				t.Errorf("the plain run repeated no arm in %d asks: the lockstep check is vacuous", asks)
			}
		})
	}
}

// TestAskFreshBatch: a batch opened by AskFresh leaves out the told arms
// while arms are pending, and a full batch is still reported.
func TestAskFreshBatch(t *testing.T) {
	t.Parallel()
	arms := randArms(11, 30, 2)
	f := &bumpy{c: []float64{0.6, 0.2}}
	p, err := NewBBKB(arms, BBKBOptions{Options: Options{Kernel: kernel.RBF{LengthScale: 0.3}, Lambda: 1e-3, Beta: acquisition.Constant(2), Seed: 5}, MinBatch: 4, MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	told := map[int]bool{}
	for round := 0; round < 6; round++ {
		var batch []int
		for {
			a, err := p.AskFresh()
			if errors.Is(err, ErrBatchFull) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if told[a] {
				t.Fatalf("round %d: told arm %d asked again", round, a)
			}
			batch = append(batch, a)
		}
		if len(batch) == 0 {
			t.Fatalf("round %d: an empty batch", round)
		}
		for _, a := range batch {
			told[a] = true
			if err := p.Tell(a, f.value(arms.RawRowView(a))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

var _ = mat.NewDense
