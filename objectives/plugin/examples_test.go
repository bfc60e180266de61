package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/internal/testtier"
)

const braninMin = 0.39788735772973816

// checkBranin runs the shipped example plugin given by cmd in both modes.
func checkBranin(t *testing.T, cmd []string) {
	t.Helper()
	for _, oneShot := range []bool{false, true} {
		p, err := Start(context.Background(), Config{Command: cmd, OneShot: oneShot})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range [][]float64{{math.Pi, 2.275}, {-math.Pi, 12.275}, {9.42478, 2.475}} {
			y, err := p.Evaluate(context.Background(), x)
			if err != nil {
				t.Fatalf("one-shot=%v: Evaluate(%v): %v", oneShot, x, err)
			}
			if math.Abs(y-braninMin) > 1e-5 {
				t.Errorf("one-shot=%v: branin(%v) = %v, want %v", oneShot, x, y, braninMin)
			}
		}
		_, err = p.Evaluate(context.Background(), []float64{1, 2, 3})
		if !oneShot && !errors.Is(err, ErrPluginError) {
			t.Errorf("3-d point: %v, want ErrPluginError", err)
		}
		if oneShot && !errors.Is(err, ErrCrashed) {
			t.Errorf("one-shot 3-d point: %v, want ErrCrashed", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// pythonExample returns the command running examples/python/script, or
// skips the test when there is no python3.
func pythonExample(t *testing.T, script string) []string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return []string{py, filepath.Join("examples", "python", script)}
}

// goExample builds the example program in pkg and returns its command;
// skipped in -short mode.
func goExample(t *testing.T, pkg string) []string {
	t.Helper()
	if testtier.ShortTier() {
		t.Skip("builds a program; skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	exe := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command(gobin, "build", "-o", exe, pkg)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return []string{exe}
}

func TestExamplePython(t *testing.T) {
	t.Parallel()
	checkBranin(t, pythonExample(t, "branin.py"))
}

func TestExampleGo(t *testing.T) {
	t.Parallel()
	checkBranin(t, goExample(t, "./examples/go/branin"))
}

// toyLoss is the objective of the toy-model examples, written again here
// as the reference.
func toyLoss(lr float64, layers int, act string) float64 {
	pen := map[string]float64{"relu": 0, "tanh": 0.25, "sigmoid": 0.5}[act]
	l := math.Log10(lr) + 2.5
	return l*l + 0.05*float64((layers-4)*(layers-4)) + pen
}

// checkToyModel runs a shipped toy-model plugin in both modes with typed
// parameters: x = (lr, layers, activation index), sent through
// Config.Params as a float, a JSON integer and a label.
func checkToyModel(t *testing.T, cmd []string) {
	t.Helper()
	acts := []string{"relu", "tanh", "sigmoid"}
	typed := func(x []float64) ([]byte, error) {
		return json.Marshal(map[string]any{"lr": x[0], "layers": int(x[1]), "activation": acts[int(x[2])]})
	}
	// What a plugin gets from ParamNames alone: numbers everywhere.
	untyped := func(x []float64) ([]byte, error) {
		return json.Marshal(map[string]any{"lr": x[0], "layers": x[1] + 0.5, "activation": acts[int(x[2])]})
	}
	for _, oneShot := range []bool{false, true} {
		cfg := Config{Command: cmd, OneShot: oneShot, ParamNames: []string{"lr", "layers", "activation"}, Params: typed}
		p, err := Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range [][]float64{{math.Pow(10, -2.5), 4, 0}, {1e-5, 1, 2}, {0.3, 8, 1}} {
			y, err := p.Evaluate(context.Background(), x)
			if err != nil {
				t.Fatalf("one-shot=%v: Evaluate(%v): %v", oneShot, x, err)
			}
			if want := toyLoss(x[0], int(x[1]), acts[int(x[2])]); math.Abs(y-want) > 1e-12 {
				t.Errorf("one-shot=%v: loss(%v) = %v, want %v", oneShot, x, y, want)
			}
		}
		p.cfg.Params = untyped
		_, err = p.Evaluate(context.Background(), []float64{0.01, 3, 0})
		if !errors.Is(err, ErrPluginError) || !strings.Contains(err.Error(), "3.5") {
			t.Errorf("one-shot=%v: layers = 3.5: %v, want the plugin to reject a non-integer", oneShot, err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestExampleToyModelPython(t *testing.T) {
	t.Parallel()
	checkToyModel(t, pythonExample(t, "toy_model.py"))
}

func TestExampleToyModelGo(t *testing.T) {
	t.Parallel()
	checkToyModel(t, goExample(t, "./examples/go/toymodel"))
}

// checkCurve runs a shipped learning-curve plugin: 20 intermediate values
// then the last as the reply; told to stop at epoch 3, it answers pruned
// and evaluates the next request on the same process.
func checkCurve(t *testing.T, cmd []string) {
	t.Helper()
	typed := func(x []float64) ([]byte, error) { return json.Marshal(map[string]any{"lr": x[0], "l2": x[1]}) }
	p, err := Start(context.Background(), Config{Command: cmd, Params: typed, MaxRestarts: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var steps []int
	var last float64
	r, err := p.EvaluateReporting(context.Background(), []float64{0.01, 1e-3}, func(step int, v float64) (bool, error) {
		steps, last = append(steps, step), v
		return false, nil
	})
	y := r.Y
	if err != nil || len(steps) != 20 || y != last || !(y > 0 && y < 1) {
		t.Fatalf("full run: %v, %v after steps %v (last %v)", y, err, steps, last)
	}
	steps = nil
	_, err = p.EvaluateReporting(context.Background(), []float64{0.5, 1e-3}, func(step int, v float64) (bool, error) {
		steps = append(steps, step)
		return step == 3, nil
	})
	if !errors.Is(err, ErrPruned) || len(steps) < 4 || steps[3] != 3 {
		t.Fatalf("stopped at step 3: %v after steps %v", err, steps)
	}
	if y2, err := p.Evaluate(context.Background(), []float64{0.01, 1e-3}); err != nil || y2 != y {
		t.Fatalf("after the stop: %v, %v; want %v", y2, err, y)
	}
}

func TestExampleCurvePython(t *testing.T) {
	t.Parallel()
	checkCurve(t, pythonExample(t, "sgd_curve.py"))
}

func TestExampleCurveGo(t *testing.T) {
	t.Parallel()
	checkCurve(t, goExample(t, "./examples/go/sgdcurve"))
}
