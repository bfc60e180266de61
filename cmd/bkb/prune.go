package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/study"
)

// exitPrune is the exit status of bkb report when the trial should stop.
const exitPrune = 3

// errShouldPrune is what runReport returns when the trial should stop:
// report turns it into exitPrune, with nothing on stderr.
var errShouldPrune = errors.New("the trial should stop")

// readSpaceFile reads a space file, at most study.MaxSpaceFile bytes.
func readSpaceFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, study.MaxSpaceFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > study.MaxSpaceFile {
		return nil, fmt.Errorf("%s: larger than %d bytes: not a space file", path, study.MaxSpaceFile)
	}
	return b, nil
}

// splitPruner takes the optional "pruner" object out of a space file
// ({"params": [...], "pruner": {"kind": "asha", "reduction_factor": 3}})
// and returns the rest, for study.ReadSpace. A file that is not a JSON
// object is returned as it is, for ReadSpace to report.
func splitPruner(b []byte) ([]byte, *pruner.Config, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b, nil, nil
	}
	raw, ok := m["pruner"]
	if !ok {
		return b, nil, nil
	}
	var pc pruner.Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pc); err != nil {
		return nil, nil, fmt.Errorf(`"pruner": %v`, err)
	}
	if err := pc.Normalize(); err != nil {
		return nil, nil, fmt.Errorf(`"pruner": %v`, err)
	}
	delete(m, "pruner")
	rest, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return rest, &pc, nil
}

// prunerConfig returns the pruner of --pruner or of the space file.
func (c *configFlags) prunerConfig(fs *pflag.FlagSet) (pruner.Config, error) {
	switch {
	case fs.Changed("pruner") && c.filePruner != nil:
		return pruner.Config{}, usagef("give the pruner either with --pruner or in the space file, not both")
	case c.filePruner != nil:
		return *c.filePruner, nil
	}
	pc, err := pruner.ParseFlag(c.pruner)
	if err != nil {
		return pruner.Config{}, usagef("--pruner: %v", err)
	}
	return pc, nil
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report --study FILE --trial N --step K --value V", stdout)
	var w where
	w.register(fs, "study journal (required)")
	trial := fs.Int("trial", -1, "trial number printed by ask (required)")
	step := fs.Int("step", -1, "the step (epoch, iteration) of the value, >= 0, each reported once (required)")
	value := fs.String("value", "", "the intermediate value at that step (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := w.check("report"); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case !fs.Changed("trial") || *trial < 0:
		return usagef("report needs --trial N (N >= 0, as printed by ask)")
	case !fs.Changed("step") || *step < 0:
		return usagef("report needs --step K (K >= 0)")
	case !fs.Changed("value"):
		return usagef("report needs --value V")
	}
	v, err := parseDecimal(*value)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("--value %q is not a finite number: want a decimal number like 0.25, -3 or 1.5e-3", *value)
	}
	s, _, closeStore, err := loadStudy(ctx, w, study.Options{Worker: "external"})
	if err != nil {
		return err
	}
	defer closeStore()
	prune, err := s.Report(ctx, *trial, *step, v)
	if err != nil {
		return trimPkg(err)
	}
	if err := closeStore(); err != nil {
		return err
	}
	if prune {
		fmt.Fprintf(stdout, "prune: trial %d should stop at step %d (%s pruner); record it with: bkb tell --study %s --trial %d --pruned\n",
			*trial, *step, s.Config().Pruner.Kind, w, *trial)
		return errShouldPrune
	}
	fmt.Fprintf(stdout, "continue: trial %d step %d\n", *trial, *step)
	return nil
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prunedLine describes a pruned trial for progress lines.
func prunedLine(t study.TrialResult) string {
	if n := len(t.Intermediate); n > 0 {
		last := t.Intermediate[n-1]
		return fmt.Sprintf("bkb: trial %d pruned at step %d (value %s)", t.Number, last.Step, fmtVal(last.Value))
	}
	return fmt.Sprintf("bkb: trial %d pruned", t.Number)
}
