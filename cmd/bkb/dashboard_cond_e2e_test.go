//go:build e2e

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// TestDashboardConditional opens a study on a conditional space in
// headless chromium: the views draw the trials that have each parameter
// (the slices and the contour leave the others out, the parallel
// coordinates break their lines), the table leaves inactive parameters
// empty, and the browser reports no error.
func TestDashboardConditional(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	ctx := context.Background()
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := study.NewSpace(study.Categorical("fn", "a", "b"),
		study.Float("x1", 0, 1).When("fn", "a"), study.Float("x2", 0, 1).When("fn", "a"),
		study.Float("y", -1, 1).When("fn", "b"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Create(ctx, d, "cond", study.Config{Space: sp, Budget: 24, Seed: 5, Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Optimize(ctx, func(_ context.Context, tr *study.Trial) (float64, error) {
		if tr.Params.String("fn") == "a" {
			return tr.Params.Float("x1") + tr.Params.Float("x2"), nil
		}
		return 1 + tr.Params.Float("y"), nil
	}, 0)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	branchA := 0
	for _, tr := range s.Trials() {
		if tr.Params.Has("x1") {
			branchA++
		}
	}
	if branchA == 0 || branchA == 24 {
		t.Fatalf("%d of 24 trials in branch a: want both branches", branchA)
	}
	srv := startServe(t, "--dir", dir)
	bctx, problems := browser(t, exe)
	get := func(js string) string {
		t.Helper()
		var v string
		if err := chromedp.Run(bctx, chromedp.Evaluate(js, &v)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	data := func(sel, key string) string {
		return get(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset[%q] || ""`, sel, key))
	}
	view := func(name string) {
		t.Helper()
		if err := chromedp.Run(bctx, chromedp.Click(fmt.Sprintf(`#tabs button[data-view=%q]`, name), chromedp.ByQuery),
			chromedp.WaitVisible("#view-"+name, chromedp.ByID)); err != nil {
			t.Fatalf("view %s: %v", name, err)
		}
	}
	contour := func(x, y string) {
		t.Helper()
		get(fmt.Sprintf(`(() => { const a = document.querySelector("#contour-x"), b = document.querySelector("#contour-y");
			a.value = %q; b.value = %q; a.dispatchEvent(new Event("change")); return ""; })()`, x, y))
	}
	if err := chromedp.Run(bctx, chromedp.Navigate(srv.url+"/?study=cond"),
		chromedp.Poll(`window.bkb && window.bkb.ready`, nil, chromedp.WithPollingTimeout(30e9))); err != nil {
		t.Fatal(err)
	}
	view("parallel")
	if got := data("#chart-parallel", "points"); got != "24" {
		t.Errorf("parallel coordinates: %s trials, want 24", got)
	}
	view("slices")
	if got := data("#chart-slices .slice:nth-child(2)", "points"); got != fmt.Sprint(branchA) {
		t.Errorf("the slice of x1: %s points, want the %d trials that have it", got, branchA)
	}
	view("contour")
	contour("x1", "x2")
	if got := data("#chart-contour", "points"); got != fmt.Sprint(branchA) {
		t.Errorf("contour of x1 and x2: %s points, want %d", got, branchA)
	}
	contour("x1", "y")
	if got := data("#chart-contour", "points"); got != "0" {
		t.Errorf("contour of x1 and y, never both active: %s points", got)
	}
	view("table")
	cells := get(`[...document.querySelectorAll("#trials tbody tr")].map(r => [...r.children].map(c => c.textContent).join(",")).join("\n")`)
	if strings.Contains(cells, "undefined") || strings.Contains(cells, "NaN") {
		t.Errorf("the trials table shows inactive parameters as undefined or NaN:\n%s", cells)
	}
	if p := problems(); len(p) > 0 {
		t.Fatalf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}
