package study_test

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// A conditional space: the kernel chooses which parameters exist. The
// objective reads the parameters of its branch; each trial's Params hold
// exactly those, and asking for another is an error wrapping
// study.ErrInactive.
func ExampleParam_When() {
	space, err := study.NewSpace(
		study.Categorical("kernel", "rbf", "poly"),
		study.LogFloat("gamma", 1e-3, 1).When("kernel", "rbf"),
		study.Int("degree", 2, 5).When("kernel", "poly"),
		study.Float("coef0", 0, 1).When("degree", 3, 4), // a chained condition
		study.Float("c", -1, 1),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	s, err := study.Create(ctx, storage.NewMemory(), "svm", study.Config{Space: space, Budget: 30, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	var inactive error
	err = s.Optimize(ctx, func(_ context.Context, t *study.Trial) (float64, error) {
		c := t.Params.Float("c")
		if t.Params.String("kernel") == "rbf" {
			_, inactive = t.GetInt("degree")
			return 1 + c*c + math.Abs(math.Log10(t.Params.Float("gamma"))+2), nil
		}
		v := c*c + 0.1*float64(t.Params.Int("degree"))
		if t.Params.Has("coef0") {
			v += (t.Params.Float("coef0") - 0.5) * (t.Params.Float("coef0") - 0.5)
		}
		return v, nil
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	best, _ := s.Best()
	fmt.Println("best kernel:", best.Params.String("kernel"), "degree:", best.Params.Int("degree"), "has gamma:", best.Params.Has("gamma"))
	fmt.Println(errors.Is(inactive, study.ErrInactive), inactive)
	// Output:
	// best kernel: poly degree: 2 has gamma: false
	// true study: parameter "degree" is not active for this trial (it exists when "kernel" is poly)
}
