//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// tradeoffStudy creates in dir a constrained two-objective study of 40
// trials (ZDT1's objectives on x and y, Zitzler, Deb and Thiele 2000;
// feasible when x + y <= 1.2), one of them failed, with a trial attribute.
func tradeoffStudy(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sp, err := study.NewSpace(study.Float("x", 0, 1), study.Float("y", 0, 1), study.Int("depth", 1, 4))
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Create(ctx, d, "tradeoff", study.Config{Space: sp, Budget: 40, Seed: 4, Policy: "random",
		Directions: []study.Direction{study.Minimize, study.Minimize}, Constraints: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Optimize(ctx, func(ctx context.Context, tr *study.Trial) (float64, error) {
		if tr.Number == 6 {
			return 0, errors.New("simulation diverged at step 12")
		}
		x, y := tr.Params.Float("x"), tr.Params.Float("y")
		g := 1 + 9*y
		tr.SetValues(x, g*(1-math.Sqrt(x/g)))
		tr.SetConstraints(x + y - 1.2)
		return 0, nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetAttr(ctx, "tradeoff", storage.Attr{Trial: 3, Key: "machine", Value: json.RawMessage(`"gpu-2"`)}); err != nil {
		t.Fatal(err)
	}
}

// curvesStudy creates in dir a study of 30 trials that report 10 steps of
// a learning curve each, with the median pruner: some are pruned, one
// fails.
func curvesStudy(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sp, err := study.NewSpace(study.LogFloat("lr", 1e-4, 1), study.Int("width", 8, 256))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := pruner.ParseFlag("median:startup=4,warmup=2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Create(ctx, d, "curves", study.Config{Space: sp, Budget: 30, Seed: 9, Policy: "random", Pruner: pc})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	err = s.Optimize(ctx, func(ctx context.Context, tr *study.Trial) (float64, error) {
		// A loss that falls to a floor set by how far lr is from 1e-2.
		floor := 0.1 + 0.3*math.Abs(math.Log10(tr.Params.Float("lr"))+2)
		v := 0.0
		for step := range 10 {
			v = floor + 2*math.Exp(-float64(step)/3) + 0.02*r.NormFloat64()
			if tr.Number == 11 && step == 4 {
				return 0, errors.New("out of memory at step 4")
			}
			if err := tr.Report(ctx, step, v); err != nil {
				return 0, err
			}
			if tr.ShouldPrune() {
				return 0, study.ErrPruned
			}
		}
		return v, nil
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
}

// TestDashboardViews opens the views of a two-objective constrained
// study (the directions in the summary, the Pareto front, the contour,
// the EDF, errors and attributes in the table) and of a study with
// learning curves and pruned trials, in headless chromium, and checks
// what each draws against the API. With BKB_SCREENSHOTS=DIR it writes a
// screenshot of each view there (docs/dashboard.md's images).
func TestDashboardViews(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	tradeoffStudy(t, dir)
	curvesStudy(t, dir)
	srv := startServe(t, "--dir", dir)
	var sum struct {
		ParetoFront []int `json:"pareto_front"`
		Counts      map[string]int
	}
	call(t, "GET", srv.url+"/api/studies/tradeoff", nil, &sum)
	if len(sum.ParetoFront) < 2 {
		t.Fatalf("the tradeoff study's front: %v", sum.ParetoFront)
	}
	var trials struct {
		Trials []struct {
			State      string
			Infeasible bool
		}
	}
	call(t, "GET", srv.url+"/api/studies/tradeoff/trials", nil, &trials)
	complete, feasible := 0, 0
	for _, tr := range trials.Trials {
		if tr.State == "complete" {
			complete++
			if !tr.Infeasible {
				feasible++
			}
		}
	}
	if complete != 39 || feasible == complete {
		t.Fatalf("%d complete trials, %d feasible: want 39 and some infeasible", complete, feasible)
	}

	ctx, problems := browser(t, exe)
	get := func(js string) string {
		t.Helper()
		var v string
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &v)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	data := func(sel, key string) string {
		return get(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset[%q] || ""`, sel, key))
	}
	view := func(name, shot string) {
		t.Helper()
		if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#tabs button[data-view=%q]`, name), chromedp.ByQuery),
			chromedp.WaitVisible("#view-"+name, chromedp.ByID), screenshot(shot)); err != nil {
			t.Fatalf("view %s: %v", name, err)
		}
	}
	open := func(path string) {
		t.Helper()
		if err := chromedp.Run(ctx, chromedp.Navigate(srv.url+path),
			chromedp.Poll(`window.bkb && window.bkb.ready`, nil, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}

	open("/")
	if err := chromedp.Run(ctx, screenshot("studies-several")); err != nil {
		t.Fatal(err)
	}
	if got := get(`[...document.querySelectorAll("#studies tbody tr")].map(r => r.children[1].textContent).join("|")`); got != "minimize|minimize, minimize" {
		t.Errorf("the studies' directions column: %q", got)
	}
	if got, want := get(`document.querySelector("#studies tbody tr:nth-child(2)").children[9].textContent`), fmt.Sprintf("front of %d", len(sum.ParetoFront)); got != want {
		t.Errorf("the best column of a two-objective study: %q, want %q", got, want)
	}

	open("/?study=tradeoff")
	summary := get(`document.querySelector("#summary").textContent`)
	if !strings.Contains(summary, "directions: minimize, minimize") || strings.Contains(summary, "direction: ") {
		t.Errorf("summary of a two-objective study: %q", summary)
	}
	if !strings.Contains(summary, "hypervolume: ") || !strings.Contains(summary, fmt.Sprintf("Pareto front: %d trials", len(sum.ParetoFront))) {
		t.Errorf("summary without the front's size and hypervolume: %q", summary)
	}
	view("pareto", "study-pareto")
	if got, want := data("#chart-pareto", "points"), fmt.Sprint(complete); got != want {
		t.Errorf("Pareto view: %s points, want %s", got, want)
	}
	if got, want := data("#chart-pareto", "front"), fmt.Sprint(len(sum.ParetoFront)); got != want {
		t.Errorf("Pareto view: %s front points, want %s", got, want)
	}
	if got, want := data("#chart-pareto", "infeasible"), fmt.Sprint(complete-feasible); got != want {
		t.Errorf("Pareto view: %s infeasible points, want %s", got, want)
	}
	view("contour", "study-contour")
	if data("#chart-contour", "points") != fmt.Sprint(complete) || data("#chart-contour", "grid") != "3600" {
		t.Errorf("contour: %s points, grid %s", data("#chart-contour", "points"), data("#chart-contour", "grid"))
	}
	view("edf", "study-edf")
	if got := data("#chart-edf", "points"); got != fmt.Sprint(feasible) {
		t.Errorf("EDF: %s points, want the %d feasible trials", got, feasible)
	}
	view("table", "study-table-tradeoffs")
	head := get(`[...document.querySelectorAll("#trials thead th")].map(h => h.textContent).join("|")`)
	for _, col := range []string{"objective 1 (min)", "objective 2 (min)", "feasible", "constraints", "attr: machine", "error"} {
		if !strings.Contains(head, col) {
			t.Errorf("the trials table has no column %q: %s", col, head)
		}
	}
	if data("#trials", "errors") != "1" || !strings.Contains(get(`document.querySelector("#trials tbody").textContent`), "simulation diverged at step 12") {
		t.Errorf("the failed trial's error is not in the table")
	}
	if got := get(`document.querySelector("#trials tbody").textContent`); !strings.Contains(got, "gpu-2") {
		t.Errorf("the trial attribute is not in the table")
	}

	open("/?study=curves")
	var cs struct{ Counts map[string]int }
	call(t, "GET", srv.url+"/api/studies/curves", nil, &cs)
	if cs.Counts["pruned"] == 0 || cs.Counts["failed"] != 1 {
		t.Fatalf("the curves study: %v, want pruned trials and one failed", cs.Counts)
	}
	if !strings.Contains(get(`document.querySelector("#summary").textContent`), "direction: minimize") {
		t.Errorf("a one-objective study's summary has no direction")
	}
	if !get2(t, ctx, `document.querySelector('#tabs button[data-view="pareto"]').offsetParent === null && document.querySelector("#objective-pick").offsetParent === null`) {
		t.Errorf("the Pareto tab or the objective menu is shown for a study of one objective")
	}
	view("curves", "study-curves")
	if got := data("#chart-curves", "points"); got != "30" {
		t.Errorf("learning curves: %s, want the 30 trials (every one reported)", got)
	}
	if got := data("#chart-curves", "pruned"); got != fmt.Sprint(cs.Counts["pruned"]) {
		t.Errorf("learning curves: %s pruned, want %d", got, cs.Counts["pruned"])
	}
	view("table", "study-table-curves")
	if !strings.Contains(get(`document.querySelector("#trials thead").textContent`), "steps") ||
		!strings.Contains(get(`document.querySelector("#trials tbody").textContent`), "out of memory at step 4") {
		t.Errorf("the table of the curves study has no steps column or no error")
	}

	if p := problems(); len(p) > 0 {
		t.Fatalf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}

func get2(t *testing.T, ctx context.Context, js string) bool {
	t.Helper()
	var v bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &v)); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}
