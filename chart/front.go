package chart

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bkb-go/bkb/study"
)

// Front draws a study with several objectives: the first two
// objectives of every complete trial (the Pareto front joined by its
// staircase, dominated and infeasible trials apart), and the hypervolume
// of the feasible trials so far against the trial number.
func Front(trials []study.TrialResult, cfg study.Config, title string) ([]*plot.Plot, error) {
	ds := cfg.ObjectiveDirections()
	front, err := study.ParetoFront(cfg, trials)
	if err != nil {
		return nil, err
	}
	onFront := map[int]bool{}
	for _, t := range front {
		onFront[t.Number] = true
	}
	var dominated, infeasible, fr plotter.XYs
	for _, t := range trials {
		if t.State != study.Complete || len(t.Values) < 2 {
			continue
		}
		xy := plotter.XY{X: t.Values[0], Y: t.Values[1]}
		switch {
		case t.Infeasible:
			infeasible = append(infeasible, xy)
		case onFront[t.Number]:
			fr = append(fr, xy)
		default:
			dominated = append(dominated, xy)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: Pareto front (%d of %d trials)", title, len(front), len(trials))
	if len(ds) > 2 {
		p.Title.Text += ", objectives 1 and 2"
	}
	p.X.Label.Text = fmt.Sprintf("objective 1 (%s)", ds[0])
	p.Y.Label.Text = fmt.Sprintf("objective 2 (%s)", ds[1])
	p.Add(plotter.NewGrid())
	add := func(xy plotter.XYs, name string, shape draw.GlyphDrawer, c color.Color, r vg.Length) error {
		if len(xy) == 0 {
			return nil
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Color, sc.GlyphStyle.Radius = shape, c, r
		p.Add(sc)
		p.Legend.Add(name, sc)
		return nil
	}
	if err := add(dominated, "dominated", draw.CircleGlyph{}, color.RGBA{R: 150, G: 150, B: 150, A: 255}, vg.Points(2)); err != nil {
		return nil, err
	}
	if err := add(infeasible, "infeasible", draw.CrossGlyph{}, color.RGBA{R: 200, G: 60, A: 255}, vg.Points(2.5)); err != nil {
		return nil, err
	}
	if len(ds) == 2 && len(fr) > 1 {
		// The staircase of the front: sorted by the first objective.
		s := slices.Clone(fr)
		slices.SortFunc(s, func(a, b plotter.XY) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
		var stairs plotter.XYs
		for i, q := range s {
			if i > 0 {
				stairs = append(stairs, plotter.XY{X: q.X, Y: s[i-1].Y})
			}
			stairs = append(stairs, q)
		}
		ln, err := plotter.NewLine(stairs)
		if err != nil {
			return nil, err
		}
		ln.LineStyle.Color = plotutil.Color(2)
		p.Add(ln)
	}
	if err := add(fr, "Pareto front", draw.CircleGlyph{}, plotutil.Color(2), vg.Points(3)); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	panels := []*plot.Plot{p}
	if ref, err := study.DefaultReference(cfg, trials); err == nil {
		hv, err := study.Hypervolumes(cfg, trials, ref)
		if err != nil {
			return nil, err
		}
		xy := make(plotter.XYs, len(hv))
		for i, h := range hv {
			xy[i] = plotter.XY{X: float64(trials[i].Number), Y: h}
		}
		h := plot.New()
		h.Title.Text = "hypervolume of the feasible trials so far"
		h.X.Label.Text, h.Y.Label.Text = "trial", "hypervolume"
		h.X.Tick.Marker = intTicks{}
		h.Add(plotter.NewGrid())
		ln, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		ln.LineStyle.Width, ln.LineStyle.Color = vg.Points(2), plotutil.Color(2)
		h.Add(ln)
		panels = append(panels, h)
	}
	return panels, nil
}
