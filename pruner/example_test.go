package pruner_test

import (
	"fmt"

	"github.com/bkb-go/bkb/pruner"
)

// A median pruner decides on a running trial's curve from the complete
// trials' curves: at step 2 the running trial (0.9) is worse than the
// median of the others at that step (0.4), so it stops.
func Example() {
	p := pruner.Config{Kind: pruner.Median}.New()
	study := pruner.Study{Name: "demo", Trials: []pruner.Curve{
		{Trial: 0, Steps: []int{0, 1, 2}, Values: []float64{0.9, 0.6, 0.4}, Complete: true},
		{Trial: 1, Steps: []int{0, 1, 2}, Values: []float64{0.8, 0.5, 0.3}, Complete: true},
		{Trial: 2, Steps: []int{0, 1, 2}, Values: []float64{1.0, 0.7, 0.5}, Complete: true},
	}}
	running := pruner.Curve{Trial: 3, Steps: []int{0, 1, 2}, Values: []float64{1.2, 1.0, 0.9}}
	fmt.Println(p.Prune(study, running))
	good := pruner.Curve{Trial: 4, Steps: []int{0, 1, 2}, Values: []float64{0.7, 0.4, 0.2}}
	fmt.Println(p.Prune(study, good))
	// Output:
	// true
	// false
}
