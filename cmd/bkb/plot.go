package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/bkb-go/bkb/chart"
	"github.com/bkb-go/bkb/study"
)

// savePanels draws plots side by side into path (package chart), written
// atomically; the format follows the file name's extension.
func savePanels(path string, panels []*plot.Plot, cols int, w, h vg.Length) error {
	b, err := chart.Encode(path, panels, cols, w, h)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b)
}

// plotTitle names the objective of a plot briefly: a plugin by its
// program (the script, not the interpreter and the whole command line),
// cut to fit above a panel.
func plotTitle(sp *spec) string {
	name := sp.obj.String()
	if sp.obj.Kind == "plugin" && len(sp.obj.Command) > 0 {
		prog := filepath.Base(sp.obj.Command[0])
		for _, a := range sp.obj.Command[1:] {
			if !strings.HasPrefix(a, "-") {
				prog = filepath.Base(a) // the script of an interpreter
				break
			}
		}
		name = "plugin " + prog
	}
	if r := []rune(name); len(r) > 40 {
		name = string(r[:39]) + "…"
	}
	return name
}

// plotStudy draws the study's trials into path (chart.Study).
func plotStudy(path string, sp *spec, trials []study.TrialResult) error {
	return plotStudyScale(path, sp, trials, false)
}

// plotStudyScale is plotStudy with the value axis on a log scale when
// logY is set (every value must then be positive: a usage error
// otherwise). A built-in function's known minimum adds the regret panel.
func plotStudyScale(path string, sp *spec, trials []study.TrialResult, logY bool) error {
	o := chart.StudyOptions{Title: plotTitle(sp), Config: sp.cfg, Noisy: sp.obj.Noise > 0, LogY: logY}
	if sp.obj.Kind == "builtin" {
		o.Function = sp.function()
	}
	panels, err := chart.Study(trials, o)
	if errors.Is(err, chart.ErrNotPositive) {
		return usageError{fmt.Errorf("plot %s: --plot-log: %v", path, err)}
	}
	if err != nil {
		return fmt.Errorf("plot %s: %v", path, err)
	}
	return savePanels(path, panels, len(panels), chart.PanelWidth, chart.PanelHeight)
}
