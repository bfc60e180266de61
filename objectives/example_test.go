package objectives_test

import (
	"context"
	"fmt"
	"math"

	"github.com/bkb-go/bkb/objectives"
)

func ExampleLookup() {
	f, err := objectives.Lookup("Branin")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s on %v x %v: min %.6f at %d points\n", f, f.Lower, f.Upper, f.MinValue, len(f.Argmins))
	fmt.Printf("f(pi, 2.275) = %.6f\n", f.Value([]float64{math.Pi, 2.275}))

	g, _ := objectives.Lookup("ackley:5")
	fmt.Println(g, g.MinValue, g.Argmins[0])

	_, err = objectives.Lookup("bananas")
	fmt.Println(err)
	// Output:
	// branin:2 on [-5 0] x [10 15]: min 0.397887 at 3 points
	// f(pi, 2.275) = 0.397887
	// ackley:5 0 [0 0 0 0 0]
	// objectives: unknown function "bananas"; valid names: ackley, beale, booth, branin, colville, dixonprice, goldsteinprice, hartmann3, hartmann6, levy, matyas, mccormick, michalewicz, powell, rastrigin, rosenbrock, shekel, sixhumpcamel, styblinskitang, sumsquares, threehumpcamel, trid, zakharov
}

func ExampleNewReward() {
	f, _ := objectives.Lookup("hartmann6")
	r, err := objectives.NewReward(f, 0.01, 42)
	if err != nil {
		panic(err)
	}
	y, err := r.Evaluate(context.Background(), f.Argmins[0])
	if err != nil {
		panic(err)
	}
	fmt.Printf("optimum %.5f, noiseless %.5f, |noise| < 0.05: %v\n",
		r.Optimum(), r.Noiseless(f.Argmins[0]), math.Abs(y-r.Optimum()) < 0.05)
	// Output:
	// optimum 3.32237, noiseless 3.32237, |noise| < 0.05: true
}
