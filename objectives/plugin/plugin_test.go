package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCommand returns the command line of the fake plugin (this test binary).
func fakeCommand(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

// startFake starts the fake plugin of the given mode and closes it at the
// end of the test.
func startFake(t *testing.T, mode string, cfg Config) *Process {
	t.Helper()
	cfg.Command = fakeCommand(t)
	// GORACE: under -race a Go program otherwise sleeps 1s when it exits.
	cfg.Env = append(cfg.Env, fakeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	p, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start(%s): %v", mode, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// pid returns the pid of the running plugin instance, 0 if none.
func (p *Process) pid() int {
	if p.cur == nil {
		return 0
	}
	return p.cur.cmd.Process.Pid
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestGoodPlugin(t *testing.T) {
	t.Parallel()
	p := startFake(t, "good", Config{})
	pid := p.pid()
	points := [][]float64{{0.3, 0.3}, {0, 1}, {-2.5, 1e-7}, {}, {1e100}}
	for _, x := range points {
		y, err := p.Evaluate(context.Background(), x)
		if err != nil {
			t.Fatalf("Evaluate(%v): %v", x, err)
		}
		if want := good(x); y != want {
			t.Errorf("Evaluate(%v) = %v, want %v", x, y, want)
		}
	}
	if p.pid() != pid || p.Restarts() != 0 {
		t.Errorf("plugin restarted: pid %d -> %d, Restarts %d", pid, p.pid(), p.Restarts())
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !processGone(pid) {
		t.Errorf("plugin pid %d still exists after Close", pid)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := p.Evaluate(context.Background(), []float64{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Evaluate after Close: %v, want ErrClosed", err)
	}
}

// step is one expected evaluation outcome: kind 0 means success, and the
// message must contain every string of want.
type step struct {
	kind Kind
	want []string
}

func TestBadPlugins(t *testing.T) {
	t.Parallel()
	ok := step{}
	cases := []struct {
		name     string
		mode     string
		cfg      Config
		steps    []step
		restarts int
		samePID  bool // no restart may happen
	}{
		{
			name: "crash on 2nd request, restart limit", mode: "crash2", cfg: Config{MaxRestarts: 3},
			steps: []step{
				ok, {KindCrash, []string{"plugin crashed", "exit status 3", "about to crash on request 2"}},
				ok, {KindCrash, []string{"about to crash on request 4"}},
				ok, {KindCrash, nil},
				ok, {KindCrash, nil},
				{KindTooManyRestarts, []string{"restart limit (3) reached", "last failure", "exit status 3"}},
				{KindTooManyRestarts, nil},
			},
			restarts: 3,
		},
		{
			// The evaluation after the restart has the timeout alone (no
			// start-up allowance), so it must cover a process start on a
			// loaded machine.
			name: "hang", mode: "hang2", cfg: Config{Timeout: time.Second},
			steps:    []step{ok, {KindTimeout, []string{"timed out after 1s", "killed"}}, ok},
			restarts: 1,
		},
		{
			name: "garbage text", mode: "garbage2:text",
			steps:    []step{ok, {KindGarbage, []string{"not a JSON object", `"loss went down, all good"`}}, ok},
			restarts: 1,
		},
		{
			name: "garbage invalid json", mode: "garbage2:json",
			steps:    []step{ok, {KindGarbage, []string{"invalid JSON", `"{\"id\":2,\"y\":1.5"`}}, ok},
			restarts: 1,
		},
		{
			name: "garbage wrong id", mode: "garbage2:wrongid",
			steps:    []step{ok, {KindGarbage, []string{"reply for id 102, want 2"}}, ok},
			restarts: 1,
		},
		{
			name: "garbage missing id", mode: "garbage2:noid",
			steps:    []step{ok, {KindGarbage, []string{`without "id"`}}, ok},
			restarts: 1,
		},
		{
			name: "garbage missing y", mode: "garbage2:noy",
			steps:    []step{ok, {KindGarbage, []string{`neither "y" nor "error"`}}, ok},
			restarts: 1,
		},
		{
			name: "garbage long line truncated", mode: "garbage2:long",
			steps:    []step{ok, {KindGarbage, []string{"xxxxx...(4800 more bytes)"}}, ok},
			restarts: 1,
		},
		{
			name: "garbage y as a string", mode: "garbage2:ystring",
			steps:    []step{ok, {KindGarbage, []string{`"y" is the string "1.5", not a number`}}, ok},
			restarts: 1,
		},
		{
			name: "garbage line over 1 MiB", mode: "garbage2:huge",
			steps:    []step{ok, {KindGarbage, []string{"reply line too long (over 1 MiB)", `"{\"id\":2,\"y\":1,\"pad\":\"ppp`}}, ok},
			restarts: 1,
		},
		{
			name: "line of exactly 1 MiB", mode: "garbage2:maxline",
			steps:   []step{ok, ok, ok},
			samePID: true,
		},
		{
			name: "NaN reply", mode: "nan",
			steps:   []step{{KindNonFinite, []string{"non-finite value NaN"}}, ok, {KindNonFinite, nil}, ok},
			samePID: true,
		},
		{
			name: "plugin error", mode: "error",
			steps:   []step{{KindPluginError, []string{"plugin reported an error: simulation diverged at step 17"}}, ok, {KindPluginError, nil}},
			samePID: true,
		},
		{
			name: "exits at start, no restarts", mode: "exit1", cfg: Config{MaxRestarts: -1},
			steps: []step{
				{KindCrash, []string{"exit status 1", "fake: reading config | fake: fatal: config file missing"}},
				{KindTooManyRestarts, []string{"restart limit (0) reached"}},
			},
		},
		{
			name: "exits at start, one restart", mode: "exit1", cfg: Config{MaxRestarts: 1},
			steps: []step{
				{KindCrash, []string{"config file missing"}},
				{KindCrash, []string{"config file missing"}},
				{KindTooManyRestarts, nil},
			},
			restarts: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startFake(t, tc.mode, tc.cfg)
			pid := p.pid()
			for i, st := range tc.steps {
				x := []float64{float64(i) / 10, 0.5}
				y, err := p.Evaluate(context.Background(), x)
				if st.kind == 0 {
					if err != nil {
						t.Fatalf("evaluation %d: unexpected error: %v", i+1, err)
					}
					if y != good(x) {
						t.Fatalf("evaluation %d: y = %v, want %v", i+1, y, good(x))
					}
					continue
				}
				if err == nil {
					t.Fatalf("evaluation %d: got y = %v, want a %v error", i+1, y, st.kind)
				}
				t.Logf("evaluation %d: %v", i+1, err)
				if got := KindOf(err); got != st.kind {
					t.Fatalf("evaluation %d: kind %v, want %v (error: %v)", i+1, got, st.kind, err)
				}
				if !errors.Is(err, st.kind.Sentinel()) {
					t.Errorf("evaluation %d: errors.Is(err, %v) = false", i+1, st.kind.Sentinel())
				}
				msg := err.Error()
				if !strings.Contains(msg, fakeCommand(t)[0]) {
					t.Errorf("evaluation %d: message does not name the command: %s", i+1, msg)
				}
				for _, w := range st.want {
					if !strings.Contains(msg, w) {
						t.Errorf("evaluation %d: message lacks %q: %s", i+1, w, msg)
					}
				}
			}
			if got := p.Restarts(); got != tc.restarts {
				t.Errorf("Restarts() = %d, want %d", got, tc.restarts)
			}
			if tc.samePID && p.pid() != pid {
				t.Errorf("plugin was restarted (pid %d -> %d)", pid, p.pid())
			}
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestStartTimeout checks that a plugin's start-up does not count against
// the first evaluation's Timeout: the fake sleeps 350ms before
// reading stdin, longer than the 200ms timeout but within timeout plus
// start-up allowance.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	cases := []struct {
		name  string
		mode  string
		start time.Duration
		steps []step
	}{
		{"slow start within allowance", "slowstart:350ms", 600 * time.Millisecond, []step{{}, {}}},
		{"no allowance", "slowstart:350ms", -1, []step{{KindTimeout, []string{"timed out after 200ms (plugin killed)"}}}},
		{"hang counts timeout and allowance", "hang", 100 * time.Millisecond,
			[]step{{KindTimeout, []string{"timed out after 300ms (timeout 200ms + start-up allowance 100ms of a freshly started plugin)"}}}},
		// The first evaluation after a restart that followed a timeout has
		// the timeout alone.
		{"no allowance after a restart", "hang", 100 * time.Millisecond,
			[]step{{KindTimeout, []string{"timed out after 300ms (timeout 200ms + start-up allowance"}},
				{KindTimeout, []string{"timed out after 200ms (plugin killed)"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startFake(t, tc.mode, Config{Timeout: timeout, StartTimeout: tc.start})
			for i, st := range tc.steps {
				x := []float64{float64(i)}
				y, err := p.Evaluate(context.Background(), x)
				if st.kind == 0 {
					if err != nil || y != good(x) {
						t.Fatalf("evaluation %d = %v, %v; want %v", i+1, y, err, good(x))
					}
					continue
				}
				if KindOf(err) != st.kind {
					t.Fatalf("evaluation %d: %v, want kind %v", i+1, err, st.kind)
				}
				for _, w := range st.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("evaluation %d: message lacks %q: %v", i+1, w, err)
					}
				}
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	p := startFake(t, "hang", Config{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Evaluate(ctx, []float64{1})
	if KindOf(err) != KindCanceled || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrCanceled) {
		t.Fatalf("Evaluate with expiring context: %v, want canceled/DeadlineExceeded", err)
	}
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := p.Evaluate(canceled, []float64{1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate with canceled context: %v, want context.Canceled", err)
	}
	if p.Restarts() != 0 {
		t.Errorf("cancellation counted as restart: Restarts() = %d", p.Restarts())
	}
}

func TestCloseDuringEvaluation(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var once sync.Once
	w := writerFunc(func(b []byte) (int, error) {
		if bytes.Contains(b, []byte("hanging on request")) {
			once.Do(func() { close(started) })
		}
		return len(b), nil
	})
	p := startFake(t, "hang", Config{Timeout: time.Minute, Stderr: w})
	pid := p.pid()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Evaluate(context.Background(), []float64{1})
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("plugin never received the request")
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("evaluation ended by Close: %v, want ErrClosed", err)
	}
	if !processGone(pid) {
		t.Errorf("plugin pid %d still exists after Close", pid)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestCloseKillsStubbornPlugin(t *testing.T) {
	t.Parallel()
	p := startFake(t, "noexit", Config{})
	p.closeWait = 100 * time.Millisecond
	if _, err := p.Evaluate(context.Background(), []float64{1}); err != nil {
		t.Fatal(err)
	}
	pid := p.pid()
	err := p.Close()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Close = %v, want an error saying the plugin was killed", err)
	}
	if !processGone(pid) {
		t.Errorf("plugin pid %d still exists after Close", pid)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string
		kind Kind
	}{
		{"empty command", Config{}, "empty command", 0},
		{"not in PATH", Config{Command: []string{"bkb-no-such-plugin-xyz", "--flag"}}, `plugin "bkb-no-such-plugin-xyz --flag": cannot start`, KindStart},
		{"missing file", Config{Command: []string{"./no/such/plugin"}}, "no such file", KindStart},
		{"one-shot missing", Config{Command: []string{"bkb-no-such-plugin-xyz"}, OneShot: true}, "executable file not found", KindStart},
		{"duplicate names", Config{Command: []string{"true"}, ParamNames: []string{"a", "a"}}, `duplicate parameter name "a"`, 0},
		{"negative timeout", Config{Command: []string{"true"}, Timeout: -time.Second}, "negative timeout", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Start(context.Background(), tc.cfg)
			if err == nil {
				_ = p.Close()
				t.Fatalf("Start succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start error %q does not contain %q", err, tc.want)
			}
			if tc.kind != 0 && !errors.Is(err, ErrStart) {
				t.Errorf("Start error %v is not ErrStart", err)
			}
		})
	}
}

func TestParamsAndBadInput(t *testing.T) {
	t.Parallel()
	p := startFake(t, "params", Config{ParamNames: []string{"a", "b"}})
	y, err := p.Evaluate(context.Background(), []float64{2, 0.5})
	if err != nil || y != 20.5 {
		t.Fatalf("Evaluate = %v, %v; want 20.5", y, err)
	}
	for _, x := range [][]float64{{1}, {1, 2, 3}, {math.NaN(), 1}, {1, math.Inf(-1)}} {
		if _, err := p.Evaluate(context.Background(), x); !errors.Is(err, ErrBadInput) {
			t.Errorf("Evaluate(%v) = %v, want ErrBadInput", x, err)
		}
	}
	if p.Restarts() != 0 {
		t.Errorf("bad input restarted the plugin")
	}
}

// typedParams is the Config.Params of the typed tests: x = (lr, layers,
// index of the activation).
func typedParams(x []float64) ([]byte, error) {
	acts := []string{"relu", "tanh"}
	k := int(x[2])
	if k < 0 || k >= len(acts) {
		return nil, errors.New("activation index out of range")
	}
	return json.Marshal(map[string]any{"lr": x[0], "layers": int(x[1]), "act": acts[k]})
}

// TestTypedParams checks that Config.Params and Config.Args reach the
// plugin in both modes (issue 9: an integer arrives as a JSON integer, a
// categorical as its label), against the value the fake computes from
// them, and that a bad hook result is ErrBadInput.
func TestTypedParams(t *testing.T) {
	t.Parallel()
	x := []float64{0.001, 3, 1} // lr, layers, tanh
	const want = 1000*0.001 + 10*3 + 1
	indented := func(x []float64) ([]byte, error) {
		b, err := typedParams(x)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		err = json.Indent(&out, b, "", "  ") // several lines: must be compacted
		return out.Bytes(), err
	}
	args := func(x []float64) ([]string, error) {
		return []string{"--layers=" + strconv.Itoa(int(x[1])), "--act=tanh"}, nil
	}
	for _, oneShot := range []bool{false, true} {
		var stderr syncBuffer
		p := startFake(t, "typed", Config{
			OneShot: oneShot, ParamNames: []string{"lr", "layers", "act"},
			Params: typedParams, Args: args, Stderr: &stderr,
		})
		if y, err := p.Evaluate(context.Background(), x); err != nil || y != want {
			t.Errorf("one-shot %v: Evaluate = %v, %v; want %v", oneShot, y, err, want)
		}
		if oneShot {
			if got := stderr.String(); !strings.Contains(got, `args ["--layers=3" "--act=tanh"] BKB_X "0.001,3,1"`) {
				t.Errorf("one-shot arguments: stderr %q", got)
			}
		}
		p.cfg.Params = indented
		if y, err := p.Evaluate(context.Background(), x); err != nil || y != want {
			t.Errorf("one-shot %v, indented params: Evaluate = %v, %v; want %v", oneShot, y, err, want)
		}
		// ParamNames alone sends the categorical as a number: the strict
		// fake rejects it.
		p.cfg.Params = nil
		if _, err := p.Evaluate(context.Background(), x); !errors.Is(err, ErrPluginError) || !strings.Contains(err.Error(), `want lr, layers and act`) {
			t.Errorf("one-shot %v, untyped params: %v, want the plugin's error", oneShot, err)
		}
		bad := []struct {
			params func([]float64) ([]byte, error)
			want   string
		}{
			{typedParams, "activation index out of range"}, // x below has index 5
			{func([]float64) ([]byte, error) { return []byte(`[1,2]`), nil }, `"[1,2]", not a JSON object`},
			{func([]float64) ([]byte, error) { return []byte(`{"a":`), nil }, "invalid JSON"},
			{func([]float64) ([]byte, error) { return nil, nil }, "invalid JSON"},
		}
		for _, b := range bad {
			p.cfg.Params = b.params
			_, err := p.Evaluate(context.Background(), []float64{0.001, 3, 5})
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), b.want) {
				t.Errorf("one-shot %v: bad params: %v, want ErrBadInput with %q", oneShot, err, b.want)
			}
		}
		if oneShot {
			p.cfg.Params = typedParams
			p.cfg.Args = func([]float64) ([]string, error) { return nil, errors.New("no flag for lr") }
			if _, err := p.Evaluate(context.Background(), x); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "no flag for lr") {
				t.Errorf("bad args: %v, want ErrBadInput", err)
			}
		}
		if p.Restarts() != 0 {
			t.Errorf("one-shot %v: %d restarts", oneShot, p.Restarts())
		}
	}
}

func TestStderrPassThrough(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	p := startFake(t, "stderr", Config{Stderr: &buf})
	for i := 0; i < 3; i++ {
		if _, err := p.Evaluate(context.Background(), []float64{1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("stderr lines = %q, want 3", lines)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "[") || !strings.HasSuffix(l, "] got request "+string(rune('1'+i))) {
			t.Errorf("stderr line %d = %q, want \"[name pid] got request %d\"", i, l, i+1)
		}
	}
}

func TestConcurrentEvaluate(t *testing.T) {
	t.Parallel()
	p := startFake(t, "good", Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				x := []float64{float64(g), float64(i)}
				y, err := p.Evaluate(context.Background(), x)
				if err != nil {
					errs <- err
				} else if y != good(x) {
					errs <- errors.New("wrong value")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOneShot(t *testing.T) {
	t.Parallel()
	x := []float64{0.1, -2, 1e-9}
	cases := []struct {
		mode  string
		cfg   Config
		x     []float64
		want  float64
		kind  Kind
		words []string
	}{
		{mode: "good", x: x, want: good(x)},
		{mode: "json", x: x, want: good(x)},
		{mode: "params", cfg: Config{ParamNames: []string{"a", "b"}}, x: []float64{3, 0.25}, want: 30.25},
		{mode: "nan", x: x, kind: KindNonFinite, words: []string{"NaN"}},
		{mode: "error", x: x, kind: KindPluginError, words: []string{"out of memory"}},
		{mode: "fail", x: x, kind: KindCrash, words: []string{"exit status 4", "segmentation fault (not really)"}},
		{mode: "garbage", x: x, kind: KindGarbage, words: []string{"not a number", "the answer is 42"}},
		{mode: "empty", x: x, kind: KindGarbage, words: []string{"no output"}},
		{mode: "ystring", x: x, kind: KindGarbage, words: []string{`"y" is the string "1.5", not a number`}},
		{mode: "huge", x: x, kind: KindGarbage, words: []string{"last line too long (over 64 KiB)"}},
		{mode: "huge3", x: x, kind: KindGarbage, words: []string{"last line too long (over 64 KiB)"}},
		{mode: "hang", x: x, cfg: Config{Timeout: 200 * time.Millisecond}, kind: KindTimeout, words: []string{"timed out after 200ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			tc.cfg.OneShot = true
			p := startFake(t, tc.mode, tc.cfg)
			y, err := p.Evaluate(context.Background(), tc.x)
			if tc.kind == 0 {
				if err != nil || y != tc.want {
					t.Fatalf("Evaluate = %v, %v; want %v", y, err, tc.want)
				}
				return
			}
			if KindOf(err) != tc.kind {
				t.Fatalf("Evaluate error %v: kind %v, want %v", err, KindOf(err), tc.kind)
			}
			t.Logf("%v", err)
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestRestartable checks what a caller needs to announce restarts (issue 9:
// one-shot runs printed "restart 1 of 3" on every failed trial): a failing
// one-shot plugin is not Restartable and never restarts, a long-lived one
// is and does.
func TestRestartable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    string
		oneShot bool
		want    int // restarts after three failures
	}{
		{"fail", true, 0},
		{"exit1", false, 2},
	} {
		p := startFake(t, tc.mode, Config{OneShot: tc.oneShot, MaxRestarts: 5})
		for i := 0; i < 3; i++ {
			if _, err := p.Evaluate(context.Background(), []float64{1}); KindOf(err) != KindCrash {
				t.Fatalf("%s: evaluation %d: %v, want a crash", tc.mode, i+1, err)
			}
		}
		if p.Restartable() == tc.oneShot {
			t.Errorf("%s, one-shot %v: Restartable() = %v", tc.mode, tc.oneShot, p.Restartable())
		}
		if got := p.Restarts(); got != tc.want {
			t.Errorf("%s, one-shot %v: Restarts() = %d", tc.mode, tc.oneShot, got)
		}
	}
}

func TestRestartAfterExitBetweenEvaluations(t *testing.T) {
	t.Parallel()
	p := startFake(t, "exitafter1", Config{})
	x := []float64{0.7}
	if y, err := p.Evaluate(context.Background(), x); err != nil || y != good(x) {
		t.Fatalf("first evaluation: %v, %v", y, err)
	}
	select {
	case <-p.cur.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("plugin did not exit")
	}
	if y, err := p.Evaluate(context.Background(), x); err != nil || y != good(x) {
		t.Fatalf("evaluation after the plugin exited: %v, %v", y, err)
	}
	if p.Restarts() != 1 {
		t.Errorf("Restarts() = %d, want 1", p.Restarts())
	}
}

// TestNoGoroutineLeak is not parallel: it runs while the parallel tests are
// paused, so the goroutine count is stable.
func TestNoGoroutineLeak(t *testing.T) {
	initSpawner() // the spawner goroutine lives as long as the process
	base := runtime.NumGoroutine()
	cases := []struct {
		cfg   Config
		modes []string
	}{
		{Config{MaxRestarts: 1, Timeout: 200 * time.Millisecond}, []string{"crash2", "hang2", "garbage2:text", "exitafter1", "good"}},
		{Config{OneShot: true, Timeout: 200 * time.Millisecond}, []string{"fail", "hang", "garbage", "good"}},
	}
	for _, tc := range cases {
		cfg := tc.cfg
		for _, mode := range tc.modes {
			p := startFake(t, mode, cfg)
			for i := 0; i < 4; i++ {
				_, _ = p.Evaluate(context.Background(), []float64{1})
			}
			_ = p.Close()
		}
	}
	// Goroutines that are about to return may need a moment to be gone.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
