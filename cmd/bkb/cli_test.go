package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// pluginArgs are the optimize flags for the Branin test plugin.
func pluginArgs(t *testing.T, studyPath string, budget int) []string {
	return []string{"optimize", "--plugin", testExe(t), "--lower", "-5,0", "--upper", "10,15",
		"-T", strconv.Itoa(budget), "--study", studyPath, "--json", "--progress", "none"}
}

// readJournal returns the records of a journal.
func readJournal(t *testing.T, path string) []storage.Record {
	t.Helper()
	_, recs, err := storage.ReadFile(path)
	if err != nil {
		t.Fatalf("reading journal: %v", err)
	}
	return recs
}

// checkJournal asserts the journal holds exactly budget finished trials
// with unique trial numbers 0..budget-1, each asked once and finished once,
// and returns the arm of every trial and the number of failures.
func checkJournal(t *testing.T, path string, budget int) (arms []int, failed int) {
	return checkJournalReasked(t, path, budget, 0)
}

// checkJournalReasked is checkJournal allowing up to reasked trials to be
// asked twice (a trial left pending by a killed run is asked again, at the
// same point, by the run that resumes it) and none three times.
func checkJournalReasked(t *testing.T, path string, budget, reasked int) (arms []int, failed int) {
	t.Helper()
	asked := map[int]int{}
	finished := map[int]int{}
	arms = make([]int, budget)
	for _, r := range readJournal(t, path) {
		switch r.Kind {
		case storage.KindAsk:
			asked[r.Trial]++
			if r.Trial >= 0 && r.Trial < budget {
				arms[r.Trial] = r.Arm
			}
		case storage.KindTell, storage.KindFail:
			finished[r.Trial]++
			if r.Kind == storage.KindFail {
				failed++
			}
		}
	}
	if len(asked) != budget || len(finished) != budget {
		t.Errorf("journal: %d trials asked and %d finished, want %d", len(asked), len(finished), budget)
	}
	twice := 0
	for trial := 0; trial < budget; trial++ {
		if asked[trial] == 2 {
			twice++
		}
		if asked[trial] < 1 || asked[trial] > 2 || finished[trial] != 1 {
			t.Errorf("trial %d asked %d times and finished %d times, want once each", trial, asked[trial], finished[trial])
		}
	}
	if twice > reasked {
		t.Errorf("%d trials asked twice, want at most %d", twice, reasked)
	}
	return arms, failed
}

// TestPluginFailures: a plugin that crashes, hangs, prints garbage, returns
// NaN or reports an error at its 4th evaluation: that trial is recorded as
// failed with a clear message, the plugin is restarted where needed, and
// the run completes its budget.
func TestPluginFailures(t *testing.T) {
	cases := []struct {
		mode, want string
		restarts   bool
	}{
		{"crash", "plugin crashed", true},
		{"hang", "timed out", true},
		{"garbage", "garbage", true},
		{"nan", "non-finite", false},
		{"error", "solver diverged", false},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			args := append(pluginArgs(t, path, 12), "--timeout", "3s")
			r := runBKB(t, []string{"BKB_TEST_PLUGIN=" + c.mode, "BKB_TEST_AT=4"}, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			res := decodeResult(t, r.stdout)
			if res.Trials != 12 || res.Complete != 11 || res.Failed != 1 {
				t.Errorf("trials %d complete %d failed %d, want 12, 11, 1", res.Trials, res.Complete, res.Failed)
			}
			// The failure is one clear line on stderr naming the trial.
			var lines []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.HasPrefix(l, "bkb: trial 3 failed") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("want one 'bkb: trial 3 failed' line mentioning %q; stderr:\n%s", c.want, r.stderr)
			}
			if c.restarts != strings.Contains(r.stderr, "(restarting the plugin: restart 1 of 3)") {
				t.Errorf("restart note: want %v; stderr:\n%s", c.restarts, r.stderr)
			}
			_, failed := checkJournal(t, path, 12)
			if failed != 1 {
				t.Errorf("journal has %d failed trials, want 1", failed)
			}
			for _, rec := range readJournal(t, path) {
				if rec.Kind == storage.KindFail && (rec.Trial != 3 || !strings.Contains(rec.Error, c.want)) {
					t.Errorf("fail record: trial %d error %q, want trial 3 mentioning %q", rec.Trial, rec.Error, c.want)
				}
			}
		})
	}
	t.Run("crashloop", func(t *testing.T) {
		// A plugin that crashes every time uses up its restarts: the run
		// stops with one clear line and exit code 1, and the study stays
		// resumable.
		t.Parallel()
		path := filepath.Join(t.TempDir(), "s.jsonl")
		args := append(pluginArgs(t, path, 10), "--max-restarts", "2", "-q")
		r := runBKB(t, []string{"BKB_TEST_PLUGIN=crashloop"}, args...)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
		}
		checkOneErrorLine(t, runResult{stderr: lastLine(r.stderr)}, "restart limit (2) reached")
		res := decodeResult(t, r.stdout)
		if res.Failed != 3 || res.Pending != 1 || !strings.Contains(res.Error, "restart limit") {
			t.Errorf("failed %d pending %d error %q: want 3 failures (the first run and 2 restarts), 1 pending", res.Failed, res.Pending, res.Error)
		}
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// TestAskBatchAndFailedTell: a batch of asks gives distinct pending points;
// tell records values and failures once only.
func TestAskBatchAndFailedTell(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", path, "--lower", "0,0", "--upper", "1,1", "--names", "lr,mom", "--maximize"); r.code != 0 {
		t.Fatalf("create-study: %d %s", r.code, r.stderr)
	}
	r := runBKB(t, nil, "ask", "--study", path, "-k", "3")
	if r.code != 0 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"params":{"lr":`) || !strings.Contains(lines[2], `"trial":2`) {
		t.Fatalf("ask -k 3 printed:\n%s", r.stdout)
	}
	if r := runBKB(t, nil, "tell", "--study", path, "--trial", "0", "--value", "0.5"); r.code != 0 {
		t.Fatalf("tell: %d %s", r.code, r.stderr)
	}
	if r := runBKB(t, nil, "tell", "--study", path, "--trial", "1", "--failed", "out of memory"); r.code != 0 {
		t.Fatalf("tell --failed: %d %s", r.code, r.stderr)
	}
	r = runBKB(t, nil, "tell", "--study", path, "--trial", "0", "--value", "0.7")
	if r.code != 1 {
		t.Errorf("second tell of trial 0: exit %d, want 1", r.code)
	}
	checkOneErrorLine(t, r, "already complete")
	r = runBKB(t, nil, "status", "--study", path, "--json")
	res := decodeResult(t, r.stdout)
	if res.Complete != 1 || res.Failed != 1 || res.Pending != 1 || res.Direction != "maximize" {
		t.Errorf("status: %+v", res)
	}
	if r := runBKB(t, nil, "status", "--study", path); r.code != 0 || !strings.Contains(r.stdout, "1 pending") {
		t.Errorf("status text: %d\n%s", r.code, r.stdout)
	}
}

// TestOptimizeBuiltinOutputs runs the default optimize and checks the
// table, the trace CSV and the PNG and SVG plots.
func TestOptimizeBuiltinOutputs(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	png := filepath.Join(dir, "plot.png")
	r := runBKB(t, nil, "optimize", "-T", "30", "--trace", trace, "--plot", png, "--progress", "lines")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Best 5 points of 30 complete trials", "| rank | trial |", "known minimum 0.397887", "30 trials: 30 complete, 0 failed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "100% 30/30 trials") {
		t.Errorf("no final progress line:\n%s", r.stderr)
	}
	b, err := os.ReadFile(trace)
	if err != nil || bytes.Count(b, []byte("\n")) != 31 || !bytes.HasPrefix(b, []byte("trial,status,arm,value,best_so_far,simple_regret")) {
		t.Errorf("trace: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot is not a PNG: %v", err)
	}
	svg := filepath.Join(dir, "plot.svg")
	if r := runBKB(t, nil, "optimize", "-T", "10", "-q", "--policy", "random", "--plot", svg); r.code != 0 {
		t.Fatalf("svg: exit %d %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot is not an SVG: %v", err)
	}
}

// TestEveryPolicyAndKernel: each policy, kernel and beta schedule runs, and
// the length-scale fit reports its fits.
func TestEveryPolicyAndKernel(t *testing.T) {
	for _, args := range [][]string{
		{"--policy", "gp-ucb", "--kernel", "matern52"},
		{"--policy", "thompson", "--kernel", "matern32"},
		{"--policy", "ei", "--kernel", "matern12"},
		{"--policy", "random"},
		{"--policy", "bkb-thompson"},
		{"--policy", "bkb", "--beta", "bkb-theorem", "--incremental"},
		{"--policy", "gp-ucb", "--beta", "srinivas:0.05", "--arms", "grid", "-n", "400"},
		{"--policy", "bkb", "--fit-length-scale", "10", "--arms", "lhs"},
		{"--objective", "hartmann3", "--arms", "random", "--noise", "0.1", "--maximize"},
	} {
		r := runBKB(t, nil, append([]string{"optimize", "-T", "25", "--json", "-q"}, args...)...)
		if r.code != 0 {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
			continue
		}
		res := decodeResult(t, r.stdout)
		if res.Complete != 25 {
			t.Errorf("%v: %d complete", args, res.Complete)
		}
		if args[len(args)-1] == "lhs" && (len(res.Fits) != 2 || res.Fits[1].Observations != 20) {
			t.Errorf("%v: fits %+v, want fits at 10 and 20 observations", args, res.Fits)
		}
	}
}

// TestBench runs a small benchmark and checks its table, CSV, Markdown and
// plot.
func TestBench(t *testing.T) {
	dir := t.TempDir()
	csvPath, md, png := filepath.Join(dir, "b.csv"), filepath.Join(dir, "b.md"), filepath.Join(dir, "b.png")
	r := runBKB(t, nil, "bench", "--policies", "bkb,gp-ucb,random", "--objectives", "branin,hartmann3", "--seeds", "2",
		"--arms", "200", "-T", "40", "--csv", csvPath, "--markdown", md, "--plot", png, "--progress", "none")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"cum regret (mean ± std)", "| hartmann3 |", "dict size", "12 runs in"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	if b, err := os.ReadFile(csvPath); err != nil || bytes.Count(b, []byte("\n")) != 7 {
		t.Errorf("csv: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(md); err != nil || !bytes.Contains(b, []byte("|----")) && !bytes.Contains(b, []byte("|:---")) && !bytes.Contains(b, []byte("---:|")) {
		t.Errorf("markdown: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %v", err)
	}
}

// TestOneShotGoPlugin runs the test plugin in one-shot mode.
func TestOneShotGoPlugin(t *testing.T) {
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=branin"}, "optimize", "--plugin", testExe(t), "--one-shot",
		"--lower", "-5,0", "--upper", "10,15", "-T", "12", "--json", "-q")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if res := decodeResult(t, r.stdout); res.Complete != 12 {
		t.Errorf("%d complete", res.Complete)
	}
}
