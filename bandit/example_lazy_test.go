package bandit_test

import (
	"fmt"
	"math"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/objectives"
)

// Example_lazy runs GP-UCB with Options.Lazy on 20,000 arms: each step
// reads only the arms whose UCB bound reaches the best, and asks for the
// same arm as the full scan.
func Example_lazy() {
	unit := objectives.Box{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	arms, err := objectives.Uniform(unit, 20000, 1)
	if err != nil {
		panic(err)
	}
	reward := func(x []float64) float64 {
		return 3 * math.Exp(-((x[0]-0.3)*(x[0]-0.3)+(x[1]-0.7)*(x[1]-0.7))/0.02)
	}
	full, _ := bandit.NewGPUCB(arms, bandit.Options{Seed: 1})
	lazy, err := bandit.NewGPUCB(arms, bandit.Options{Seed: 1, Lazy: true})
	if err != nil {
		panic(err)
	}
	same := true
	const steps = 60
	for t := 0; t < steps; t++ {
		a, _ := full.Ask()
		b, _ := lazy.Ask()
		same = same && a == b
		y := reward(arms.RawRowView(a))
		_ = full.Tell(a, y)
		_ = lazy.Tell(a, y)
	}
	st := lazy.Stats()
	fmt.Println("same arms as the full scan:", same)
	fmt.Println("rows read below a quarter of the full scan's:", st.RowsRead < steps*20000/4)
	// Output:
	// same arms as the full scan: true
	// rows read below a quarter of the full scan's: true
}

// Example_lazyBBKB runs batched BKB with Options.Lazy on 10,000 arms,
// batches of up to 4 arms (four workers): every arm is the full scan's,
// and after the first 50 batches an observation reads under a fifth of
// the rows the full scan reads (all 10,000).
func Example_lazyBBKB() {
	unit := objectives.Box{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	arms, err := objectives.Uniform(unit, 10000, 1)
	if err != nil {
		panic(err)
	}
	reward := func(x []float64) float64 {
		return 3 * math.Exp(-((x[0]-0.3)*(x[0]-0.3)+(x[1]-0.7)*(x[1]-0.7))/0.02)
	}
	opt := bandit.BBKBOptions{Options: bandit.Options{Seed: 1, Lambda: 0.01}, MaxBatch: 4}
	full, _ := bandit.NewBBKB(arms, opt)
	opt.Lazy = true
	lazy, err := bandit.NewBBKB(arms, opt)
	if err != nil {
		panic(err)
	}
	same := true
	var start bandit.Stats
	for batch := 0; batch < 150; batch++ {
		if batch == 50 {
			start = lazy.Stats()
		}
		var asked []int
		for {
			a, errA := full.Ask()
			b, errB := lazy.Ask()
			same = same && a == b && (errA == nil) == (errB == nil)
			if errA != nil {
				break // the batch is full
			}
			asked = append(asked, a)
		}
		for _, a := range asked {
			y := reward(arms.RawRowView(a))
			_ = full.Tell(a, y)
			_ = lazy.Tell(a, y)
		}
	}
	st := lazy.Stats()
	// The full scan reads all 10,000 rows at every observation.
	rows := float64(st.RowsRead-start.RowsRead) / float64(st.Observations-start.Observations)
	fmt.Println("same arms as the full scan:", same)
	fmt.Println("rows read per observation below a fifth of the arms:", rows < 2000)
	// Output:
	// same arms as the full scan: true
	// rows read per observation below a fifth of the arms: true
}
