package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
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
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %v", path, err)
	}
	return f.Close()
}

// floorLog keeps values plotted on a log axis positive.
func floorLog(v float64) float64 { return math.Max(v, 1e-9) }

// plotStudy draws the values of the complete trials and the best value so
// far against the trial number; for a built-in function with a known
// minimum, a second panel shows the simple regret (best so far - minimum)
// on a log scale.
func plotStudy(path string, cfg *studyConfig, trials []*trialState) error {
	var vals, bestXY, fails plotter.XYs
	best := math.NaN()
	minimize := cfg.minimize()
	for _, t := range trials {
		x := float64(t.Trial)
		switch t.Status {
		case "complete":
			vals = append(vals, plotter.XY{X: x, Y: t.Value})
			if better(t.Value, best, minimize) {
				best = t.Value
			}
		case "failed":
			fails = append(fails, plotter.XY{X: x})
		}
		if !math.IsNaN(best) {
			bestXY = append(bestXY, plotter.XY{X: x, Y: best})
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("plot %s: no complete trial to draw", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s with %s", cfg.Objective.String(), cfg.Direction, cfg.Policy)
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
	fn := cfg.function()
	known := fn != nil && minimize && cfg.Objective.Kind == "builtin"
	if known {
		opt := plotter.NewFunction(func(float64) float64 { return fn.MinValue })
		opt.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		opt.Color = plotutil.Color(1)
		p.Add(opt)
		p.Legend.Add(fmt.Sprintf("minimum %.6g", fn.MinValue), opt)
	}
	if len(fails) > 0 {
		lo := vals[0].Y
		for _, v := range vals {
			lo = math.Min(lo, v.Y)
		}
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
		r.Y.Tick.Marker = plot.LogTicks{Prec: -1}
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
