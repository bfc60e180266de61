//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// docPostgres is the PostgreSQL URL of the docs' examples.
const docPostgres = "postgres://bkb:pw@db/bkb"

// skipReason says why a command is not run here ("" to run it).
func skipReason(text, dataDir, pg string) string {
	switch {
	case placeholder.MatchString(text):
		return "a synopsis with placeholders"
	case regexp.MustCompile(`(^|[\s/])bkb serve\b`).MatchString(text):
		return "a server that runs until it is stopped (the serve tests start and stop it)"
	case strings.Contains(text, "postgres://") && (pg == "" || strings.Contains(text, docPostgres)):
		return "a PostgreSQL server: set BKB_POSTGRES_URL to run these commands on it"
	case strings.Contains(text, "python3"):
		if _, err := exec.LookPath("python3"); err != nil {
			return "python3 not found"
		}
	}
	if m := regexp.MustCompile(`--data (\S+)`).FindStringSubmatch(text); m != nil {
		name := m[1]
		builtIn := name == "elevators" || name == "german" || name == "mydata.csv"
		if !builtIn && dataDir == "" {
			return "needs the datasets of ../shared/data, absent here"
		}
	}
	return ""
}

// docEnv is the directory the commands of one document run in: the
// repository's examples and plugins, a ./train.sh plugin, a mydata.csv.
func docEnv(t *testing.T, dataDir string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"examples", "objectives", "bench"} {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if dataDir != "" {
		// ../shared/data, as the docs name it, from the work directory.
		if err := os.MkdirAll(filepath.Join(base, "shared"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dataDir, filepath.Join(base, "shared", "data")); err != nil {
			t.Fatal(err)
		}
	}
	space, err := os.ReadFile(filepath.Join(root, "examples", "space.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "space.json", string(space))
	train := fmt.Sprintf("#!/bin/sh\nBKB_TEST_PLUGIN=sphere exec %q\n", testExe(t))
	if err := os.WriteFile(filepath.Join(dir, "train.sh"), []byte(train), 0o755); err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("a,b,target\n")
	for i := range 400 {
		a, b := float64(i%20)/20, float64(i%7)/7
		fmt.Fprintf(&csv, "%g,%g,%g\n", a, b, a*a+b+0.01*float64(i%3))
	}
	writeFile(t, dir, "mydata.csv", csv.String())
	return dir
}

// timing matches the durations in outputs, which vary from run to run.
var timing = regexp.MustCompile(`[0-9.]+ ?(ms|µs|s)\b`)

// TestDocsCommands runs the commands of README.md, docs/*.md and
// examples/README.md (see the comment above docFiles in docs_test.go).
func TestDocsCommands(t *testing.T) {
	full := os.Getenv("BKB_DOCS_FULL") == "1"
	pg := os.Getenv("BKB_POSTGRES_URL")
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	dataDir, _ := filepath.Abs("../../../shared/data")
	if st, err := os.Stat(dataDir); err != nil || !st.IsDir() {
		dataDir = ""
	}
	var total, ran atomic.Int64
	for _, file := range docFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds := docCommands(filepath.Base(file), src)
		if len(cmds) == 0 {
			continue
		}
		rel := strings.TrimPrefix(file, "../../")
		t.Run(rel, func(t *testing.T) {
			t.Parallel() // each document in its own directory
			dir := docEnv(t, dataDir)
			for _, c := range cmds {
				total.Add(1)
				where := fmt.Sprintf("%s:%d", c.file, c.line)
				text := strings.Replace(c.text, "go run ./cmd/bkb", "bkb", 1)
				if pg != "" && !placeholder.MatchString(text) && strings.Contains(text, docPostgres) {
					// The docs' example server is the test database; the
					// study names are made unique to this run.
					text = strings.ReplaceAll(text, docPostgres, pg)
					text = regexp.MustCompile(`--study (\w+)(\s|$)`).ReplaceAllString(text, "--study ${1}-"+nonce+"$2")
				}
				if strings.HasPrefix(text, "go ") || regexp.MustCompile(`^[A-Z_]+=`).MatchString(text) {
					checkGoTest(t, where, text)
					continue
				}
				if why := skipReason(text, dataDir, pg); why != "" {
					t.Logf("%s: not run (%s): %s", where, why, text)
					continue
				}
				args, err := splitCommand(text)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if !full {
					args = fastForm(args)
				}
				cmd := exec.Command(bkbBin, args[1:]...)
				cmd.Dir = dir
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				start := time.Now()
				err = cmd.Run()
				ran.Add(1)
				if d := time.Since(start); d > 2*time.Second {
					t.Logf("%s: %.1f s: %s", where, d.Seconds(), strings.Join(args, " "))
				}
				if err != nil {
					t.Errorf("%s: %s: %v\nstdout:\n%s\nstderr:\n%s", where, strings.Join(args, " "), err, out.String(), errb.String())
					continue
				}
				if c.output != nil {
					checkDocOutput(t, where, c.output, errb.String()+out.String())
					t.Logf("%s: output compared with the %d lines documented", where, len(c.output))
				}
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d documented commands, %d run", total.Load(), ran.Load())
		if ran.Load() < 20 {
			t.Errorf("only %d documented commands ran: the extraction lost them", ran.Load())
		}
	})
}

// checkDocOutput compares a documented output with the real one, line by
// line, with durations masked; the progress line (redrawn on a terminal)
// is not compared.
func checkDocOutput(t *testing.T, where string, want []string, got string) {
	t.Helper()
	var gotLines []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "bkb: ") && strings.Contains(l, "%") || strings.TrimSpace(l) == "" {
			continue
		}
		gotLines = append(gotLines, timing.ReplaceAllString(l, "T"))
	}
	k := 0
	for _, w := range want {
		if strings.HasPrefix(w, "bkb: ") && strings.Contains(w, "%") || strings.TrimSpace(w) == "" {
			continue
		}
		w = timing.ReplaceAllString(w, "T")
		if k >= len(gotLines) || gotLines[k] != w {
			g := "(nothing)"
			if k < len(gotLines) {
				g = gotLines[k]
			}
			t.Errorf("%s: the documented output differs:\n doc: %s\n got: %s", where, w, g)
			return
		}
		k++
	}
}
