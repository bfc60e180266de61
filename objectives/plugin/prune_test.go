package plugin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// runFakeCurve is a plugin that reports 10 intermediate values x0 +
// 1/(step+1) per request, then replies with the last. "curve-honor" answers
// a prune request with {"pruned":true}; "curve-ignore" goes on and then
// hangs.
func runFakeCurve(mode string) int {
	lines := make(chan []byte)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- append([]byte(nil), in.Bytes()...)
		}
		close(lines)
	}()
	for line := range lines {
		var req struct {
			ID int       `json:"id"`
			X  []float64 `json:"x"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return 2
		}
		pruned := false
		v := 0.0
		for step := 0; step < 10 && !pruned; step++ {
			v = req.X[0] + 1/float64(step+1)
			fmt.Printf("{\"id\":%d,\"step\":%d,\"value\":%v}\n", req.ID, step, v)
			// Wait for the caller's answer to each report: a prune
			// request or nothing (the next step goes on after a short
			// look, as a training loop checks between epochs).
			select {
			case msg, ok := <-lines:
				if !ok {
					return 0
				}
				var m struct {
					ID    int  `json:"id"`
					Prune bool `json:"prune"`
				}
				if json.Unmarshal(msg, &m) != nil || !m.Prune || m.ID != req.ID {
					return 3
				}
				if mode == "curve-honor" {
					fmt.Printf("{\"id\":%d,\"pruned\":true}\n", req.ID)
					pruned = true
				} else {
					select {} // ignores it
				}
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !pruned {
			fmt.Printf("{\"id\":%d,\"y\":%v}\n", req.ID, v)
		}
	}
	return 0
}

// TestEvaluateReporting: intermediate values reach the Reporter; a stop
// makes a plugin that honors it answer at once (ErrPruned, the process
// kept), and one that ignores it is killed after the grace period and
// restarted for free; with no Reporter the values are ignored.
func TestEvaluateReporting(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"curve-honor", "curve-ignore"} {
		p, err := Start(context.Background(), Config{Command: []string{exe}, Env: []string{fakeEnv + "=" + mode},
			PruneGrace: 300 * time.Millisecond, MaxRestarts: -1})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		stopAt := func(k int) Reporter {
			got = nil
			return func(step int, value float64) (bool, error) {
				got = append(got, step)
				return step == k, nil
			}
		}
		// A full evaluation: every step reported, then the value.
		r, err := p.EvaluateReporting(context.Background(), []float64{0.5}, stopAt(-1))
		y := r.Y
		if err != nil || y != 0.5+1.0/10 || len(got) != 10 {
			t.Fatalf("%s: full evaluation: %v, %v, steps %v", mode, y, err, got)
		}
		pid := p.cur.cmd.Process.Pid
		_, err = p.EvaluateReporting(context.Background(), []float64{0.5}, stopAt(2))
		if !errors.Is(err, ErrPruned) || len(got) != 3 {
			t.Fatalf("%s: stopped at step 2: %v, steps %v", mode, err, got)
		}
		// The next evaluation runs: on the same process when the plugin
		// honored the stop, on a new one (with no restart left) when it
		// was killed.
		y, err = p.Evaluate(context.Background(), []float64{0.25})
		if err != nil || y != 0.25+1.0/10 {
			t.Fatalf("%s: evaluation after the stop: %v, %v", mode, y, err)
		}
		if same := p.cur.cmd.Process.Pid == pid; same != (mode == "curve-honor") {
			t.Errorf("%s: same process after the stop: %v", mode, same)
		}
		if err := p.Close(); err != nil && mode == "curve-honor" {
			t.Errorf("%s: Close: %v", mode, err)
		}
	}
}

// TestReporterError: an error of the Reporter (a storage failure) ends
// the evaluation with that error.
func TestReporterError(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), Config{Command: []string{exe}, Env: []string{fakeEnv + "=curve-honor"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	boom := errors.New("storage down")
	_, err = p.EvaluateReporting(context.Background(), []float64{0}, func(int, float64) (bool, error) { return false, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reporter's error", err)
	}
}
