// Command sgdcurve is an example objective plugin for bkb written in Go: a
// model trained epoch by epoch that reports its learning curve and stops
// when the study's pruner says so.
//
// It fits ridge regression by stochastic gradient descent on a fixed
// synthetic data set (200 training and 100 validation rows, 8 features);
// the value, to MINIMIZE, is the validation mean squared error after the
// last of 20 epochs. The search space (a space file for the bkb command
// line) is
//
//	{"params": [
//	  {"name": "lr", "type": "float", "low": 1e-4, "high": 0.5, "log": true},
//	  {"name": "l2", "type": "float", "low": 1e-6, "high": 1, "log": true}]}
//
// After every epoch it writes the validation error as an intermediate
// value, {"id":7,"step":3,"value":0.42}, and looks for a line
// {"id":7,"prune":true} on its standard input: then it answers
// {"id":7,"pruned":true} and waits for the next request. Otherwise it
// replies {"id":7,"y":...} after the last epoch. Build and run it with
//
//	go build -o sgdcurve ./objectives/plugin/examples/go/sgdcurve
//	bkb optimize --space sgd_space.json --pruner median -- ./sgdcurve
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

const epochs = 20

type row struct {
	x []float64
	y float64
}

// data returns the fixed training and validation rows.
func data() (train, valid []row) {
	rng := rand.New(rand.NewPCG(0, 0))
	w := make([]float64, 8)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for i := range 300 {
		r := row{x: make([]float64, 8)}
		for j := range r.x {
			r.x[j] = rng.NormFloat64()
			r.y += w[j] * r.x[j]
		}
		r.y += 0.5 * rng.NormFloat64()
		if i < 200 {
			train = append(train, r)
		} else {
			valid = append(valid, r)
		}
	}
	return train, valid
}

func mse(w []float64, rows []row) float64 {
	s := 0.0
	for _, r := range rows {
		e := -r.y
		for j, v := range r.x {
			e += w[j] * v
		}
		s += e * e
	}
	s /= float64(len(rows))
	if math.IsNaN(s) || s > 1e6 {
		return 1e6
	}
	return s
}

type request struct {
	ID     int  `json:"id"`
	Prune  bool `json:"prune"`
	Params struct {
		LR float64 `json:"lr"`
		L2 float64 `json:"l2"`
	} `json:"params"`
}

func main() {
	train, valid := data()
	lines := make(chan []byte)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- append([]byte(nil), in.Bytes()...)
		}
		close(lines)
	}()
	out := json.NewEncoder(os.Stdout)
	for line := range lines {
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			fmt.Fprintln(os.Stderr, "sgdcurve: bad request:", err)
			os.Exit(2)
		}
		if req.Prune {
			continue // a stop for an evaluation already over
		}
		_ = out.Encode(evaluate(req, train, valid, lines))
	}
}

// evaluate trains one model, reporting each epoch's validation error, and
// returns the reply.
func evaluate(req request, train, valid []row, lines <-chan []byte) map[string]any {
	rng := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, 8)
	value := 0.0
	for epoch := range epochs {
		for _, i := range rng.Perm(len(train)) {
			r := train[i]
			e := -r.y
			for j, v := range r.x {
				e += w[j] * v
			}
			for j, v := range r.x {
				w[j] -= req.Params.LR * (e*v + req.Params.L2*w[j])
			}
		}
		value = mse(w, valid)
		fmt.Printf("{\"id\":%d,\"step\":%d,\"value\":%v}\n", req.ID, epoch, value)
		select {
		case line, ok := <-lines:
			var m request
			if ok && json.Unmarshal(line, &m) == nil && m.Prune && m.ID == req.ID {
				return map[string]any{"id": req.ID, "pruned": true}
			}
		default:
		}
	}
	return map[string]any{"id": req.ID, "y": value}
}
