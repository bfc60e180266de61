package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformedInputs: each malformed input gives one clear "bkb: " line
// on stderr and a non-zero exit code, never a panic.
func TestMalformedInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badCSV := write("arms.csv", "x1,x2\n0.1,0.2\n0.3,0.4,0.5\n")
	badSpace := write("space.json", `{"params":[{"name":"lr","low":1,"high":0}]}`)
	notJSON := write("space2.json", `{"params": [`)
	// A valid study, then one with an unreadable line in the middle.
	good := filepath.Join(dir, "good.jsonl")
	if r := runBKB(t, nil, "optimize", "-T", "5", "-q", "--study", good); r.code != 0 {
		t.Fatalf("making a study: %s", r.stderr)
	}
	b, _ := os.ReadFile(good)
	lines := strings.SplitAfter(string(b), "\n")
	broken := write("broken.jsonl", strings.Join(lines[:3], "")+"{\"kind\":\"tell\",\"trial\":1,\"arm\":oops}\n"+strings.Join(lines[3:], ""))
	foreign := write("foreign.jsonl", "{\"version\":1,\"created\":\"2025-01-02T03:04:05Z\",\"config\":{\"hello\":1}}\n")
	notJournal := write("notes.txt", "hello\n")

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, ""},
		{"unknown command", []string{"optimise"}, 2, `unknown command "optimise"`},
		{"unknown flag", []string{"optimize", "--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{"bad flag value", []string{"optimize", "-T", "ten"}, 2, "invalid argument"},
		{"unknown objective", []string{"optimize", "--objective", "braninn"}, 2, `unknown function "braninn"`},
		{"bad bounds order", []string{"optimize", "--plugin", "true", "--lower", "1,0", "--upper", "0,1"}, 2, "lower bound 1 is not below upper bound 0"},
		{"bad bounds arity", []string{"optimize", "--plugin", "true", "--lower", "0", "--upper", "1,2"}, 2, "1 lower bounds but 2 upper bounds"},
		{"bounds vs function", []string{"optimize", "--lower", "0,0,0", "--upper", "1,1,1"}, 2, "branin is 2-dimensional"},
		{"bad space file", []string{"optimize", "--plugin", "true", "--space", badSpace}, 2, "low must be below high"},
		{"space file not JSON", []string{"optimize", "--plugin", "true", "--space", notJSON}, 2, "space file"},
		{"no space for plugin", []string{"optimize", "--plugin", "true"}, 2, "no search space"},
		{"csv wrong arity", []string{"optimize", "--arms-file", badCSV, "--plugin", "true"}, 2, "line 3: has 3 fields, want 2"},
		{"csv missing", []string{"optimize", "--arms-file", filepath.Join(dir, "nope.csv")}, 2, "no such file"},
		{"unknown policy", []string{"optimize", "--policy", "ucb2"}, 2, `unknown policy "ucb2"`},
		{"unknown kernel", []string{"optimize", "--kernel", "cosine"}, 2, `unknown kernel "cosine"`},
		{"bad beta", []string{"optimize", "--beta", "lots"}, 2, "beta must be a number"},
		{"zero budget", []string{"optimize", "-T", "0"}, 2, "--budget must be positive"},
		{"negative lambda", []string{"optimize", "--lambda", "-1"}, 2, "--lambda must be positive"},
		{"unknown config version", []string{"optimize", "--config-version", "99"}, 2, "--config-version must be 1 to"},
		{"plot extension", []string{"optimize", "--plot", "x.gif"}, 2, "must end in .png or .svg"},
		{"missing plugin program", []string{"optimize", "--plugin", "/nonexistent/plugin", "--lower", "0", "--upper", "1", "-T", "3"}, 1, "/nonexistent/plugin"},
		{"study exists", []string{"optimize", "--study", good}, 2, "already exists"},
		{"resume without study", []string{"optimize", "--resume"}, 2, "--resume needs --study"},
		{"resume missing study", []string{"optimize", "--resume", "--study", filepath.Join(dir, "none.jsonl")}, 2, "does not exist"},
		{"unreadable journal line (resume)", []string{"optimize", "--resume", "--study", broken}, 2, "broken.jsonl:4: invalid record"},
		{"unreadable journal line (ask)", []string{"ask", "--study", broken}, 2, "broken.jsonl:4: invalid record"},
		{"unreadable journal line (status)", []string{"status", "--study", broken}, 2, "broken.jsonl:4: invalid record"},
		{"not a journal", []string{"status", "--study", notJournal}, 2, "notes.txt:1: invalid header"},
		{"foreign journal", []string{"ask", "--study", foreign}, 2, "not a bkb study"},
		{"ask without study", []string{"ask"}, 2, "ask needs --study"},
		{"tell NaN", []string{"tell", "--study", good, "--trial", "0", "--value", "NaN"}, 2, "not finite"},
		{"tell not a number", []string{"tell", "--study", good, "--trial", "0", "--value", "abc"}, 2, "not a number"},
		{"tell unknown trial", []string{"tell", "--study", good, "--trial", "99", "--value", "1"}, 1, "has no trial 99"},
		{"tell both", []string{"tell", "--study", good, "--trial", "0", "--value", "1", "--failed", "x"}, 2, "exactly one of"},
		{"resume external study", []string{"optimize", "--resume", "--study", write("ext.jsonl", "")}, 2, "no complete header line"},
		{"bench unknown policy", []string{"bench", "--policies", "bkb,nope"}, 2, `unknown policy "nope"`},
		{"bench unknown objective", []string{"bench", "--objectives", "nope"}, 2, `unknown function "nope"`},
		{"bench flag of another benchmark", []string{"bench", "--first-seed", "3"}, 2, "--first-seed is not read by the default benchmark"},
		{"bench plot of long", []string{"bench", "--long", "--plot", "x.svg"}, 2, "--plot is not read by --long"},
		{"bench jobs of scale", []string{"bench", "--scale", "--jobs", "2"}, 2, "--jobs is not read by --scale"},
		{"bench two benchmarks", []string{"bench", "--long", "--regret"}, 2, "--long and --regret are two benchmarks"},
		{"bench progress mode", []string{"bench", "--regret", "--progress", "loud"}, 2, "--progress must be auto, bar, lines or none"},
		{"bench negative noise", []string{"bench", "--long", "--regret-noise", "-1"}, 2, "--regret-noise: each noise level must be finite and >= 0"},
		{"bench NaN noise", []string{"bench", "--regret", "--regret-noise", "0,nan"}, 2, "--regret-noise: each noise level must be finite and >= 0"},
		{"bench long budget", []string{"bench", "--long", "--long-budgets", "500,0"}, 2, "--long-budgets: each budget must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runBKB(t, nil, c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, c.code, r.stderr)
			}
			if c.want == "" {
				if r.stderr == "" || strings.Contains(r.stderr, "panic") {
					t.Errorf("stderr: %q", r.stderr)
				}
				return
			}
			checkOneErrorLine(t, r, c.want)
		})
	}
}

// TestHelp: every command answers --help on stdout with exit 0.
func TestHelp(t *testing.T) {
	for _, cmd := range []string{"optimize", "create-study", "ask", "tell", "status", "bench", "objectives"} {
		r := runBKB(t, nil, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Usage: bkb "+cmd) {
			t.Errorf("%s --help: exit %d\n%s%s", cmd, r.code, r.stdout, r.stderr)
		}
	}
	r := runBKB(t, nil, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "optimize") {
		t.Errorf("help: %d %s", r.code, r.stdout)
	}
	r = runBKB(t, nil, "objectives")
	if r.code != 0 || !strings.Contains(r.stdout, "hartmann6") {
		t.Errorf("objectives: %d %s", r.code, r.stdout)
	}
}
