package plugin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as the plugin: when fakeEnv is set, TestMain runs
// the fake plugin named by its value instead of the tests.
const fakeEnv = "BKB_PLUGIN_TEST_FAKE"

// parentEnv, when set, makes the test binary a caller of the package
// instead: see runParent.
const parentEnv = "BKB_PLUGIN_TEST_PARENT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	if os.Getenv(parentEnv) != "" {
		os.Exit(runParent())
	}
	os.Exit(m.Run())
}

// runParent starts the "hang" fake as a long-lived plugin, sends it a
// request, prints the plugin's pid once the plugin is busy with it, and
// waits to be killed.
func runParent() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		return 1
	}
	busy := make(chan struct{})
	var once sync.Once
	w := writerFunc(func(b []byte) (int, error) {
		if bytes.Contains(b, []byte("hanging on request")) {
			once.Do(func() { close(busy) })
		}
		return len(b), nil
	})
	p, err := Start(context.Background(), Config{
		Command: []string{exe},
		Env:     []string{fakeEnv + "=hang", parentEnv + "=", "GORACE=atexit_sleep_ms=0"},
		Timeout: time.Hour,
		Stderr:  w,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		return 1
	}
	pid := p.cur.cmd.Process.Pid
	go func() { _, _ = p.Evaluate(context.Background(), []float64{1}) }()
	<-busy
	fmt.Println(pid)
	select {} // until killed
}

// good is the objective of the well-behaved fake: -sum (x_i-0.3)^2.
func good(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s -= (v - 0.3) * (v - 0.3)
	}
	return s
}

func reply(id int, y float64) {
	fmt.Printf("{\"id\":%d,\"y\":%s}\n", id, strconv.FormatFloat(y, 'g', -1, 64))
}

// runFake implements the fake plugins. Modes (long-lived):
//
//	good        y = good(x)
//	crash2      exits with status 3 on its 2nd request
//	hang        never answers
//	hang2       never answers its 2nd request
//	garbage2:V  answers its 2nd request with garbage variant V (maxline: a
//	            valid reply of exactly 1 MiB)
//	nan         replies "NaN" to odd requests, good(x) to even ones
//	error       replies {"error":...} to odd requests, good(x) to even ones
//	exit1       exits with status 1 at once, complaining on stderr
//	noexit      like good, but ignores the end of stdin
//	stderr      like good, and logs each request on stderr
//	params      y = 10*params.a + params.b
//	exitafter1  answers its first request, then exits with status 0
//	slowstart:D sleeps for the duration D before reading stdin, then good
//	typed       y = typedValue(params), strict about the parameter types
func runFake(mode string) int {
	if os.Getenv("BKB_PLUGIN_MODE") == "one-shot" {
		return runFakeOneShot(mode)
	}
	if strings.HasPrefix(mode, "curve-") {
		return runFakeCurve(mode)
	}
	if mode == "exit1" {
		fmt.Fprintln(os.Stderr, "fake: reading config")
		fmt.Fprintln(os.Stderr, "fake: fatal: config file missing")
		return 1
	}
	if d, ok := strings.CutPrefix(mode, "slowstart:"); ok {
		// Start-up work (imports, data loading) before reading stdin.
		sleep, err := time.ParseDuration(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 2
		}
		time.Sleep(sleep)
		mode = "good"
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; in.Scan(); n++ {
		var req struct {
			ID     int                `json:"id"`
			X      []float64          `json:"x"`
			Params map[string]float64 `json:"params"`
		}
		if mode == "typed" {
			var treq struct {
				ID     int             `json:"id"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(in.Bytes(), &treq); err != nil {
				fmt.Fprintln(os.Stderr, "fake: bad request:", err)
				return 2
			}
			if y, err := typedValue(treq.Params); err != nil {
				fmt.Printf("{\"id\":%d,\"error\":%q}\n", treq.ID, err.Error())
			} else {
				reply(treq.ID, y)
			}
			continue
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad request:", err)
			return 2
		}
		switch {
		case mode == "good" || mode == "noexit":
			reply(req.ID, good(req.X))
		case mode == "stderr":
			fmt.Fprintf(os.Stderr, "got request %d\n", req.ID)
			reply(req.ID, good(req.X))
		case mode == "crash2" && n == 2:
			fmt.Fprintf(os.Stderr, "fake: about to crash on request %d\n", req.ID)
			return 3
		case mode == "crash2":
			reply(req.ID, good(req.X))
		case mode == "hang" || (mode == "hang2" && n == 2):
			fmt.Fprintf(os.Stderr, "hanging on request %d\n", req.ID)
			time.Sleep(time.Hour)
		case mode == "hang2":
			reply(req.ID, good(req.X))
		case strings.HasPrefix(mode, "garbage2:") && n == 2:
			switch strings.TrimPrefix(mode, "garbage2:") {
			case "text":
				fmt.Println("loss went down, all good")
			case "json":
				fmt.Printf("{\"id\":%d,\"y\":1.5\n", req.ID)
			case "wrongid":
				reply(req.ID+100, 1)
			case "noid":
				fmt.Println(`{"y":1}`)
			case "noy":
				fmt.Printf("{\"id\":%d,\"value\":1}\n", req.ID)
			case "long":
				fmt.Println(strings.Repeat("x", 5000))
			case "ystring":
				fmt.Printf("{\"id\":%d,\"y\":\"1.5\"}\n", req.ID)
			case "huge":
				// A valid reply, padded past the 1 MiB line limit.
				fmt.Printf("{\"id\":%d,\"y\":1,\"pad\":\"%s\"}\n", req.ID, strings.Repeat("p", 1<<20))
			case "maxline":
				// A valid reply of exactly 1 MiB, CRLF-terminated: accepted.
				head := fmt.Sprintf("{\"id\":%d,\"y\":%s,\"pad\":\"", req.ID, strconv.FormatFloat(good(req.X), 'g', -1, 64))
				fmt.Printf("%s%s\"}\r\n", head, strings.Repeat("p", 1<<20-len(head)-2))
			}
		case strings.HasPrefix(mode, "garbage2:"):
			reply(req.ID, good(req.X))
		case mode == "nan" && n%2 == 1:
			fmt.Printf("{\"id\":%d,\"y\":\"NaN\"}\n", req.ID)
		case mode == "error" && n%2 == 1:
			fmt.Printf("{\"id\":%d,\"error\":\"simulation diverged at step 17\"}\n", req.ID)
		case mode == "nan" || mode == "error":
			reply(req.ID, good(req.X))
		case mode == "exitafter1":
			reply(req.ID, good(req.X))
			return 0
		case mode == "params":
			a, okA := req.Params["a"]
			b, okB := req.Params["b"]
			if !okA || !okB || len(req.Params) != 2 {
				fmt.Printf("{\"id\":%d,\"error\":\"bad params %v\"}\n", req.ID, req.Params)
				continue
			}
			reply(req.ID, 10*a+b)
		default:
			fmt.Fprintln(os.Stderr, "fake: unknown mode", mode)
			return 2
		}
	}
	if mode == "noexit" {
		time.Sleep(time.Hour)
	}
	return 0
}

// typedValue is the objective of the "typed" fakes: params must be exactly
// {"lr": number, "layers": JSON integer, "act": "relu" or "tanh"}, and the
// value is 1000 lr + 10 layers + (1 for tanh).
func typedValue(raw []byte) (float64, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var params map[string]any
	if err := dec.Decode(&params); err != nil {
		return 0, fmt.Errorf("params: %v", err)
	}
	lr, okLR := params["lr"].(json.Number)
	layers, okL := params["layers"].(json.Number)
	act, okA := params["act"].(string)
	if !okLR || !okL || !okA || len(params) != 3 {
		return 0, fmt.Errorf("params %s: want lr, layers and act", raw)
	}
	n, err := strconv.Atoi(layers.String())
	if err != nil {
		return 0, fmt.Errorf("layers is %s, not a JSON integer", layers)
	}
	y, err := lr.Float64()
	if err != nil {
		return 0, err
	}
	y = 1000*y + 10*float64(n)
	switch act {
	case "relu":
	case "tanh":
		y++
	default:
		return 0, fmt.Errorf("act is %q, not a label", act)
	}
	return y, nil
}

// runFakeOneShot implements the one-shot fakes: x comes in os.Args[1:] and
// must agree with BKB_X (the "typed" fake takes BKB_PARAMS, and echoes its
// arguments on stderr).
func runFakeOneShot(mode string) int {
	args := os.Args[1:]
	if mode == "typed" {
		fmt.Fprintf(os.Stderr, "args %q BKB_X %q\n", args, os.Getenv("BKB_X"))
		y, err := typedValue([]byte(os.Getenv("BKB_PARAMS")))
		if err != nil {
			fmt.Printf("{\"error\":%q}\n", err.Error())
			return 0
		}
		fmt.Println(y)
		return 0
	}
	if got := os.Getenv("BKB_X"); got != strings.Join(args, ",") {
		fmt.Fprintf(os.Stderr, "BKB_X=%q does not match args %q\n", got, args)
		return 5
	}
	x := make([]float64, len(args))
	for i, a := range args {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 5
		}
		x[i] = v
	}
	switch mode {
	case "good":
		fmt.Println("computing...")
		fmt.Println(strconv.FormatFloat(good(x), 'g', -1, 64))
		fmt.Println()
	case "json":
		fmt.Println("log: starting")
		fmt.Printf("{\"y\":%s}\n", strconv.FormatFloat(good(x), 'g', -1, 64))
	case "params":
		var params map[string]float64
		if err := json.Unmarshal([]byte(os.Getenv("BKB_PARAMS")), &params); err != nil {
			fmt.Fprintln(os.Stderr, "BKB_PARAMS:", err)
			return 5
		}
		fmt.Println(10*params["a"] + params["b"])
	case "nan":
		fmt.Println("NaN")
	case "error":
		fmt.Println(`{"error":"out of memory"}`)
	case "fail":
		fmt.Fprintln(os.Stderr, "fake: segmentation fault (not really)")
		return 4
	case "garbage":
		fmt.Println("the answer is 42")
	case "ystring":
		fmt.Println(`{"y":"1.5"}`)
	case "huge", "huge3":
		n := 100 << 10 // kept whole in the tail buffer
		if mode == "huge3" {
			n = 300 << 10 // only its end is kept
		}
		fmt.Println("short line")
		fmt.Println("1.5" + strings.Repeat(" ", 10) + strings.Repeat("9", n))
	case "empty":
	case "hang":
		time.Sleep(time.Hour)
	default:
		fmt.Fprintln(os.Stderr, "fake: unknown mode", mode)
		return 2
	}
	return 0
}
