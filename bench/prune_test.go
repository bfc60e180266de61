package bench

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/internal/testtier"
)

// TestCurveTask: the curve starts c(u) above its limit and converges to
// f(x) plus the residual; the noise is a standard normal (mean and
// variance over many draws) and the same for the same (seed, trial, step).
func TestCurveTask(t *testing.T) {
	t.Parallel()
	task := DefaultCurveTask()
	task.Noise = 0
	x := task.Fn.Argmins[0]
	u0 := x[0]
	tau := 2 + 10*x[2]
	if got, want := task.Value(x, 0, 1, 0), task.Fn.MinValue+0.5+1.5*u0; math.Abs(got-want) > 1e-4 {
		t.Errorf("y(x*, 0) = %v, want %v", got, want)
	}
	if got, want := task.Value(x, 26, 1, 0), task.Fn.MinValue+(0.5+1.5*u0)*math.Exp(-26/tau); math.Abs(got-want) > 1e-4 {
		t.Errorf("y(x*, 26) = %v, want %v", got, want)
	}
	n, sum, sq := 20000, 0.0, 0.0
	for i := range n {
		z := CurveNoise(7, i/100, i%100)
		sum += z
		sq += z * z
	}
	if m, v := sum/float64(n), sq/float64(n); math.Abs(m) > 0.03 || math.Abs(v-1) > 0.05 {
		t.Errorf("noise mean %v variance %v, want 0 and 1", m, v)
	}
	if CurveNoise(3, 4, 5) != CurveNoise(3, 4, 5) || CurveNoise(3, 4, 5) == CurveNoise(3, 4, 6) {
		t.Error("noise is not a function of (seed, trial, step)")
	}
}

// TestRunPrune: ASHA spends fewer steps than no pruning on the same
// trials, and a step budget is respected up to one trial's steps.
func TestRunPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	task := DefaultCurveTask()
	none, err := RunPrune(ctx, task, "none", 1, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	asha, err := RunPrune(ctx, task, PruneMethods["asha"], 1, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	if none.Steps != 12*27 || none.Pruned != 0 || asha.Trials != 12 || asha.Pruned == 0 || asha.Steps >= none.Steps {
		t.Errorf("none %+v, asha %+v", none, asha)
	}
	byBudget, err := RunPrune(ctx, task, PruneMethods["asha"], 1, 12, 12*27)
	if err != nil {
		t.Fatal(err)
	}
	if byBudget.Steps < 12*27 && byBudget.Trials < 120 || byBudget.Steps >= 12*27+27 {
		t.Errorf("step budget %d: %+v", 12*27, byBudget)
	}
}

// TestCurveNoiseMatchesPeer: the Optuna driver draws the same noise
// (skipped without /usr/bin/python3).
func TestCurveNoiseMatchesPeer(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	for _, c := range [][3]int{{1, 0, 0}, {7, 12, 26}, {10, 399, 3}} {
		out, err := exec.Command("/usr/bin/python3", "peerprune/optuna_prune.py", "--noise", strconv.Itoa(c[0]), strconv.Itoa(c[1]), strconv.Itoa(c[2])).Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			t.Fatal(err)
		}
		if want := CurveNoise(uint64(c[0]), c[1], c[2]); math.Abs(got-want) > 1e-12 {
			t.Errorf("noise%v: python %v, Go %v", c, got, want)
		}
	}
}

// TestSGDTask: a sensible configuration's validation error falls well
// below the target's variance (a least-squares fit by other means, on
// the same rows, is the reference), and lr = 1 with high momentum diverges.
func TestSGDTask(t *testing.T) {
	t.Parallel()
	task, err := NewSGDTask()
	if err != nil {
		t.Fatal(err)
	}
	variance := 0.0
	for _, y := range task.yv {
		variance += y * y
	}
	variance /= float64(len(task.yv))
	curve := task.Start([]float64{0.003, 1e-5, 0.5}, 1, 0)
	first, last := curve(0), 0.0
	for e := 1; e < task.Epochs; e++ {
		last = curve(e)
	}
	if !(last < 0.3*variance) || !(last < first) {
		t.Errorf("validation error %v after 1 epoch, %v after %d; target variance %v", first, last, task.Epochs, variance)
	}
	bad := task.Start([]float64{1, 1e-5, 0.95}, 1, 0)
	for e := range task.Epochs {
		last = bad(e)
	}
	if last != sgdDiverged {
		t.Errorf("lr 1, momentum 0.95: %v, want the divergence value %v", last, sgdDiverged)
	}
	// numpy.linalg.lstsq on the same rows gives 0.0134784.
	ls, err := task.LeastSquaresMSE()
	if err != nil || math.Abs(ls-0.0134784) > 1e-6 {
		t.Errorf("least-squares validation error %v (%v), numpy 0.0134784", ls, err)
	}
}

// TestSGDMatchesPeer: the Optuna driver trains the same model on the same
// rows in the same order (skipped without /usr/bin/python3 and numpy).
func TestSGDMatchesPeer(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if testtier.ShortTier() {
		t.Skip("trains the model in Python; skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	out, err := exec.Command("/usr/bin/python3", "peerprune/optuna_prune.py", "--sgd-curve", "0.003", "1e-5", "0.5", "1", "0").Output()
	if err != nil {
		t.Skipf("the driver failed (numpy missing?): %v", err)
	}
	var py []float64
	if err := json.Unmarshal(out, &py); err != nil {
		t.Fatal(err)
	}
	task, err := NewSGDTask()
	if err != nil {
		t.Fatal(err)
	}
	curve := task.Start([]float64{0.003, 1e-5, 0.5}, 1, 0)
	for e, want := range py {
		if got := curve(e); math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("epoch %d: Go %v, Python %v", e, got, want)
		}
	}
}
