// Command toymodel is an example objective plugin for bkb written in Go: a
// toy "validation loss" with typed hyperparameters, showing how a plugin
// reads a log-scale float, an integer and a categorical parameter.
//
// The study's search space (a space file for the bkb command line) is
//
//	{"params": [
//	  {"name": "lr", "type": "float", "low": 1e-5, "high": 1, "log": true},
//	  {"name": "layers", "type": "int", "low": 1, "high": 8},
//	  {"name": "activation", "type": "categorical",
//	   "choices": ["relu", "tanh", "sigmoid"]}]}
//
// and every request carries the parameters, each in its own type, in
// "params": lr as a JSON number, layers as a JSON integer, activation as its
// label:
//
//	{"id":7,"x":[0.003,4,0],"params":{"lr":0.003,"layers":4,"activation":"relu"}}
//
// ("x" is the point as the optimizer stores it, a categorical as the index of
// its choice: read "params".) The loss, to MINIMIZE, is
//
//	(log10(lr) + 2.5)^2 + 0.05 (layers - 4)^2 + {relu: 0, tanh: 0.25, sigmoid: 0.5}
//
// with its minimum 0 at lr = 10^-2.5, layers = 4, activation = relu.
//
// Long-lived mode (the default): one JSON request per line on stdin, one JSON
// reply per line on stdout. One-shot mode (BKB_PLUGIN_MODE=one-shot): the
// parameters are in the environment variable BKB_PARAMS and the result is
// the last line of stdout. Build it with
//
//	go build -o toymodel ./objectives/plugin/examples/go/toymodel
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
)

// params are the typed hyperparameters. Layers is an int: decoding fails
// on 3.5 (or "3"), so a search space that does not match this plugin is
// caught at the first request.
type params struct {
	LR         *float64 `json:"lr"`
	Layers     *int     `json:"layers"`
	Activation *string  `json:"activation"`
}

var penalty = map[string]float64{"relu": 0, "tanh": 0.25, "sigmoid": 0.5}

// loss decodes the "params" object strictly and returns the toy loss.
func loss(raw json.RawMessage) (float64, error) {
	var p params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return 0, fmt.Errorf("params: %w", err)
	}
	if p.LR == nil || p.Layers == nil || p.Activation == nil {
		return 0, errors.New("params: want lr, layers and activation")
	}
	if !(*p.LR > 0) {
		return 0, fmt.Errorf("lr must be positive, got %v", *p.LR)
	}
	pen, ok := penalty[*p.Activation]
	if !ok {
		return 0, fmt.Errorf("activation must be relu, tanh or sigmoid, got %q", *p.Activation)
	}
	d := float64(*p.Layers - 4)
	l := math.Log10(*p.LR) + 2.5
	return l*l + 0.05*d*d + pen, nil
}

type request struct {
	ID     int             `json:"id"`
	Params json.RawMessage `json:"params"`
}

type reply struct {
	ID    int      `json:"id,omitempty"`
	Y     *float64 `json:"y,omitempty"`
	Error string   `json:"error,omitempty"`
}

func answer(id int, raw json.RawMessage) reply {
	y, err := loss(raw)
	if err != nil {
		return reply{ID: id, Error: err.Error()}
	}
	return reply{ID: id, Y: &y}
}

func longLived() error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := json.NewEncoder(os.Stdout) // one Write per reply, newline-terminated
	for in.Scan() {
		if len(bytes.TrimSpace(in.Bytes())) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return fmt.Errorf("bad request: %w", err)
		}
		if err := out.Encode(answer(req.ID, req.Params)); err != nil {
			return err
		}
	}
	return in.Err()
}

func main() {
	var err error
	if os.Getenv("BKB_PLUGIN_MODE") == "one-shot" {
		err = json.NewEncoder(os.Stdout).Encode(answer(0, json.RawMessage(os.Getenv("BKB_PARAMS"))))
	} else {
		err = longLived()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "toymodel:", err)
		os.Exit(1)
	}
}
