// Package chart draws a study's trials and the regret benchmarks as
// PNG, SVG or PDF charts (gonum.org/v1/plot): the values and the best
// value so far against the trial number, the simple regret of a function
// with a known minimum, the Pareto front of several objectives with the
// hypervolume after every trial, and panels of regret curves.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png, jpg
	_ "gonum.org/v1/plot/vg/vgpdf" // pdf
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/study"
)

func init() {
	// A sans-serif face, as in most plotting tools; SVG files embed it
	// (savePanels), so that a viewer without Liberation fonts neither falls
	// back to another face nor cuts titles measured with this one.
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	plot.DefaultFont = sans
	plotter.DefaultFont = sans
}

// Encode draws the panels side by side, cols to a row, each w x h, in
// the format of the file name path's extension (png, svg, pdf, ...), and
// returns the file's bytes.
func Encode(path string, panels []*plot.Plot, cols int, w, h vg.Length) ([]byte, error) {
	rows := (len(panels) + cols - 1) / cols
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var c vg.CanvasWriterTo
	var err error
	if format == "svg" {
		c = vgsvg.NewWith(vgsvg.UseWH(w*vg.Length(cols), h*vg.Length(rows)), vgsvg.EmbedFonts(true))
	} else if c, err = draw.NewFormattedCanvas(w*vg.Length(cols), h*vg.Length(rows), format); err != nil {
		return nil, fmt.Errorf("plot %s: %v", path, err)
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
		return nil, fmt.Errorf("plot %s: %v", path, err)
	}
	return buf.Bytes(), nil
}

// positive keeps the points a log axis can show: a regret of 0 (the
// optimum itself) has no place on it, and no made-up floor is drawn.
func positive(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, len(xy))
	for _, p := range xy {
		if p.Y > 0 && !math.IsInf(p.Y, 0) {
			out = append(out, p)
		}
	}
	return out
}

// ErrNotPositive is wrapped by Study's error when a log value axis
// (StudyOptions.LogY) meets a value that is not positive.
var ErrNotPositive = errors.New("a log value axis needs positive values")

// StudyOptions say what Study draws besides the trials.
type StudyOptions struct {
	// Title names the objective above the panels.
	Title string
	// Config is the study's configuration: its direction, policy and
	// objectives.
	Config study.Config
	// Function, when not nil, is a built-in function with a known
	// minimum: a second panel shows the simple regret against it.
	Function *objectives.Function
	// Noisy: the values carry noise, so the regret panel shows the
	// noise-free value of the best point so far.
	Noisy bool
	// LogY puts the value axis on a log scale (every value must then be
	// positive).
	LogY bool
}

// Study draws the values of the complete trials and the best value so far
// against the trial number (with several objectives the Pareto front,
// Front), for Encode; with a Function of known minimum, a second panel
// shows the simple regret (best so far - minimum) on a log scale.
func Study(trials []study.TrialResult, o StudyOptions) ([]*plot.Plot, error) {
	if o.Config.Objectives() >= 2 {
		return Front(trials, o.Config, o.Title)
	}
	var vals, bestXY, fails, infeasible plotter.XYs
	best := math.NaN()
	minimize := o.Config.Direction != study.Maximize
	for _, t := range trials {
		x := float64(t.Number)
		switch {
		case t.State == study.Complete && t.Infeasible:
			infeasible = append(infeasible, plotter.XY{X: x, Y: t.Value})
		case t.State == study.Complete:
			vals = append(vals, plotter.XY{X: x, Y: t.Value})
			if study.Better(t.Value, best, o.Config.Direction) {
				best = t.Value
			}
		case t.State == study.Failed:
			fails = append(fails, plotter.XY{X: x})
		}
		if !math.IsNaN(best) {
			bestXY = append(bestXY, plotter.XY{X: x, Y: best})
		}
	}
	if len(vals) == 0 && len(infeasible) > 0 {
		return nil, fmt.Errorf("no feasible trial to draw (all %d complete trials violate a constraint)", len(infeasible))
	}
	if len(vals) == 0 {
		return nil, errors.New("no complete trial to draw")
	}
	fn := o.Function
	known := fn != nil && minimize
	// The y range: every best-so-far value and the central 90% of the
	// values (one wild value must not squash the rest, nor overflow the
	// axis: values beyond it are drawn at its edge), and the known minimum.
	knownMin := math.NaN()
	if known {
		knownMin = fn.MinValue
	}
	var lo, hi float64
	if o.LogY {
		// The range of plotYRange computed on log10 of the values.
		logOf := func(xy plotter.XYs) (plotter.XYs, error) {
			out := make(plotter.XYs, len(xy))
			for i, v := range xy {
				if !(v.Y > 0) {
					return nil, fmt.Errorf("%w; trial %d has %g", ErrNotPositive, int(v.X), v.Y)
				}
				out[i] = plotter.XY{X: v.X, Y: math.Log10(v.Y)}
			}
			return out, nil
		}
		lv, err := logOf(vals)
		if err != nil {
			return nil, err
		}
		lb, _ := logOf(bestXY)
		lk := math.NaN()
		if knownMin > 0 {
			lk = math.Log10(knownMin)
		}
		lo, hi = plotYRange(lv, lb, lk, minimize)
		lo, hi = math.Pow(10, lo), math.Pow(10, hi)
	} else {
		lo, hi = plotYRange(vals, bestXY, knownMin, minimize)
	}
	for i := range vals {
		vals[i].Y = math.Min(math.Max(vals[i].Y, lo), hi)
	}
	for i := range infeasible {
		infeasible[i].Y = math.Min(math.Max(infeasible[i].Y, lo), hi)
	}
	p := plot.New()
	p.Y.Min, p.Y.Max = lo, hi
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Label.Text = "value (log scale)"
	}
	p.Title.Text = fmt.Sprintf("%s: %s with %s", o.Title, o.Config.Direction, o.Config.Policy)
	p.X.Label.Text = "trial"
	if !o.LogY {
		p.Y.Label.Text = "value"
	}
	p.Add(plotter.NewGrid())
	sc, err := plotter.NewScatter(vals)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = color.RGBA{R: 120, G: 120, B: 120, A: 255}
	sc.GlyphStyle.Radius = vg.Points(2)
	p.Add(sc)
	p.Legend.Add("value", sc)
	if len(infeasible) > 0 {
		is, err := plotter.NewScatter(infeasible)
		if err != nil {
			return nil, err
		}
		is.GlyphStyle.Shape = draw.TriangleGlyph{}
		is.GlyphStyle.Color = color.RGBA{R: 200, G: 60, A: 255}
		is.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(is)
		p.Legend.Add("infeasible", is)
	}
	ln, err := plotter.NewLine(bestXY)
	if err != nil {
		return nil, err
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
			return nil, err
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
			reg[i] = plotter.XY{X: b.X, Y: b.Y - fn.MinValue}
		}
		if o.Noisy {
			// The observed values are noisy and may lie below the
			// minimum: the regret is the noise-free value at the best
			// point so far.
			r.Title.Text = "simple regret: f(best point so far) - minimum"
			reg = noiseFreeRegret(trials, fn, o.Config.Direction)
		}
		reg = positive(reg)
		if len(reg) == 0 {
			return panels, nil
		}
		l, err := plotter.NewLine(reg)
		if err != nil {
			return nil, err
		}
		l.LineStyle.Width = vg.Points(2)
		l.LineStyle.Color = plotutil.Color(2)
		r.Add(l)
		panels = append(panels, r)
	}
	return panels, nil
}

// noiseFreeRegret is, after each trial, the noise-free value of the best
// point observed so far minus the function's minimum.
func noiseFreeRegret(trials []study.TrialResult, fn *objectives.Function, dir study.Direction) plotter.XYs {
	var out plotter.XYs
	best, bestF := math.NaN(), math.NaN()
	for _, t := range trials {
		if t.State == study.Complete && len(t.X) == fn.Dim && study.Better(t.Value, best, dir) {
			best, bestF = t.Value, fn.Value(t.X)
		}
		if !math.IsNaN(bestF) {
			out = append(out, plotter.XY{X: float64(t.Number), Y: bestF - fn.MinValue})
		}
	}
	return out
}

// intTicks are the default ticks with integer labels (trial and step
// numbers): a tick between two integers (2.5 on a short axis) is dropped.
type intTicks struct{}

func (intTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Value != math.Trunc(t.Value) {
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
		ticks = append(ticks, t)
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
			// m * 10^e read from its decimal form: the product in
			// floating point labels 1e-4 as 9.999999999999999e-05.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%ge%d", m, int(e)), 64)
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

// Series is one line of a regret panel: the mean over seeds per
// step (step t at index t-1) and its standard deviation.
type Series struct {
	Name      string
	Mean, Std []float64
}

// The size of a panel of Study and Front.
const (
	PanelWidth  = 5 * vg.Inch
	PanelHeight = 3.6 * vg.Inch
)

// RegretPanel draws regret curves against the step on a log scale, each
// with a translucent band of ± one standard deviation (its lower edge cut
// at the axis when mean - std is not positive). Steps where a mean is 0
// (the best arm found) are left out rather than drawn at a made-up floor.
// The axis leaves room above the curves for the legend: top left for
// rising (cumulative) curves, top right for falling ones.
func RegretPanel(title, xlabel string, series []Series, rising bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.X.Tick.Marker = intTicks{}
	p.Y.Label.Text = "regret (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, sr := range series {
		for t, m := range sr.Mean {
			if m > 0 {
				lo, hi = math.Min(lo, m), math.Max(hi, m+sr.Std[t])
			}
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0.1, 1 // every regret 0: an empty panel
	}
	lo /= 2
	if !(hi > lo) {
		hi = lo * 10
	}
	hi *= math.Pow(hi/lo, 0.45) // headroom for the legend
	p.Y.Min, p.Y.Max = lo, hi
	for k, sr := range series {
		col := plotutil.Color(k)
		var upper, lower plotter.XYs
		for t, m := range sr.Mean {
			if m > 0 {
				upper = append(upper, plotter.XY{X: float64(t + 1), Y: math.Min(m+sr.Std[t], hi)})
				lower = append(lower, plotter.XY{X: float64(t + 1), Y: math.Max(m-sr.Std[t], lo)})
			}
		}
		if len(upper) > 1 {
			band := append(plotter.XYs{}, upper...)
			for i := len(lower) - 1; i >= 0; i-- {
				band = append(band, lower[i])
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			r, g, b, _ := col.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 40}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		mean := make(plotter.XYs, len(sr.Mean))
		for t, m := range sr.Mean {
			mean[t] = plotter.XY{X: float64(t + 1), Y: m}
		}
		mean = positive(mean)
		if len(mean) == 0 {
			continue
		}
		l, err := plotter.NewLine(mean)
		if err != nil {
			return nil, err
		}
		l.LineStyle.Width = vg.Points(2)
		l.LineStyle.Color = col
		l.LineStyle.Dashes = plotutil.Dashes(k)
		p.Add(l)
		p.Legend.Add(sr.Name, l)
	}
	p.Legend.Top = true
	p.Legend.Left = rising
	return p, nil
}
