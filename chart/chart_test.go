package chart

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestTicks: log-axis labels are round (no 0.99999 or 1.00001), an
// integer axis has integer ticks, and a log axis drops non-positive
// regrets instead of drawing them at a made-up floor.
func TestTicks(t *testing.T) {
	t.Parallel()
	for _, tk := range (logTicks{}).Ticks(5e-5, 3e-3) {
		if strings.Contains(tk.Label, "99999") || strings.Contains(tk.Label, "00001") {
			t.Errorf("log tick label %q", tk.Label)
		}
	}
	for _, tk := range (intTicks{}).Ticks(0, 4) {
		if tk.Value != float64(int(tk.Value)) {
			t.Errorf("integer axis has a tick at %v", tk.Value)
		}
	}
	if got := positive([]plotter.XY{{X: 1, Y: 0}, {X: 2, Y: -1}, {X: 3, Y: 0.5}}); len(got) != 1 || got[0].X != 3 {
		t.Errorf("positive kept %v", got)
	}
}

// TestPlotRanges: the value axis covers the central values, the best so
// far and the known minimum (Hartmann's minimum was outside it), one wild
// value cannot stretch it to ±1e308, and a log axis within one decade gets
// more than one labelled tick (Hartmann 6's regret axis had one).
func TestPlotRanges(t *testing.T) {
	vals := plotter.XYs{{X: 0, Y: -1}, {X: 1, Y: -2}, {X: 2, Y: -2.5}, {X: 3, Y: 1e308}, {X: 4, Y: -2.8}}
	best := plotter.XYs{{X: 0, Y: -1}, {X: 4, Y: -2.8}}
	lo, hi := yRange(vals, best)
	if lo > -2.8 || hi > 10 || math.IsInf(hi-lo, 0) {
		t.Errorf("y range [%v, %v]", lo, hi)
	}
	for _, r := range [][2]float64{{0.02, 0.09}, {1e-3, 5e-3}, {0.3, 0.5}} {
		labelled := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 {
			t.Errorf("log axis [%v, %v]: %d labelled ticks", r[0], r[1], labelled)
		}
	}
	// The known minimum of a built-in is inside the drawn range, with room
	// above the values for the legend.
	if lo, hi := plotYRange(vals, best, -3.86, true); lo > -3.86 || hi > 10 || hi < -1+0.25*(hi-lo) {
		t.Errorf("range [%v, %v] misses the minimum -3.86 or the legend's headroom", lo, hi)
	}
}
