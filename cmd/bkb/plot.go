package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png, jpg
	_ "gonum.org/v1/plot/vg/vgpdf" // pdf
	_ "gonum.org/v1/plot/vg/vgsvg" // svg

	"github.com/bkb-go/bkb/study"
)

// savePanels draws plots side by side into path; the format follows the
// file name's extension.
func savePanels(path string, panels []*plot.Plot, cols int, w, h vg.Length) error {
	rows := (len(panels) + cols - 1) / cols
	format := strings.TrimPrefix(strings.ToLower(extOf(path)), ".")
	c, err := draw.NewFormattedCanvas(w*vg.Length(cols), h*vg.Length(rows), format)
	if err != nil {
		return fmt.Errorf("plot %s: %v", path, err)
	}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range grid[i] {
			if k := i*cols + j; k < len(panels) {
				grid[i][j] = panels[k]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadX: vg.Points(24), PadY: vg.Points(16)}
	canvases := plot.Align(grid, tiles, draw.New(c))
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %v", path, err)
	}
	return writeFileAtomic(path, buf.Bytes())
}

// floorLog keeps values plotted on a log axis positive.
func floorLog(v float64) float64 { return math.Max(v, 1e-9) }

// plotStudy draws the values of the complete trials and the best value so
// far against the trial number; for a built-in function with a known
// minimum, a second panel shows the simple regret (best so far - minimum)
// on a log scale.
func plotStudy(path string, sp *spec, trials []study.TrialResult) error {
	var vals, bestXY, fails plotter.XYs
	best := math.NaN()
	minimize := sp.minimize()
	for _, t := range trials {
		x := float64(t.Number)
		switch t.State {
		case study.Complete:
			vals = append(vals, plotter.XY{X: x, Y: t.Value})
			if study.Better(t.Value, best, sp.cfg.Direction) {
				best = t.Value
			}
		case study.Failed:
			fails = append(fails, plotter.XY{X: x})
		}
		if !math.IsNaN(best) {
			bestXY = append(bestXY, plotter.XY{X: x, Y: best})
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("plot %s: no complete trial to draw", path)
	}
	fn := sp.function()
	known := fn != nil && minimize && sp.obj.Kind == "builtin"
	// The y range: every best-so-far value and the central 90% of the
	// values (one wild value must not squash the rest, nor overflow the
	// axis: values beyond it are drawn at its edge), and the known minimum.
	knownMin := math.NaN()
	if known {
		knownMin = fn.MinValue
	}
	lo, hi := plotYRange(vals, bestXY, knownMin, minimize)
	for i := range vals {
		vals[i].Y = math.Min(math.Max(vals[i].Y, lo), hi)
	}
	p := plot.New()
	p.Y.Min, p.Y.Max = lo, hi
	p.Title.Text = fmt.Sprintf("%s: %s with %s", sp.obj.String(), sp.cfg.Direction, sp.cfg.Policy)
	p.X.Label.Text = "trial"
	p.Y.Label.Text = "value"
	p.Add(plotter.NewGrid())
	sc, err := plotter.NewScatter(vals)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = color.RGBA{R: 120, G: 120, B: 120, A: 255}
	sc.GlyphStyle.Radius = vg.Points(2)
	p.Add(sc)
	p.Legend.Add("value", sc)
	ln, err := plotter.NewLine(bestXY)
	if err != nil {
		return err
	}
	ln.LineStyle.Width = vg.Points(2)
	ln.LineStyle.Color = plotutil.Color(2)
	p.Add(ln)
	p.Legend.Add("best so far", ln)
	if known {
		opt := plotter.NewFunction(func(float64) float64 { return fn.MinValue })
		opt.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		opt.Color = plotutil.Color(1)
		p.Add(opt)
		p.Legend.Add(fmt.Sprintf("minimum %.6g", fn.MinValue), opt)
	}
	if len(fails) > 0 {
		for i := range fails {
			fails[i].Y = lo
		}
		fs, err := plotter.NewScatter(fails)
		if err != nil {
			return err
		}
		fs.GlyphStyle.Shape = draw.CrossGlyph{}
		fs.GlyphStyle.Color = color.RGBA{R: 200, A: 255}
		fs.GlyphStyle.Radius = vg.Points(3)
		p.Add(fs)
		p.Legend.Add("failed", fs)
	}
	// The best-so-far line hugs the bottom when minimizing, the top when
	// maximizing; the legend goes to the other side.
	p.Legend.Top = minimize
	p.Legend.Left = false
	p.X.Tick.Marker = intTicks{}
	panels := []*plot.Plot{p}
	if known {
		r := plot.New()
		r.Title.Text = "simple regret: best so far - minimum"
		r.X.Label.Text = "trial"
		r.Y.Label.Text = "regret (log scale)"
		r.Y.Scale = plot.LogScale{}
		r.Y.Tick.Marker = logTicks{}
		r.X.Tick.Marker = intTicks{}
		r.Add(plotter.NewGrid())
		reg := make(plotter.XYs, len(bestXY))
		for i, b := range bestXY {
			reg[i] = plotter.XY{X: b.X, Y: floorLog(b.Y - fn.MinValue)}
		}
		l, err := plotter.NewLine(reg)
		if err != nil {
			return err
		}
		l.LineStyle.Width = vg.Points(2)
		l.LineStyle.Color = plotutil.Color(2)
		r.Add(l)
		panels = append(panels, r)
	}
	return savePanels(path, panels, len(panels), 5*vg.Inch, 3.6*vg.Inch)
}

// intTicks are the default ticks with integer labels (trial and step
// numbers).
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
}

// plotYRange is the value axis of a study's plot: yRange, widened to the
// known minimum (NaN: none), padded, with headroom for the legend on the
// side away from the best-so-far line.
func plotYRange(vals, best plotter.XYs, knownMin float64, minimize bool) (lo, hi float64) {
	lo, hi = yRange(vals, best)
	if !math.IsNaN(knownMin) {
		lo, hi = math.Min(lo, knownMin), math.Max(hi, knownMin)
	}
	if !(hi > lo) {
		lo, hi = lo-0.5*math.Max(1, math.Abs(lo)), hi+0.5*math.Max(1, math.Abs(hi))
	}
	pad := (hi - lo) * 0.05
	lo, hi = lo-pad, hi+pad
	if minimize {
		hi += (hi - lo) * 0.35
	} else {
		lo -= (hi - lo) * 0.35
	}
	return lo, hi
}

// yRange returns the range of the best-so-far values and of the 5%-95%
// quantiles of the values, clamped to ±study.MaxAbsValue so that the
// axis's width is finite.
func yRange(vals, best plotter.XYs) (lo, hi float64) {
	ys := make([]float64, len(vals))
	for i, v := range vals {
		ys[i] = v.Y
	}
	sort.Float64s(ys)
	lo, hi = ys[int(math.Ceil(0.05*float64(len(ys)-1)))], ys[int(0.95*float64(len(ys)-1))]
	for _, b := range best {
		lo, hi = math.Min(lo, b.Y), math.Max(hi, b.Y)
	}
	lim := study.MaxAbsValue
	return math.Min(math.Max(lo, -lim), lim), math.Min(math.Max(hi, -lim), lim)
}

// logTicks labels a log axis at 1, 2 and 5 times the powers of ten when
// the range spans few decades (plot.LogTicks labels only powers of ten, so
// a range inside one decade got a single label), and at powers of ten
// otherwise.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	if math.Log10(max/min) > 3 {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 {
		// A narrow range: label the ends.
		ticks = append(ticks, plot.Tick{Value: min, Label: strconv.FormatFloat(min, 'g', 3, 64)},
			plot.Tick{Value: max, Label: strconv.FormatFloat(max, 'g', 3, 64)})
	}
	return ticks
}
