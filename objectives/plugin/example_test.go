package plugin_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bkb-go/bkb/objectives/plugin"
)

// A long-lived plugin: the program is started once and answers one JSON
// line per request on its stdout. Here the program is a line of awk that
// returns x1^2 + x2^2 (run by a shell loop, one awk per request); a real plugin is a Python script or a Go program
// (see the examples directory).
func ExampleStart() {
	const sphere = `while read -r req; do echo "$req" | awk '{
	  match($0, /"id":[0-9]+/); id = substr($0, RSTART+5, RLENGTH-5)
	  match($0, /"x":\[[^]]*\]/); split(substr($0, RSTART+5, RLENGTH-6), x, ",")
	  printf "{\"id\":%s,\"y\":%.6g}\n", id, x[1]^2 + x[2]^2 }'; done`
	p, err := plugin.Start(context.Background(), plugin.Config{Command: []string{"sh", "-c", sphere}, Timeout: 10 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	for _, x := range [][]float64{{1, 2}, {0.5, -0.5}} {
		y, err := p.Evaluate(context.Background(), x)
		fmt.Println(x, y, err)
	}
	// Output:
	// [1 2] 5 <nil>
	// [0.5 -0.5] 0.5 <nil>
}

// A one-shot plugin runs once per evaluation with the point's coordinates
// as arguments; the last line of its output is the value. A failure is an
// *EvalError whose kind says what happened.
func ExampleConfig_oneShot() {
	p, err := plugin.Start(context.Background(), plugin.Config{
		Command: []string{"awk", `BEGIN { if (ARGV[1] < 0) exit 3; print ARGV[1] * ARGV[2] }`},
		OneShot: true,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	y, err := p.Evaluate(context.Background(), []float64{3, 4})
	fmt.Println(y, err)
	_, err = p.Evaluate(context.Background(), []float64{-1, 4})
	fmt.Println(plugin.KindOf(err))
	// Output:
	// 12 <nil>
	// crash
}
