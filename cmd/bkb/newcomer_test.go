package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPluginOnFunctionBox: -f NAME with a plugin takes the function's box
// as the search space (docs/cli.md's parallel example), instead of
// failing with "no search space".
func TestPluginOnFunctionBox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=sphere"}, "optimize", "-f", "hartmann6", "--workers", "2", "-T", "12",
		"--study", filepath.Join(dir, "h6.jsonl"), "--json", "--progress", "none", "--", testExe(t))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Complete != 12 || len(res.Best.X) != 6 {
		t.Fatalf("complete %d, best %v; want 12 trials of 6 parameters", res.Complete, res.Best)
	}
	for _, v := range res.Best.X {
		if v < 0 || v > 1 {
			t.Errorf("best point %v outside hartmann6's box [0,1]^6", res.Best.X)
		}
	}
}

// TestDocumentedDefaults: the defaults that help and docs state are the
// ones a run uses: 512 Sobol points, an initial design of max(5, 2d).
func TestDocumentedDefaults(t *testing.T) {
	t.Parallel()
	r := runBKB(t, nil, "optimize", "--help")
	for _, want := range []string{"(default 512)", "max(5, 2d)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("optimize --help lacks %q", want)
		}
	}
	r = runBKB(t, nil, "optimize", "-T", "6", "--progress", "lines")
	if !strings.Contains(r.stderr, "from 512 sobol points") {
		t.Errorf("header %q, want 512 sobol points", r.stderr)
	}
	if r = runBKB(t, nil); !strings.Contains(r.stderr, "512 Sobol points") {
		t.Errorf("usage %q, want 512 Sobol points", r.stderr)
	}
}

// TestExportFormats: export --out - writes CSV to stdout, --out x.json
// JSON, and the CSV reads back with create-study --import (ImportCSV).
func TestExportFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "s.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "8", "--study", s, "-q"); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	r := runBKB(t, nil, "export", "--study", s, "--out", "-")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "trial,status,arm,value,best_so_far") || strings.Count(r.stdout, "\n") != 9 {
		t.Fatalf("export --out -: exit %d, stdout %q", r.code, r.stdout)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`export --out - wrote a file named "-"`)
	}
	csvPath := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(csvPath, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "s.json")
	if r := runBKB(t, nil, "export", "--study", s, "--out", jsonPath); r.code != 0 || !strings.Contains(r.stdout, "(json)") {
		t.Fatalf("export json: %v %s %s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(jsonPath)
	var trials []map[string]any
	if err := json.Unmarshal(b, &trials); err != nil || len(trials) != 8 || trials[0]["status"] != "complete" {
		t.Fatalf("export JSON: %v, %d trials: %s", err, len(trials), b)
	}
	// The exported CSV warm-starts a new study.
	s2 := filepath.Join(dir, "s2.jsonl")
	r = runBKB(t, nil, "create-study", "--study", s2, "-f", "branin", "--budget", "20", "--import", csvPath)
	if r.code != 0 || !strings.Contains(r.stderr, "imported 8 evaluations") {
		t.Fatalf("create-study --import: exit %d, %s", r.code, r.stderr)
	}
	r = runBKB(t, nil, "status", "--study", s2, "--json")
	if res := decodeResult(t, r.stdout); res.Complete != 8 {
		t.Errorf("imported study has %d complete trials, want 8", res.Complete)
	}
}

// TestAskTellExtendAndWarmStart: create-study --enqueue hands out the
// given points first; ask --budget asks past the study's budget;
// optimize --resume with a plugin and --budget continues an ask/tell
// study; status -q prints nothing.
func TestAskTellExtendAndWarmStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "s.jsonl")
	pts := writeFile(t, dir, "pts.csv", "x1,x2\n\"1.5\",2\n3,4\n")
	if r := runBKB(t, nil, "create-study", "--study", s, "-f", "branin", "--budget", "2", "--enqueue", pts); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	r := runBKB(t, nil, "ask", "--study", s, "-k", "2", "--format", "tsv")
	if r.stdout != "0\t1.5\t2\n1\t3\t4\n" {
		t.Errorf("ask after --enqueue: %q, want the enqueued points", r.stdout)
	}
	r = runBKB(t, nil, "ask", "--study", s)
	if r.code == 0 || !strings.Contains(r.stderr, "--budget N") {
		t.Errorf("ask past the budget: exit %d, %q; want a failure naming --budget", r.code, r.stderr)
	}
	r = runBKB(t, nil, "ask", "--study", s, "--budget", "3")
	if r.code != 0 || !strings.Contains(r.stdout, `"trial":2`) {
		t.Errorf("ask --budget 3: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, tr := range []string{"0", "1", "2"} {
		if r := runBKB(t, nil, "tell", "--study", s, "--trial", tr, "--value", "1"); r.code != 0 {
			t.Fatalf("tell: %s", r.stderr)
		}
	}
	r = runBKB(t, nil, "optimize", "--study", s, "--resume", "--budget", "6")
	if r.code != 2 || !strings.Contains(r.stderr, "plugin command") {
		t.Errorf("resume of an ask/tell study without a plugin: exit %d, %q", r.code, r.stderr)
	}
	r = runBKB(t, []string{"BKB_TEST_PLUGIN=branin"}, "optimize", "--study", s, "--resume", "--budget", "6", "--json", "--progress", "none", "--", testExe(t))
	if r.code != 0 {
		t.Fatalf("resume with a plugin: exit %d, %s", r.code, r.stderr)
	}
	if res := decodeResult(t, r.stdout); res.Complete != 6 {
		t.Errorf("resumed study has %d complete trials, want 6", res.Complete)
	}
	r = runBKB(t, nil, "status", "-q", "--study", s, "--plot", filepath.Join(dir, "p.png"))
	if r.code != 0 || r.stdout != "" {
		t.Errorf("status -q: exit %d, stdout %q", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.png")); err != nil {
		t.Errorf("status -q --plot: %v", err)
	}
}

// TestQuotedCSVInputs: --arms-file and regress read quoted numbers, as
// pandas' QUOTE_ALL or a spreadsheet writes them.
func TestQuotedCSVInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arms := writeFile(t, dir, "arms.csv", "\"x1\",\"x2\"\n\"1\",\"2\"\n\"3\",\"4\"\n\"-2\",\"10\"\n")
	r := runBKB(t, nil, "optimize", "--arms-file", arms, "-f", "branin", "-T", "3", "--json", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("quoted --arms-file: exit %d, %s", r.code, r.stderr)
	}
	var b strings.Builder
	b.WriteString("\"a\",\"b\",\"y\"\n")
	for i := range 60 {
		b.WriteString("\"" + strconv.Itoa(i%7) + "\",\"" + strconv.Itoa(i%5) + "\",\"" + strconv.Itoa(i%7+i%5) + ".5\"\n")
	}
	data := writeFile(t, dir, "q.csv", b.String())
	code, _, stderr := runRegressArgs(t, "--data", data, "--learners", "mean", "--progress", "none")
	if code != 0 {
		t.Fatalf("regress on a quoted CSV: exit %d, %s", code, stderr)
	}
}

// TestSummaryWording: one worker is "1 worker"; the summary names the
// study (not "study journal" for PostgreSQL); with --noise the gap is the
// noise-free value at the best point, never negative; fitted length
// scales of a space with a categorical name every coordinate.
func TestSummaryWording(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := filepath.Join(dir, "w.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", s, "-f", "branin", "--budget", "3"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runBKB(t, []string{"BKB_TEST_PLUGIN=branin"}, "worker", "--study", s, "--", testExe(t))
	if !strings.Contains(r.stderr, "1 worker here") {
		t.Errorf("worker header %q, want \"1 worker here\"", r.stderr)
	}
	r = runBKB(t, nil, "optimize", "-T", "30", "--noise", "50", "--progress", "none", "--json")
	res := decodeResult(t, r.stdout)
	if res.Gap == nil || *res.Gap < 0 {
		t.Errorf("noisy run: gap %v, want a noise-free gap >= 0 (best observed %v)", res.Gap, res.Best.Value)
	}
	space := writeFile(t, dir, "sp.json", `{"params":[{"name":"x","low":0,"high":1},{"name":"act","type":"categorical","choices":["relu","tanh"]}]}`)
	r = runBKB(t, []string{"BKB_TEST_PLUGIN=sphere"}, "optimize", "--space", space, "-T", "25", "--progress", "none", "--study", filepath.Join(dir, "c.jsonl"), "--", testExe(t))
	if !strings.Contains(r.stdout, "act=relu=") || strings.Contains(r.stdout, "#1") {
		t.Errorf("length scales of a categorical space not named: %s", r.stdout)
	}
	if !strings.Contains(r.stdout, "\nstudy: ") {
		t.Errorf("summary lacks the study line: %s", r.stdout)
	}
}

// TestBenchRegretOutputs: bench --regret writes --csv and --plot (they
// were silently ignored), with rows per budget of one problem.
func TestBenchRegretOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csvPath, plotPath := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.svg")
	r := runBKB(t, nil, "bench", "--regret", "--seeds", "1", "--regret-problems", "branin:8,branin:10",
		"--regret-optimizers", "random", "--csv", csvPath, "--plot", plotPath)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"| branin:2 (budget 8) | random | 8 |", "| branin:2 (budget 10) | random | 10 |", "csv: " + csvPath, "plot: " + plotPath} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(csvPath)
	if err != nil || strings.Count(string(b), "\n") != 3 || !strings.HasPrefix(string(b), "problem,budget,optimizer,seed,T,") {
		t.Errorf("regret CSV: %v\n%s", err, b)
	}
	// --first-seed: seeds 7 and 8 (fresh seeds to check a difference).
	csv2 := filepath.Join(dir, "r2.csv")
	r = runBKB(t, nil, "bench", "--regret", "--seeds", "2", "--first-seed", "7", "--regret-problems", "branin:8",
		"--regret-optimizers", "random", "--csv", csv2)
	b2, err := os.ReadFile(csv2)
	if r.code != 0 || err != nil || !strings.Contains(string(b2), ",random,7,8,") || !strings.Contains(string(b2), ",random,8,8,") || strings.Contains(string(b2), ",random,1,8,") {
		t.Errorf("--first-seed 7: exit %d, %v:\n%s%s", r.code, err, b2, r.stderr)
	}
	if r := runBKB(t, nil, "bench", "--regret", "--first-seed", "0"); r.code != 2 || !strings.Contains(r.stderr, "--first-seed must be at least 1") {
		t.Errorf("--first-seed 0: exit %d, %s", r.code, r.stderr)
	}
	// --long takes --first-seed and --csv too (it used to run seed 1
	// whatever --first-seed said), and refuses --plot and --seeds 0
	// (errors_test.go has the other flags a benchmark does not read).
	csv3 := filepath.Join(dir, "long.csv")
	r = runBKB(t, nil, "bench", "--long", "--seeds", "1", "--first-seed", "3", "--long-problems", "branin",
		"--long-budgets", "12", "--long-optimizer", "random", "--csv", csv3, "--progress", "lines")
	b3, err := os.ReadFile(csv3)
	if r.code != 0 || err != nil || !strings.Contains(r.stderr, "seed 3:") || !strings.Contains(string(b3), ",random,3,12,") || strings.Contains(r.stderr, "seed 1:") {
		t.Errorf("--long --first-seed 3: exit %d, %v:\n%s%s", r.code, err, b3, r.stderr)
	}
	// Progress counts the trials of every run (a long run is minutes).
	if !strings.Contains(r.stderr, "bkb: 100% 12/12 trials") {
		t.Errorf("--long --progress lines: no progress line of 12 trials:\n%s", r.stderr)
	}
	for _, args := range [][]string{{"--long", "--plot", filepath.Join(dir, "l.svg")}, {"--long", "--seeds", "0"}, {"--regret", "--seeds", "0"}, {"--long", "--first-seed", "0"}} {
		if r := runBKB(t, nil, append([]string{"bench"}, args...)...); r.code != 2 {
			t.Errorf("bench %v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	svg, err := os.ReadFile(plotPath)
	if err != nil || !strings.Contains(string(svg), "@font-face") || !strings.Contains(string(svg), "Liberation Sans") {
		t.Errorf("regret SVG: %v; want an embedded Liberation Sans font", err)
	}
}

// TestPlotTicksAndTitles: log-axis labels are exact decimals (1e-4, not
// 9.999999999999999e-05); an integer axis has no 2.5; a plugin's title is
// its script, cut to fit; a log axis drops non-positive regrets instead of
// drawing them at a made-up floor.
func TestPlotTitles(t *testing.T) {
	t.Parallel()
	sp := &spec{obj: objectiveSpec{Kind: "plugin", Command: []string{"python3", "-u", "/very/long/path/to/experiments/train_model_with_a_long_name.py", "--epochs", "10"}}}
	if got := plotTitle(sp); got != "plugin train_model_with_a_long_name.py" {
		t.Errorf("plot title %q", got)
	}
}

// TestRegressDictBudget: regress names its dictionary cap --dict-budget
// (--budget is the number of trials in optimize); the old name still
// works but is not listed.
func TestRegressDictBudget(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runRegressArgs(t, "--help")
	stdout += stderr
	if code != 0 || !strings.Contains(stdout, "--dict-budget") || strings.Contains(stdout, "  --budget") {
		t.Errorf("regress --help: exit %d, lists --dict-budget %v, --budget %v", code, strings.Contains(stdout, "--dict-budget"), strings.Contains(stdout, "  --budget"))
	}
	for _, flag := range []string{"--dict-budget", "--budget"} {
		code, _, stderr := runRegressArgs(t, "--stream", "synthetic:branin", "--n", "200", "--learners", "fogd", flag, "20", "--progress", "none")
		if code != 0 {
			t.Errorf("regress %s 20: exit %d, %s", flag, code, stderr)
		}
	}
}
