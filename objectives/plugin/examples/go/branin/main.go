// Command go is an example objective plugin for bkb written in Go: the
// Branin-Hoo test function.
//
// The plugin returns the VALUE of the objective; whether it is maximized or
// minimized is decided by the caller (the bkb command line), not here.
// Branin is a function to MINIMIZE: its global minimum 0.397887 is reached at
// (-pi, 12.275), (pi, 2.275) and (9.42478, 2.475). The usual domain is
// x1 in [-5, 10], x2 in [0, 15].
//
// Build it with
//
//	go build -o branin ./objectives/plugin/examples/go/branin
//
// and use "./branin" as the plugin command.
//
// Long-lived protocol (the default): one JSON request per line on stdin,
//
//	{"id":7,"x":[x1,x2],"params":{"x1":...,"x2":...}}
//
// one JSON reply per line on stdout,
//
//	{"id":7,"y":12.3}   or   {"id":7,"error":"message"}
//
// and exit when stdin is closed. Log to stderr only: stray lines on stdout
// are protocol errors.
//
// One-shot mode (BKB_PLUGIN_MODE=one-shot, or when called with arguments):
// "branin 3.14159 2.275" prints the value on stdout.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
)

// branin is the Branin-Hoo function.
func branin(x1, x2 float64) float64 {
	const (
		a = 1.0
		r = 6.0
		s = 10.0
	)
	b := 5.1 / (4 * math.Pi * math.Pi)
	c := 5 / math.Pi
	t := 1 / (8 * math.Pi)
	u := x2 - b*x1*x1 + c*x1 - r
	return a*u*u + s*(1-t)*math.Cos(x1) + s
}

func evaluate(x []float64) (float64, error) {
	if len(x) != 2 {
		return 0, fmt.Errorf("branin takes 2 coordinates, got %d", len(x))
	}
	return branin(x[0], x[1]), nil
}

type request struct {
	ID int       `json:"id"`
	X  []float64 `json:"x"`
}

type reply struct {
	ID    int    `json:"id"`
	Y     any    `json:"y,omitempty"` // a number, or "NaN"/"Inf"/"-Inf"
	Error string `json:"error,omitempty"`
}

// number makes y JSON-safe: JSON has no NaN or infinities.
func number(y float64) any {
	switch {
	case math.IsNaN(y):
		return "NaN"
	case math.IsInf(y, 1):
		return "Inf"
	case math.IsInf(y, -1):
		return "-Inf"
	}
	return y
}

func longLived() error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := json.NewEncoder(os.Stdout) // one Write per reply, newline-terminated
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return fmt.Errorf("bad request: %w", err)
		}
		rep := reply{ID: req.ID}
		if y, err := evaluate(req.X); err != nil {
			rep.Error = err.Error()
		} else {
			rep.Y = number(y)
		}
		if err := out.Encode(rep); err != nil {
			return err
		}
	}
	return in.Err()
}

func oneShot(args []string) error {
	x := make([]float64, len(args))
	for i, a := range args {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return err
		}
		x[i] = v
	}
	y, err := evaluate(x)
	if err != nil {
		return err
	}
	fmt.Println(strconv.FormatFloat(y, 'g', -1, 64))
	return nil
}

func main() {
	var err error
	if os.Getenv("BKB_PLUGIN_MODE") == "one-shot" || len(os.Args) > 1 {
		err = oneShot(os.Args[1:])
	} else {
		err = longLived()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "branin:", err)
		os.Exit(1)
	}
}
