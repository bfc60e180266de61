package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The documentation's commands are run by TestDocsCommands (in the
// end-to-end tier, docs_e2e_test.go: go test -tags e2e) so that the
// docs cannot drift from the program: every line of a code block (fenced
// without a language or as sh/bash/console, or indented by four spaces) in
// README.md, docs/*.md and examples/README.md that starts with "bkb " or
// "go run ./cmd/bkb" is run with the built binary, in order, in a
// temporary directory per file, and must exit 0. A line is not run only
// when it is a synopsis (placeholders such as FILE, NAME, [flags], "...")
// or needs what a test machine lacks (a PostgreSQL server: with
// BKB_POSTGRES_URL set, as .ci/run sets it, the docs' example server is
// replaced by it; python3; the datasets of ../shared/data), and each such
// line is logged with the reason. "go test" lines are checked, not run: their
// packages exist and their -run and -bench patterns name tests there.
//
// Slow commands run in a fast form (small budgets, one seed, one order,
// short prefixes) unless BKB_DOCS_FULL=1 is set, which runs every command
// as written (hours: the scaling and paper tables).
//
// The short tier checks the documents' "go test" lines
// (TestDocsGoCommands) and the extraction itself
// (TestDocCommandsExtraction).

// docFiles are the documents whose commands are run.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md", "../../examples/README.md"}, docs...)
}

// docLine is one command of a document.
type docLine struct {
	file string
	line int    // 1-based line of the command's first line
	text string // the command, continuation lines joined, comment removed
	// output is the expected output printed right after the command in
	// its own fenced block (the README's quick start), if any.
	output []string
}

// docCommands returns the command lines of a Markdown document's code
// blocks.
func docCommands(file string, src []byte) []docLine {
	lines := strings.Split(string(src), "\n")
	var out []docLine
	inFence, runnable := false, false
	var pending *docLine // a command being continued with "\"
	var lastFenceStart int
	var fenceLines []string
	add := func(n int, raw string) {
		text := strings.TrimSpace(raw)
		if pending != nil {
			pending.text += " " + strings.TrimSuffix(text, "\\")
			if !strings.HasSuffix(text, "\\") {
				out = append(out, *pending)
				pending = nil
			}
			return
		}
		text = strings.TrimPrefix(text, "$ ")
		if !strings.HasPrefix(text, "bkb ") && text != "bkb" && !strings.HasPrefix(text, "go ") &&
			!regexp.MustCompile(`^([A-Z_]+=\S+ )+go `).MatchString(text) {
			return
		}
		dl := docLine{file: file, line: n, text: stripComment(strings.TrimSuffix(text, "\\"))}
		if strings.HasSuffix(text, "\\") {
			pending = &dl
			return
		}
		out = append(out, dl)
	}
	for i, l := range lines {
		n := i + 1
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if !inFence {
				lang := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```"))
				inFence, runnable = true, lang == "" || lang == "sh" || lang == "bash" || lang == "console"
				lastFenceStart, fenceLines = n, nil
				continue
			}
			inFence = false
			// A block of output right after a block whose last command
			// printed it (a first line "bkb: ..." of a header).
			if len(fenceLines) > 0 && strings.HasPrefix(fenceLines[0], "bkb: minimize") {
				for k := len(out) - 1; k >= 0; k-- {
					if c := &out[k]; strings.HasPrefix(c.text, "bkb optimize") || strings.HasPrefix(c.text, "go run ./cmd/bkb optimize") {
						if c.output == nil && lastFenceStart-c.line < 12 {
							c.output = fenceLines
						}
						break
					}
				}
			}
			continue
		}
		if inFence {
			fenceLines = append(fenceLines, l)
			if runnable {
				add(n, l)
			}
			continue
		}
		if strings.HasPrefix(l, "    ") && (i == 0 || strings.TrimSpace(lines[i-1]) == "" || strings.HasPrefix(lines[i-1], "    ")) {
			add(n, l)
		}
	}
	return out
}

// stripComment removes a trailing shell comment (" # ...", outside quotes).
func stripComment(s string) string {
	var quote rune
	prevSpace := false
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && prevSpace:
			return strings.TrimSpace(s[:i])
		}
		prevSpace = r == ' ' || r == '\t'
	}
	return strings.TrimSpace(s)
}

// placeholder matches the words of a synopsis: a line with one is
// documentation of a form, not a command to run.
var placeholder = regexp.MustCompile(`(^|[\s=])(FILE|NAME|CMD|N|Y|MSG|MESSAGE|URL)(\s|$|,|\.)|\[flags\]|\[-- |\.\.\.|\|`)

// fastForm rewrites a slow command to a fast one with the same flags:
// budgets, seeds, orders and prefixes cut down.
func fastForm(args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := append([]string(nil), args...)
	set := func(flag string, cap int, appendIfMissing bool, alias ...string) {
		for i := 0; i+1 < len(out); i++ {
			if out[i] == flag || (len(alias) > 0 && out[i] == alias[0]) {
				if v, err := strconv.Atoi(out[i+1]); err == nil && v > cap {
					out[i+1] = strconv.Itoa(cap)
				}
				return
			}
		}
		if appendIfMissing {
			out = append(out, flag, strconv.Itoa(cap))
		}
	}
	list := func(flag, value string) {
		for i := 0; i+1 < len(out); i++ {
			if out[i] == flag {
				out[i+1] = value
				return
			}
		}
		out = append(out, flag, value)
	}
	has := func(flag string) bool {
		for _, a := range out {
			if a == flag {
				return true
			}
		}
		return false
	}
	switch out[1] {
	case "optimize", "create-study", "worker":
		set("--budget", 20, false, "-T")
	case "bench":
		switch {
		case has("--scale"):
			list("--scale-arms", "300")
			list("--scale-t", "10,20")
			list("--scale-variants", "bkb,gp-ucb")
		case has("--pruning"):
			set("--seeds", 1, true)
			set("--pruning-trials", 6, true)
			list("--pruning-tasks", "hartmann3")
			for i := 0; i+1 < len(out); i++ {
				if out[i] == "--pruning-optuna" {
					out = append(out[:i], out[i+2:]...) // Optuna's runs take minutes
					break
				}
			}
		case has("--regret"):
			for i := 0; i+1 < len(out); i++ {
				if out[i] == "--regret-problems" {
					out[i+1] = regexp.MustCompile(`:(\d+)(/\d+)*(,|$)`).ReplaceAllString(out[i+1], ":12$3")
				}
			}
			if !has("--regret-problems") {
				list("--regret-problems", "branin:12")
			}
			set("--seeds", 1, true)
		default:
			set("--seeds", 1, true)
			set("--budget", 15, true, "-T")
			set("--arms", 200, true)
			if !has("--objectives") {
				list("--objectives", "branin")
			}
		}
	case "regress":
		set("--orders", 1, false)
		if !slices.Contains(out, "sim000") { // sim000's --n is its number of rounds, 80 by default
			set("--n", 300, true)
		}
	}
	return out
}

// checkGoTest checks a documented "go test" command: its packages exist
// and its -run and -bench patterns match tests there.
func checkGoTest(t *testing.T, where, text string) {
	t.Helper()
	args, err := splitCommand(text)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		args = args[1:] // environment
	}
	if len(args) < 2 || args[0] != "go" || (args[1] != "test" && args[1] != "build" && args[1] != "run" && args[1] != "tool") {
		t.Logf("%s: not checked: %s", where, text)
		return
	}
	if args[1] != "test" {
		return
	}
	var pkgs, patterns []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-run" || a == "-bench" || a == "-fuzz":
			if i+1 < len(args) {
				patterns = append(patterns, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		case strings.HasPrefix(a, "-") && i+1 < len(args) && (a == "-timeout" || a == "-benchtime" || a == "-count" || a == "-cpuprofile"):
			i++
		}
	}
	var funcs []string
	for _, p := range pkgs {
		if p == "./..." {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("../..", p, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("%s: package %s has no tests: %s", where, p, text)
			continue
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, m := range regexp.MustCompile(`(?m)^func ((Test|Benchmark|Fuzz|Example)\w*)\(`).FindAllStringSubmatch(string(b), -1) {
				funcs = append(funcs, m[1])
			}
		}
	}
	for _, pat := range patterns {
		if pat == "^$" || pat == "." || len(funcs) == 0 {
			continue
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			t.Errorf("%s: bad pattern %q", where, pat)
			continue
		}
		found := false
		for _, f := range funcs {
			if re.MatchString(f) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: %q matches no test in %v: %s", where, pat, pkgs, text)
		}
	}
}

// TestDocsGoCommands checks the "go test" lines of README.md, docs/*.md
// and examples/README.md as TestDocsCommands does (checkGoTest), without
// running anything: the short tier's guard on the documented test
// commands.
func TestDocsGoCommands(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, file := range docFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docCommands(filepath.Base(file), src) {
			if strings.HasPrefix(c.text, "go ") || regexp.MustCompile(`^[A-Z_]+=\S+ go `).MatchString(c.text) {
				checkGoTest(t, fmt.Sprintf("%s:%d", c.file, c.line), c.text)
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no go command found in the documents: the extraction lost them")
	}
}

// TestDocCommandsExtraction checks the extraction on a small document:
// fenced and indented blocks, continuation lines and comments; a go code
// block is not commands; an output block attaches to its command.
func TestDocCommandsExtraction(t *testing.T) {
	t.Parallel()
	doc := "text `bkb inline` is not run\n\n```\nbkb optimize -T 5   # five\n```\n\n```\nbkb: minimize x\n```\n\n" +
		"```go\nbkb := 1\n```\n\n    bkb bench --seeds 2 \\\n              -T 9\n\n```sh\n$ bkb ask --study 'a # b.jsonl'\n```\n"
	got := docCommands("d.md", []byte(doc))
	want := []string{"bkb optimize -T 5", "bkb bench --seeds 2 -T 9", "bkb ask --study 'a # b.jsonl'"}
	if len(got) != len(want) {
		t.Fatalf("got %d commands %+v, want %q", len(got), got, want)
	}
	for i, w := range want {
		if got[i].text != w {
			t.Errorf("command %d = %q, want %q", i, got[i].text, w)
		}
	}
	if len(got[0].output) != 1 || got[0].output[0] != "bkb: minimize x" {
		t.Errorf("output of the first command: %q", got[0].output)
	}
	if got := fastForm([]string{"bkb", "bench", "--regret", "--regret-problems", "branin:60,hartmann6:200/500"}); strings.Join(got, " ") != "bkb bench --regret --regret-problems branin:12,hartmann6:12 --seeds 1" {
		t.Errorf("fast form %q", got)
	}
}

// TestAskTellExample runs examples/asktell.sh as the README suggests: it
// completes a small study and leaves nothing in the repository or the
// working directory (the study goes to a new temporary directory).
func TestAskTellExample(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "awk", "seq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	script, err := filepath.Abs("../../examples/asktell.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", script, "", "6")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BKB="+bkbBin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("asktell.sh: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^study: (\S+)$`).FindSubmatch(out)
	if m == nil || !strings.Contains(string(out), "6 trials: 6 complete") {
		t.Fatalf("asktell.sh output:\n%s", out)
	}
	defer os.RemoveAll(filepath.Dir(string(m[1])))
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("asktell.sh left %d files in the working directory", len(left))
	}
	if _, err := os.Stat("../../branin-study.jsonl"); err == nil {
		t.Error("a branin-study.jsonl is in the repository root")
	}
}

// TestNoInternalCitations: user-facing text (non-test Go, whose comments
// go doc shows, and the documents) names papers by authors, venue and
// year (docs/references.md), never by the project's internal seed
// numbers, spec files or issue numbers.
func TestNoInternalCitations(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`\bseeds? 00\d\b|\bseed00\d\.md\b|\bissue \d+\b|\bbkb\.md\b`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := bad.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: cite the paper (docs/references.md)", strings.TrimPrefix(path, "../../"), i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
