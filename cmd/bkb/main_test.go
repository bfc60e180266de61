package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
)

// bkbBin is the path the tests run bkb by, as a user would: a symbolic
// link named bkb to the test binary itself, which TestMain turns into bkb
// (the re-exec trick: no `go build` of a second binary).
var bkbBin string

// asMainEnv, set to 1, also makes the test binary run as bkb; TestMain
// unsets it before running, so the programs bkb starts (the test binary as
// a plugin) do not inherit it.
const asMainEnv = "BKB_TEST_AS_MAIN"

// stopSnapshotEnv, set to n > 0, makes bkb (the test binary as bkb) stop
// at its n-th write of a snapshot file (a chunk or the list) with the file
// written and not yet renamed (stopAtSnapshotWrite), for the test to kill
// it there.
const stopSnapshotEnv = "BKB_TEST_STOP_SNAPSHOT"

// stopAtSnapshotWrite marks that the process stopped at a snapshot write
// (a file named as the temporary one plus ".stopped") and waits to be
// killed.
func stopAtSnapshotWrite(tmp string) {
	if err := os.WriteFile(tmp+".stopped", nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		time.Sleep(time.Hour) // until the test's SIGKILL
	}
}

// TestMain runs the test binary as bkb when it is invoked as "bkb" (the
// link bkbBin) or with BKB_TEST_AS_MAIN=1; turns it into a plugin program
// for bkb to run when BKB_TEST_PLUGIN is set; and otherwise makes the link
// bkbBin and runs the tests.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "bkb" || os.Getenv(asMainEnv) == "1" {
		os.Unsetenv(asMainEnv)
		if n, err := strconv.Atoi(os.Getenv(stopSnapshotEnv)); err == nil && n > 0 {
			os.Unsetenv(stopSnapshotEnv)
			storage.StopSnapshotWritesForTest(func(tmp string) {
				if n--; n == 0 {
					stopAtSnapshotWrite(tmp)
				}
			})
		}
		main()
		return
	}
	if mode := os.Getenv("BKB_TEST_PLUGIN"); mode != "" {
		os.Exit(testPlugin(mode))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "bkb-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Commands on PostgreSQL keep their local cache in the test's
	// directory, not the user's.
	os.Setenv(cacheDirEnv, filepath.Join(dir, "cache"))
	bkbBin = filepath.Join(dir, "bkb")
	if err := os.Symlink(exe, bkbBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// branin is the Branin-Hoo function, computed independently of package
// objectives.
func branin(x1, x2 float64) float64 {
	b := 5.1 / (4 * math.Pi * math.Pi)
	c := 5 / math.Pi
	t := 1 / (8 * math.Pi)
	u := x2 - b*x1*x1 + c*x1 - 6
	return u*u + 10*(1-t)*math.Cos(x1) + 10
}

// testPlugin is a plugin speaking the long-lived protocol (or the one-shot
// one), evaluating Branin, that misbehaves at the evaluation whose id is
// $BKB_TEST_AT according to mode: crash, hang, garbage, nan, error; mode
// crashloop crashes on every evaluation; slow sleeps $BKB_TEST_SLEEP before
// every reply; noisy adds fresh Gaussian noise (and logs each evaluation to
// $BKB_TEST_EVALLOG); branin always behaves.
func testPlugin(mode string) int {
	if os.Getenv("BKB_PLUGIN_MODE") == "one-shot" {
		if mode == "crashloop" {
			fmt.Fprintln(os.Stderr, "test plugin: simulated crash")
			return 3
		}
		x1, err1 := strconv.ParseFloat(os.Args[len(os.Args)-2], 64)
		x2, err2 := strconv.ParseFloat(os.Args[len(os.Args)-1], 64)
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, "test plugin: bad arguments", os.Args)
			return 2
		}
		fmt.Println(branin(x1, x2))
		return 0
	}
	if mode == "typed" {
		return typedPlugin()
	}
	at, _ := strconv.Atoi(os.Getenv("BKB_TEST_AT"))
	sleep, _ := time.ParseDuration(os.Getenv("BKB_TEST_SLEEP"))
	sc := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for sc.Scan() {
		var req struct {
			ID     int                `json:"id"`
			X      []float64          `json:"x"`
			Params map[string]float64 `json:"params"`
		}
		if mode == "sphere" {
			req.Params = nil // typed params (a categorical label) are not read
			var r struct {
				ID int       `json:"id"`
				X  []float64 `json:"x"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				fmt.Fprintln(os.Stderr, "test plugin: bad request:", err)
				return 2
			}
			req.ID, req.X = r.ID, r.X
		} else if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "test plugin: bad request:", err)
			return 2
		}
		if mode == "sphere" {
			// Any space (the docs' ./train.sh): the sum of squares of x.
			y := 0.0
			for _, v := range req.X {
				y += v * v
			}
			fmt.Fprintf(out, "{\"id\":%d,\"y\":%v}\n", req.ID, y)
			out.Flush()
			continue
		}
		if len(req.X) != 2 || len(req.Params) != 2 {
			fmt.Fprintf(os.Stderr, "test plugin: want 2 coordinates and 2 params, got %v %v\n", req.X, req.Params)
			return 2
		}
		if sleep > 0 {
			time.Sleep(sleep)
		}
		if mode == "noisy" {
			// Branin plus fresh noise: two evaluations of one point differ.
			y := branin(req.X[0], req.X[1]) + rand.NormFloat64()
			logEval(os.Getenv("BKB_TEST_EVALLOG"))
			fmt.Fprintf(out, "{\"id\":%d,\"y\":%v}\n", req.ID, y)
			out.Flush()
			continue
		}
		bad := req.ID == at
		switch {
		case mode == "crashloop" || (mode == "crash" && bad):
			fmt.Fprintln(os.Stderr, "test plugin: simulated crash")
			return 3
		case mode == "hang" && bad:
			time.Sleep(time.Hour)
		case mode == "garbage" && bad:
			fmt.Fprintln(out, "Traceback (most recent call last): this is not JSON")
		case mode == "nan" && bad:
			fmt.Fprintf(out, "{\"id\":%d,\"y\":\"NaN\"}\n", req.ID)
		case mode == "huge":
			// Values near the float range: 1e307 (1 + x1).
			fmt.Fprintf(out, "{\"id\":%d,\"y\":%v}\n", req.ID, 1e307*(1+math.Abs(req.X[0])))
		case mode == "error" && (bad || at < 0):
			fmt.Fprintf(out, "{\"id\":%d,\"error\":\"solver diverged\"}\n", req.ID)
		default:
			fmt.Fprintf(out, "{\"id\":%d,\"y\":%v}\n", req.ID, branin(req.X[0], req.X[1]))
		}
		out.Flush()
	}
	return 0
}

// logEval appends a line naming the plugin's parent (the bkb process that
// runs it) to path: one line per evaluation (an O_APPEND write of a few
// bytes is atomic).
func logEval(path string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d\n", os.Getppid())
	f.Close()
}

// result of one bkb run.
type runResult struct {
	code           int
	stdout, stderr string
}

// runBKB runs bkb with args and extra environment entries: in this
// process (run, as TestRunInProcess checks it) when env is empty, else as a
// separate process (runBKBProcess). A run in this process shares the
// process's state with the runs before it (the passwords registered for
// masking, the paths given with --overwrite): a test whose assertion needs
// a fresh process calls runBKBProcess.
func runBKB(t *testing.T, env []string, args ...string) runResult {
	t.Helper()
	if len(env) == 0 {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		return runResult{code: code, stdout: out.String(), stderr: errb.String()}
	}
	return runBKBProcess(t, env, args...)
}

// runBKBProcess runs bkb as a separate process (the test binary as bkb),
// its environment this one's plus env.
func runBKBProcess(t *testing.T, env []string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(bkbBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running bkb %v: %v", args, err)
	}
	return runResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// testExe is the path of the test binary, used as the plugin program.
func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// decodeResult parses optimize/status --json output.
func decodeResult(t *testing.T, s string) result {
	t.Helper()
	var r result
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("bad JSON output: %v\n%s", err, s)
	}
	return r
}

// checkOneErrorLine asserts stderr is one "bkb: " line mentioning want,
// without a panic.
func checkOneErrorLine(t *testing.T, r runResult, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "bkb: ") {
		t.Errorf("stderr is not one 'bkb: ' line:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not mention %q", r.stderr, want)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("panic:\n%s", r.stderr)
	}
}

// typedPlugin answers requests of the typed space of TestTypedRoundTrip,
// checking that every value arrives in its own type: lr a number in
// [1e-4, 1], layers a JSON integer in [1, 6], act one of its labels, drop on
// its 0.1 grid.
func typedPlugin() int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req struct {
			ID     int                        `json:"id"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "typed plugin: bad request:", err)
			return 2
		}
		var lr, drop float64
		var layers int
		var act string
		bad := json.Unmarshal(req.Params["lr"], &lr) != nil || json.Unmarshal(req.Params["layers"], &layers) != nil ||
			json.Unmarshal(req.Params["act"], &act) != nil || json.Unmarshal(req.Params["drop"], &drop) != nil
		k := math.Round(drop / 0.1)
		if bad || lr < 1e-4 || lr > 1 || layers < 1 || layers > 6 || (act != "relu" && act != "tanh" && act != "gelu") ||
			math.Abs(drop-0.1*k) > 1e-12 || strings.Contains(string(req.Params["layers"]), ".") {
			fmt.Printf("{\"id\":%d,\"error\":\"bad params %s\"}\n", req.ID, sc.Text())
			continue
		}
		v := math.Pow(math.Log10(lr)+2.5, 2) + math.Abs(float64(layers)-3) + drop
		if act == "gelu" {
			v -= 1
		}
		fmt.Printf("{\"id\":%d,\"y\":%v}\n", req.ID, v)
	}
	return 0
}
