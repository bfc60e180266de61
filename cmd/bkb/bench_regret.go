package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/bkb-go/bkb/bench"
	"github.com/bkb-go/bkb/chart"
	"github.com/bkb-go/bkb/internal/cputime"
	"github.com/bkb-go/bkb/objectives"
)

// runRegret runs the regret benchmark (bench.RunRegret): every problem,
// noise level, optimizer and seed, jobs at a time, and prints a Markdown
// table of medians over seeds.
// regretOutputs are the files bench --regret writes besides its table.
// With suite, the suite's summary against the peers' runs (the JSON lines
// of the file peers) follows the table, ours the optimizer compared.
type regretOutputs struct {
	markdown, csv, plot string
	peers, ours         string
	against             []string
	suite               bool
	from                []string // CSV files of earlier runs to read instead of running
	progress            string   // --progress: the trials told over all runs
}

func runRegret(ctx context.Context, problems, optimizers []string, noise []float64, firstSeed, seeds, jobs int, out regretOutputs, long bool, stdout, stderr io.Writer) error {
	type job struct {
		p    bench.RegretProblem
		v    bench.RegretVariant
		seed uint64
		ck   []int
		rng  float64
		out  bench.RegretRun
		err  error
	}
	var peer []bench.RegretRun
	if out.peers != "" {
		b, err := os.ReadFile(out.peers)
		if err != nil {
			return usageError{err}
		}
		if peer, err = bench.ReadPeerRuns(bytes.NewReader(b)); err != nil {
			return usageError{trimPkg(err)}
		}
	}
	var jobsList []*job
	if len(out.from) > 0 {
		problems = nil
	}
	for _, spec := range problems {
		i := strings.LastIndex(spec, ":")
		name, ts, ok := spec[:max(i, 0)], spec[i+1:], i > 0
		if !ok {
			return usagef("--regret-problems: %q is not name[:dim]:T[/T...]", spec)
		}
		f, err := objectives.Lookup(name)
		if err != nil {
			return usageError{trimPkg(err)}
		}
		var ck []int
		for _, t := range strings.Split(ts, "/") {
			n, err := strconv.Atoi(t)
			if err != nil || n <= 0 {
				return usagef("--regret-problems: %q: bad budget %q", spec, t)
			}
			ck = append(ck, n)
		}
		rng := bench.Range(f)
		for _, nf := range noise {
			for _, o := range optimizers {
				v, err := bench.ParseVariant(o)
				if err != nil {
					return usageError{trimPkg(err)}
				}
				for s := firstSeed; s < firstSeed+seeds; s++ {
					jobsList = append(jobsList, &job{p: bench.RegretProblem{F: f, NoiseFrac: nf}, v: v, seed: uint64(s), ck: ck, rng: rng})
				}
			}
		}
	}
	fmt.Fprintf(stderr, "bkb: regret benchmark, %d runs, %d at a time\n", len(jobsList), jobs)
	trials := 0
	for _, j := range jobsList {
		trials += slices.Max(j.ck)
	}
	prog := newProgress(stderr, out.progress, trials)
	work := make(chan *job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, told := 0, 0
	onTrial := func() {
		mu.Lock()
		told++
		prog.update(told, 0, math.NaN(), 0)
		mu.Unlock()
	}
	for w := 0; w < min(jobs, len(jobsList)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.out, j.err = bench.RunRegretWith(ctx, j.p, j.v, j.seed, j.ck, j.rng, bench.RegretOptions{OnTrial: onTrial})
				mu.Lock()
				done++
				if j.err == nil {
					prog.clear()
					fmt.Fprintf(stderr, "[%d/%d] %s %s seed %d: simple %.3g, %.1f ms/trial\n", done, len(jobsList), j.out.Problem, j.out.Variant, j.seed, j.out.Simple[len(j.out.Simple)-1], j.out.PolicyMS)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobsList {
		if ctx.Err() != nil {
			break
		}
		work <- j
	}
	close(work)
	wg.Wait()
	prog.clear()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: regret benchmark stopped after %d of %d runs", errInterrupted, done, len(jobsList))
	}
	var runs []bench.RegretRun
	for _, path := range out.from {
		rs, err := readRegretCSV(path)
		if err != nil {
			return usagef("--regret-from: %v", err)
		}
		runs = append(runs, rs...)
	}
	for _, j := range jobsList {
		if j.err != nil {
			return fmt.Errorf("%s/%s seed %d: %v", j.p.Name(), j.v.Name, j.seed, j.err)
		}
		runs = append(runs, j.out)
	}
	write := bench.WriteRegretMarkdown
	if out.suite {
		runs = append(runs, peer...)
		wide, resolution := map[string]bool{}, map[string]float64{}
		for _, r := range runs {
			if _, ok := wide[r.Problem]; !ok {
				if f, err := objectives.Lookup(r.Problem); err == nil {
					wide[r.Problem] = bench.WideRatio(f) >= bench.WideThreshold
					resolution[r.Problem] = bench.Resolution(f)
				}
			}
		}
		write = func(w io.Writer, runs []bench.RegretRun) error {
			if err := bench.WriteRegretMarkdown(w, runs); err != nil {
				return err
			}
			fmt.Fprintln(w)
			_, err := bench.WriteSuiteMarkdown(w, runs, out.ours, out.against, wide, resolution)
			return err
		}
	}
	if long {
		rss := cputime.PeakRSS()
		write = func(w io.Writer, runs []bench.RegretRun) error { return bench.WriteLongMarkdown(w, runs, rss) }
	}
	if err := write(stdout, runs); err != nil {
		return err
	}
	if out.markdown != "" {
		var b bytes.Buffer
		if err := write(&b, runs); err != nil {
			return err
		}
		if err := writeFileAtomic(out.markdown, b.Bytes()); err != nil {
			return fmt.Errorf("markdown: %v", err)
		}
		fmt.Fprintf(stdout, "markdown: %s\n", out.markdown)
	}
	if out.csv != "" {
		if err := writeRegretCSV(out.csv, runs); err != nil {
			return fmt.Errorf("csv: %v", err)
		}
		fmt.Fprintf(stdout, "csv: %s\n", out.csv)
	}
	if out.plot != "" {
		if err := plotRegret(out.plot, runs); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "plot: %s\n", out.plot)
	}
	return nil
}

// readRegretCSV reads the runs writeRegretCSV wrote (the simple and
// cumulative regret at each checkpoint).
func readRegretCSV(path string) ([]bench.RegretRun, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(rows) == 0 || len(rows[0]) < 7 || rows[0][0] != "problem" || rows[0][5] != "simple_regret" {
		return nil, fmt.Errorf("%s: not a CSV of bkb bench --regret", path)
	}
	type key struct{ prob, budget, opt, seed string }
	var keys []key
	runs := map[key]*bench.RegretRun{}
	for i, row := range rows[1:] {
		if len(row) < 7 {
			return nil, fmt.Errorf("%s:%d: %d fields", path, i+2, len(row))
		}
		k := key{row[0], row[1], row[2], row[3]}
		t, err1 := strconv.Atoi(row[4])
		simple, err2 := strconv.ParseFloat(row[5], 64)
		cum, err3 := strconv.ParseFloat(row[6], 64)
		seed, err4 := strconv.ParseUint(row[3], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+2, err)
		}
		r := runs[k]
		if r == nil {
			r = &bench.RegretRun{Problem: row[0], Variant: row[2], Seed: seed}
			runs[k] = r
			keys = append(keys, k)
		}
		r.Checkpoints = append(r.Checkpoints, t)
		r.Simple = append(r.Simple, simple)
		r.Cum = append(r.Cum, cum)
		if len(row) >= 10 {
			r.PolicyMS, _ = strconv.ParseFloat(row[7], 64)
			r.FitMS, _ = strconv.ParseFloat(row[8], 64)
			r.CandMS, _ = strconv.ParseFloat(row[9], 64)
		}
	}
	out := make([]bench.RegretRun, 0, len(keys))
	for _, k := range keys {
		out = append(out, *runs[k])
	}
	return out, nil
}

// writeRegretCSV writes one row per run and checkpoint.
func writeRegretCSV(path string, runs []bench.RegretRun) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"problem", "budget", "optimizer", "seed", "T", "simple_regret", "cum_regret", "policy_ms_per_trial", "fit_ms_per_trial", "candidates_ms_per_trial"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, r := range runs {
		budget := strconv.Itoa(slices.Max(r.Checkpoints))
		for k, t := range r.Checkpoints {
			_ = w.Write([]string{r.Problem, budget, r.Variant, strconv.FormatUint(r.Seed, 10), strconv.Itoa(t),
				g(r.Simple[k]), g(r.Cum[k]), g(r.PolicyMS), g(r.FitMS), g(r.CandMS)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// plotRegret draws, for every problem (and budget), the simple regret of
// each optimizer against the evaluation: mean over seeds ± one standard
// deviation.
func plotRegret(path string, runs []bench.RegretRun) error {
	type prob struct {
		name   string
		budget int
	}
	var probs []prob
	var variants []string
	byKey := map[prob]map[string][]bench.RegretRun{}
	for _, r := range runs {
		k := prob{r.Problem, slices.Max(r.Checkpoints)}
		if byKey[k] == nil {
			byKey[k] = map[string][]bench.RegretRun{}
			probs = append(probs, k)
		}
		if !slices.Contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
		byKey[k][r.Variant] = append(byKey[k][r.Variant], r)
	}
	var panels []*plot.Plot
	for _, k := range probs {
		var series []chart.Series
		for _, v := range variants {
			rs := byKey[k][v]
			if len(rs) == 0 {
				continue
			}
			sr := chart.Series{Name: v, Mean: make([]float64, k.budget), Std: make([]float64, k.budget)}
			at := make([]float64, len(rs))
			for t := range k.budget {
				for i, r := range rs {
					at[i] = r.SimpleTrace[t]
				}
				sr.Mean[t], sr.Std[t] = bench.MeanStd(at)
			}
			series = append(series, sr)
		}
		title := fmt.Sprintf("%s, T = %d: simple regret", k.name, k.budget)
		p, err := chart.RegretPanel(title, "evaluation", series, false)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	return savePanels(path, panels, min(len(panels), 3), 4.5*vg.Inch, 3.4*vg.Inch)
}
