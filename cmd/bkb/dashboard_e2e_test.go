//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns Debian's chromium (or BKB_CHROMIUM), or skips.
func chromium(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("BKB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (Debian: apt-get install chromium; or set BKB_CHROMIUM): the dashboard's browser test is skipped")
	return ""
}

// TestDashboard loads the dashboard of a 1,000-trial study in headless
// chromium against a `bkb serve` started here: the page is ready in under
// 2 s, every chart has its points, the browser logs no error, and the page
// updates when a trial is told. With BKB_SCREENSHOTS=DIR it writes a
// screenshot of each view there (docs/dashboard.md's images).
func TestDashboard(t *testing.T) {
	exe := chromium(t)
	trials := 1000
	if n, err := strconv.Atoi(os.Getenv("BKB_DASHBOARD_TRIALS")); err == nil && n > 0 {
		trials = n // e.g. 10000, to time a large study
	}
	dir := t.TempDir()
	dashboardStudy(t, dir, "demo", trials)
	srv := startServe(t, "--dir", dir)
	// One trial asked and told over HTTP: the policy fits its ARD kernel
	// (importance) on the 1,000 trials. A larger study is only timed.
	timing := trials != 1000
	complete := trials
	if !timing {
		askTell(t, srv.url, "demo", 0.5)
		complete++
	}

	ctx, problems := browser(t, exe)
	shot := screenshot

	// The list of studies.
	var rows int
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.url+"/"),
		chromedp.Poll(`window.bkb && window.bkb.ready`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll("#studies tbody tr").length`, &rows),
		shot("studies")); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("the studies table has %d rows, want 1", rows)
	}

	// The study: ready (every chart drawn) within the polling timeout.
	var readyMs float64
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.url+"/?study=demo"),
		chromedp.Poll(`window.bkb && window.bkb.ready`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`window.bkb.readyMs`, &readyMs)); err != nil {
		t.Fatal(err)
	}
	// The ready time is a figure (docs/dashboard.md), logged, not
	// asserted: on a loaded machine it varies tenfold (243 to 2,016 ms
	// for the same page), and a timed test fails for the machine's sake.
	t.Logf("dashboard of a %d-trial study ready %.0f ms after the navigation started", complete, readyMs)
	if timing {
		return
	}

	// Every chart has its points.
	points := func(sel string) string {
		var v string
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.points || ""`, sel), &v)); err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := map[string]string{
		"#chart-history":                    fmt.Sprint(complete),
		"#chart-parallel":                   fmt.Sprint(complete),
		"#chart-slices":                     fmt.Sprint(4 * complete),
		"#chart-slices .slice:nth-child(4)": fmt.Sprint(complete),
		"#trials":                           fmt.Sprint(complete),
		"#chart-importance":                 "4",
		"#chart-gp":                         "80",
	}
	for sel, w := range want {
		if got := points(sel); got != w {
			t.Errorf("%s has %q points, want %s", sel, got, w)
		}
	}
	var canvases int
	chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll(".uplot canvas").length`, &canvases))
	if canvases < 6 { // history, 4 slices, GP
		t.Errorf("%d uPlot canvases drawn, want at least 6", canvases)
	}

	// Each view, for the documentation.
	for _, view := range []string{"history", "parallel", "slices", "importance", "gp", "table"} {
		if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#tabs button[data-view=%q]`, view), chromedp.ByQuery),
			chromedp.WaitVisible("#view-"+view, chromedp.ByID), shot("study-"+view)); err != nil {
			t.Fatal(err)
		}
	}

	if err := chromedp.Run(ctx, chromedp.Click(`#tabs button[data-view="history"]`, chromedp.ByQuery),
		chromedp.Click("#logy", chromedp.ByID), shot("study-history-log"), chromedp.Click("#logy", chromedp.ByID),
		chromedp.Click(`#tabs button[data-view="table"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}

	// Sorting and filtering the table.
	var first string
	if err := chromedp.Run(ctx, chromedp.Click(`#trials thead th:nth-child(3)`, chromedp.ByQuery),
		chromedp.Text(`#trials tbody tr:first-child td:nth-child(1)`, &first, chromedp.ByQuery),
		chromedp.SendKeys("#filter", "linear", chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if f := points("#trials"); f == "" || f == fmt.Sprint(complete) {
		t.Errorf("the filter left %s of %d rows", f, complete)
	}

	// A trial told elsewhere appears without a reload.
	askTell(t, srv.url, "demo", 0.25)
	if err := chromedp.Run(ctx, chromedp.Poll(fmt.Sprintf(`window.bkb.complete === %d && document.querySelector("#chart-history").dataset.points === "%d"`, complete+1, complete+1),
		nil, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("the page did not show the new trial: %v", err)
	}

	if p := problems(); len(p) > 0 {
		t.Fatalf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}

// browser starts headless chromium (closed at the test's end) and
// returns its context, with a minute to run, and the errors and warnings
// it logged so far.
func browser(t *testing.T, exe string) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancel)

	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				problems = append(problems, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, log.Enable()); err != nil {
		t.Fatal(err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}
}

// screenshot writes a screenshot of the page to $BKB_SCREENSHOTS/name.png
// (nothing when BKB_SCREENSHOTS is not set).
func screenshot(name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		dir := os.Getenv("BKB_SCREENSHOTS")
		if dir == "" {
			return nil
		}
		var buf []byte
		if err := chromedp.CaptureScreenshot(&buf).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	})
}
