package study_test

import (
	"context"
	"fmt"
	"math"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// An objective that trains step by step reports its learning curve and
// stops when the pruner says so.
func ExampleTrial_Report() {
	ctx := context.Background()
	space, _ := study.NewSpace(study.LogFloat("lr", 1e-4, 1))
	s, _ := study.Create(ctx, storage.NewMemory(), "curves", study.Config{
		Space: space, Budget: 20, Seed: 1, Policy: "random",
		Pruner: pruner.Config{Kind: pruner.Median, StartupTrials: 3},
	})
	err := s.Optimize(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
		// A loss that falls to (log10 lr + 2)^2 at a rate set by lr.
		lr := t.Params.Float("lr")
		limit := math.Pow(math.Log10(lr)+2, 2)
		loss := 0.0
		for epoch := range 20 {
			loss = limit + math.Exp(-float64(epoch)*lr*10)
			if err := t.Report(ctx, epoch, loss); err != nil {
				return 0, err
			}
			if t.ShouldPrune() {
				return 0, study.ErrPruned
			}
		}
		return loss, nil
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	n := map[study.State]int{}
	steps := 0
	for _, t := range s.Trials() {
		n[t.State]++
		steps += len(t.Intermediate)
	}
	fmt.Printf("%d complete, %d pruned, %d of %d steps\n", n[study.Complete], n[study.Pruned], steps, 20*20)
	// Output: 6 complete, 14 pruned, 136 of 400 steps
}
