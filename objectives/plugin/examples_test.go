package plugin

import (
	"context"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
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

func TestExamplePython(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	checkBranin(t, []string{py, filepath.Join("examples", "python", "branin.py")})
}

func TestExampleGo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a program; skipped in -short mode")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	exe := filepath.Join(t.TempDir(), "branin")
	build := exec.Command(gobin, "build", "-o", exe, "./examples/go")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/go: %v\n%s", err, out)
	}
	checkBranin(t, []string{exe})
}
