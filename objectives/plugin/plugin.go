package plugin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults used when the corresponding Config field is zero.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultStartTimeout = 30 * time.Second
	DefaultMaxRestarts  = 3
)

const (
	maxLine        = 1 << 20                // longest stdout line accepted
	garbageQuote   = 200                    // bytes of an offending line quoted in errors
	exitGrace      = time.Second            // wait for exit after stdout EOF
	drainGrace     = 200 * time.Millisecond // wait for a last reply or stderr after exit
	defaultCloseWt = 2 * time.Second        // Close: wait for exit after closing stdin
)

// Config describes a plugin and how to run it.
type Config struct {
	// Command is the program and its arguments, e.g.
	// []string{"python3", "branin.py"}. A program without a path separator
	// is looked up in $PATH; a relative path is relative to Dir.
	Command []string
	// Dir is the working directory of the plugin; "" means the caller's.
	Dir string
	// Env holds extra "KEY=value" entries added to the caller's environment.
	Env []string
	// ParamNames, when set, names the coordinates of x: requests then carry
	// a "params" object mapping each name to its coordinate (a JSON number)
	// and every x must have exactly len(ParamNames) coordinates.
	ParamNames []string
	// Params, when set, returns the "params" object of the point x: a JSON
	// object of its typed parameters, each in its own type (an integer as a
	// JSON integer, a categorical as its label, ...). It replaces the
	// numbers of ParamNames in requests and in BKB_PARAMS (ParamNames, if
	// also set, still checks the length of x). It may be called
	// concurrently. The object may span lines (it is compacted); an error,
	// or anything but a JSON object, fails the evaluation with ErrBadInput.
	Params func(x []float64) ([]byte, error)
	// Args, when set, returns the command-line arguments appended to
	// Command in one-shot mode, replacing the numbers of x (e.g.
	// "--layers=3", "--activation=tanh"); BKB_X still holds the numbers. It
	// may be called concurrently; an error fails the evaluation with
	// ErrBadInput. Long-lived mode does not use it.
	Args func(x []float64) ([]string, error)
	// Timeout bounds one evaluation; DefaultTimeout when 0. A plugin that
	// does not answer in time is killed (and restarted by the next
	// evaluation).
	Timeout time.Duration
	// StartTimeout is the time allowed for the plugin's start-up
	// (interpreter, imports, loading data): the first evaluation after
	// Start (and after a restart that followed a canceled evaluation) may
	// take StartTimeout longer than Timeout, since the protocol has no
	// "ready" message and the start-up happens while that request waits.
	// The first evaluation after a restart that followed a crash, a
	// timeout or garbage gets Timeout alone: such restarts mostly follow a
	// plugin that hangs or crashes, and the allowance would let every one
	// of them run StartTimeout longer. DefaultStartTimeout when 0,
	// no allowance when negative. One-shot mode does not use it: there
	// Timeout bounds every run, start-up included.
	StartTimeout time.Duration
	// MaxRestarts is the number of restarts allowed over the life of the
	// Process after crashes, timeouts or garbage; DefaultMaxRestarts when 0,
	// no restart at all when negative. Once used up, evaluations fail with
	// ErrTooManyRestarts. Restarts after a canceled evaluation are free.
	// A plugin found dead between evaluations is restarted too (and
	// counted). One-shot mode has no restarts.
	MaxRestarts int
	// Stderr, when not nil, receives the plugin's stderr line by line, each
	// line prefixed with "[name pid] ". Writes are serialized.
	Stderr io.Writer
	// OneShot runs Command once per evaluation instead of keeping one
	// process alive (see the package documentation).
	OneShot bool
	// PruneGrace is the time a plugin told to stop (see
	// EvaluateReporting) has to reply before it is killed and restarted
	// (such a restart is free); DefaultPruneGrace when 0.
	PruneGrace time.Duration
}

// DefaultPruneGrace is the default Config.PruneGrace.
const DefaultPruneGrace = 5 * time.Second

// Reporter receives an intermediate value that a plugin sent during an
// evaluation (see EvaluateReporting) and says whether the evaluation
// should stop.
type Reporter func(step int, value float64) (stop bool, err error)

// Process is a running plugin (or, in one-shot mode, the recipe to run it).
// Its methods are safe for concurrent use; in long-lived mode evaluations are
// serialized, in one-shot mode they run concurrently.
type Process struct {
	cfg        Config
	name       string // command line for messages
	short      string // base name of the program, for stderr prefixes
	timeout    time.Duration
	startTime  time.Duration // start-up allowance of a fresh instance
	maxRestart int
	closeWait  time.Duration

	life       context.Context // canceled by Close
	lifeCancel context.CancelFunc
	stderrMu   sync.Mutex

	mu       sync.Mutex // guards closed and inflight.Add
	closed   bool
	inflight sync.WaitGroup

	nextID   atomic.Int64
	restarts atomic.Int64

	sem chan struct{} // long-lived mode: one evaluation at a time
	// guarded by sem:
	cur         *child
	needRestart bool  // the next start counts as a restart
	lastErr     error // the failure that made a restart necessary
}

// evaluator is the objective interface Process satisfies.
var _ interface {
	Evaluate(ctx context.Context, x []float64) (float64, error)
} = (*Process)(nil)

// Start validates cfg and starts the plugin. In one-shot mode nothing is run
// yet, but the program must exist. ctx only bounds the start-up: the plugin
// lives until Close. The error is an *EvalError of KindStart when the
// program cannot be found or started.
func Start(ctx context.Context, cfg Config) (*Process, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("plugin: empty command")
	}
	seen := make(map[string]bool, len(cfg.ParamNames))
	for _, n := range cfg.ParamNames {
		if n == "" {
			return nil, errors.New("plugin: empty parameter name")
		}
		if seen[n] {
			return nil, fmt.Errorf("plugin: duplicate parameter name %q", n)
		}
		seen[n] = true
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("plugin: negative timeout %v", cfg.Timeout)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %q: %w", strings.Join(cfg.Command, " "), err)
	}
	cfg.Command = append([]string(nil), cfg.Command...)
	cfg.Env = append([]string(nil), cfg.Env...)
	cfg.ParamNames = append([]string(nil), cfg.ParamNames...)
	p := &Process{
		cfg:        cfg,
		name:       strings.Join(cfg.Command, " "),
		short:      filepath.Base(cfg.Command[0]),
		timeout:    cfg.Timeout,
		maxRestart: cfg.MaxRestarts,
		closeWait:  defaultCloseWt,
		sem:        make(chan struct{}, 1),
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	switch {
	case cfg.StartTimeout == 0:
		p.startTime = DefaultStartTimeout
	case cfg.StartTimeout > 0:
		p.startTime = cfg.StartTimeout
	}
	if p.maxRestart == 0 {
		p.maxRestart = DefaultMaxRestarts
	} else if p.maxRestart < 0 {
		p.maxRestart = 0
	}
	p.life, p.lifeCancel = context.WithCancel(context.Background())
	if cfg.OneShot {
		if err := checkProgram(cfg); err != nil {
			p.lifeCancel()
			return nil, &EvalError{Kind: KindStart, Command: p.name, Msg: "cannot start", Err: err}
		}
		return p, nil
	}
	c, err := p.startChild()
	if err != nil {
		p.lifeCancel()
		return nil, err
	}
	p.cur = c
	return p, nil
}

// checkProgram reports whether cfg.Command[0] names an existing program.
func checkProgram(cfg Config) error {
	name := cfg.Command[0]
	if !strings.ContainsRune(name, '/') && !strings.ContainsRune(name, filepath.Separator) {
		_, err := exec.LookPath(name)
		return err
	}
	path := name
	if !filepath.IsAbs(path) && cfg.Dir != "" {
		path = filepath.Join(cfg.Dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// Restarts returns how many times the plugin has been restarted after a
// crash, a timeout or garbage. It stays 0 in one-shot mode.
func (p *Process) Restarts() int { return int(p.restarts.Load()) }

// Restartable reports whether the Process keeps one plugin instance that is
// restarted after a crash, a timeout or garbage (long-lived mode), as
// opposed to one-shot mode, where every evaluation runs a new process:
// nothing is ever restarted and Restarts stays 0, so a caller must not
// announce restarts. Whether a restart is still allowed in long-lived mode
// depends on Config.MaxRestarts and Restarts.
func (p *Process) Restartable() bool { return !p.cfg.OneShot }

// Evaluate sends x to the plugin and returns its value. Failures are
// *EvalError values (see the package documentation); the evaluation is never
// retried, but the plugin is restarted for the next one when needed.
func (p *Process) Evaluate(ctx context.Context, x []float64) (float64, error) {
	r, err := p.EvaluateReporting(ctx, x, nil)
	return r.Y, err
}

// EvaluateReply is Evaluate returning the whole reply: with the values of
// several objectives ("y" an array) and the constraint values
// ("constraints") a plugin may send.
func (p *Process) EvaluateReply(ctx context.Context, x []float64) (Reply, error) {
	return p.EvaluateReporting(ctx, x, nil)
}

// EvaluateReporting is EvaluateReply for a plugin that reports
// intermediate values (long-lived mode): before its reply it may write
// lines
//
//	{"id":7,"step":3,"value":0.42}
//
// each passed to report (nil: ignored). When report says stop, the plugin
// receives the line {"id":7,"prune":true} and should answer promptly with
// {"id":7,"pruned":true} (any reply for the id will do); the evaluation
// then fails with ErrPruned. A plugin that has not answered within
// Config.PruneGrace is killed and restarted for the next evaluation,
// without counting against MaxRestarts. An error from report ends the
// evaluation with that error, the plugin killed the same way. In one-shot
// mode report is never called.
func (p *Process) EvaluateReporting(ctx context.Context, x []float64, report Reporter) (Reply, error) {
	id := int(p.nextID.Add(1))
	if err := p.checkInput(id, x); err != nil {
		return Reply{}, err
	}
	params, err := p.paramsJSON(id, x)
	if err != nil {
		return Reply{}, err
	}
	if !p.enter() {
		return Reply{}, p.fail(KindClosed, id, "process is closed", nil)
	}
	defer p.inflight.Done()

	// The evaluation ends at the caller's cancellation, Close, or Timeout;
	// context.Cause tells which. The timeout starts once the plugin is ours.
	ectx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(p.life, func() { cancel(errClosedCause) })
	defer stop()

	if p.cfg.OneShot {
		tctx, cancelT := context.WithTimeoutCause(ectx, p.timeout, &timeoutCause{timeout: p.timeout})
		defer cancelT()
		return p.evalOneShot(ctx, tctx, id, x, params)
	}
	select {
	case p.sem <- struct{}{}:
	case <-ectx.Done():
		return Reply{}, p.abortErr(ctx, ectx, id, false)
	}
	defer func() { <-p.sem }()
	if ectx.Err() != nil {
		return Reply{}, p.abortErr(ctx, ectx, id, false)
	}
	c, err := p.ensureChild(id)
	if err != nil {
		return Reply{}, err
	}
	// A fresh instance may still be starting up: allow for it once.
	tc := &timeoutCause{timeout: p.timeout}
	if c.fresh {
		tc.startup = p.startTime
		c.fresh = false
	}
	tctx, cancelT := context.WithTimeoutCause(ectx, tc.timeout+tc.startup, tc)
	defer cancelT()
	return p.exchange(ctx, tctx, c, id, x, params, report)
}

var errClosedCause = errors.New("plugin process closed")

// timeoutCause is the cause of an evaluation's context when its time is up.
type timeoutCause struct {
	timeout time.Duration // Config.Timeout
	startup time.Duration // start-up allowance included, 0 if none
}

func (c *timeoutCause) Error() string { return "plugin evaluation timed out" }

func (p *Process) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.inflight.Add(1)
	return true
}

func (p *Process) fail(k Kind, id int, msg string, err error) *EvalError {
	return &EvalError{Kind: k, Command: p.name, ID: id, Msg: msg, Err: err}
}

func (p *Process) checkInput(id int, x []float64) error {
	if n := len(p.cfg.ParamNames); n > 0 && len(x) != n {
		return p.fail(KindBadInput, id, fmt.Sprintf("x has %d coordinates, want %d (one per parameter name)", len(x), n), nil)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return p.fail(KindBadInput, id, fmt.Sprintf("x[%d] = %v is not finite", i, v), nil)
		}
	}
	return nil
}

// paramsJSON returns the "params" object of x on one line: from Config.Params,
// else from ParamNames, else nil.
func (p *Process) paramsJSON(id int, x []float64) ([]byte, error) {
	if p.cfg.Params == nil {
		if len(p.cfg.ParamNames) == 0 {
			return nil, nil
		}
		return appendParams(nil, x, p.cfg.ParamNames), nil
	}
	raw, err := p.cfg.Params(x)
	if err != nil {
		return nil, p.fail(KindBadInput, id, "cannot encode the parameters", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, p.fail(KindBadInput, id, "Config.Params returned invalid JSON "+strconv.Quote(truncate(string(raw), 80)), err)
	}
	if b := buf.Bytes(); len(b) == 0 || b[0] != '{' {
		return nil, p.fail(KindBadInput, id, "Config.Params returned "+strconv.Quote(truncate(string(b), 80))+", not a JSON object", nil)
	}
	return buf.Bytes(), nil
}

// abortErr builds the error of an evaluation ended by ectx: timeout, Close
// or the caller's context (ctx).
func (p *Process) abortErr(ctx, ectx context.Context, id int, killed bool) *EvalError {
	var tc *timeoutCause
	switch cause := context.Cause(ectx); {
	case errors.As(cause, &tc) && ctx.Err() == nil:
		msg := fmt.Sprintf("timed out after %v", tc.timeout+tc.startup)
		if tc.startup > 0 {
			msg += fmt.Sprintf(" (timeout %v + start-up allowance %v of a freshly started plugin)", tc.timeout, tc.startup)
		}
		if killed {
			msg += " (plugin killed)"
		}
		return p.fail(KindTimeout, id, msg, nil)
	case errors.Is(cause, errClosedCause) && ctx.Err() == nil:
		return p.fail(KindClosed, id, "process closed during evaluation", nil)
	default:
		return p.fail(KindCanceled, id, "evaluation canceled", ctx.Err())
	}
}

// child is one running instance of a long-lived plugin.
type child struct {
	cmd    *exec.Cmd
	stdin  *os.File // write end of the plugin's stdin
	stdout *os.File // read end of the plugin's stdout
	stderr *os.File // read end of the plugin's stderr
	sink   *stderrSink

	lines      chan outLine  // stdout lines; closed at EOF
	quit       chan struct{} // closed when the child is discarded
	exited     chan struct{} // closed once Wait has returned
	waitErr    error         // Wait's result, valid after exited is closed
	stderrDone chan struct{} // closed when stderr reached EOF
	wg         sync.WaitGroup
	discarded  bool
	fresh      bool // no request sent yet: start-up may still be under way
}

// startChild starts a new instance of the plugin.
func (p *Process) startChild() (*child, error) {
	startErr := func(err error) error {
		return &EvalError{Kind: KindStart, Command: p.name, Msg: "cannot start", Err: err}
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, startErr(err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, startErr(err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, startErr(err)
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	cmd.Dir = p.cfg.Dir
	cmd.Env = append(append(os.Environ(), p.cfg.Env...), "BKB_PLUGIN_MODE=long-lived")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	setProcAttr(cmd)
	if err := startCmd(cmd); err != nil {
		closeAll()
		return nil, startErr(err)
	}
	// The child has its copies; ours of its ends must go so that EOFs work.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	c := &child{
		cmd:    cmd,
		stdin:  inW,
		stdout: outR,
		stderr: errR,
		sink: &stderrSink{
			out:    p.cfg.Stderr,
			outMu:  &p.stderrMu,
			prefix: fmt.Sprintf("[%s %d] ", p.short, cmd.Process.Pid),
		},
		lines:      make(chan outLine),
		fresh:      true,
		quit:       make(chan struct{}),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	c.wg.Add(3)
	go func() {
		defer c.wg.Done()
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	go func() {
		defer c.wg.Done()
		defer close(c.stderrDone)
		_, _ = io.Copy(c.sink, c.stderr)
		c.sink.Flush()
	}()
	go func() {
		defer c.wg.Done()
		defer close(c.lines)
		c.readLines()
	}()
	return c, nil
}

// outLine is one line of the plugin's stdout.
type outLine struct {
	data    []byte // the line, cut to maxLine bytes
	tooLong bool   // the line was longer than maxLine
}

// readLines forwards stdout lines until EOF or discard. Lines longer than
// maxLine are cut and marked (and will be reported as garbage).
func (c *child) readLines() {
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	for {
		var line []byte
		var err error
		long := false
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			room := maxLine - len(line)
			if len(frag) > room {
				// The line end does not count towards the limit.
				n := len(frag)
				if err == nil {
					n = len(bytes.TrimSuffix(bytes.TrimSuffix(frag, []byte("\n")), []byte("\r")))
				}
				long = long || n > room
				frag = frag[:room]
			}
			line = append(line, frag...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) > 0 {
			select {
			case c.lines <- outLine{data: line, tooLong: long}:
			case <-c.quit:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *child) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// discard kills the child (and its process group), reaps it and stops its
// goroutines. It is idempotent.
func (c *child) discard() {
	if c.discarded {
		return
	}
	c.discarded = true
	close(c.quit)
	_ = killGroup(c.cmd)
	<-c.exited
	_ = c.stdin.Close()
	_ = c.stdout.Close() // unblocks the reader even if a grandchild holds the pipe
	select {
	case <-c.stderrDone:
	case <-time.After(drainGrace):
	}
	_ = c.stderr.Close()
	c.wg.Wait()
}

// exitStatus describes how the child ended; the child must have exited.
func (c *child) exitStatus() string {
	if c.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(c.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return c.waitErr.Error()
}

// ensureChild returns the running child, starting or restarting it as
// needed. Called with sem held.
func (p *Process) ensureChild(id int) (*child, error) {
	if c := p.cur; c != nil {
		if !c.hasExited() {
			return c, nil
		}
		// Died between evaluations: reap it and restart.
		c.discard()
		p.cur = nil
		p.needRestart = true
		p.lastErr = &EvalError{Kind: KindCrash, Command: p.name, Msg: "plugin exited between evaluations (" + c.exitStatus() + ")", Stderr: c.sink.Tail()}
	}
	restart := p.needRestart
	if p.needRestart {
		if n := int(p.restarts.Load()); n >= p.maxRestart {
			msg := fmt.Sprintf("not restarting the plugin: restart limit (%d) reached", p.maxRestart)
			var last *EvalError
			if errors.As(p.lastErr, &last) {
				msg += "; last failure: " + last.detail()
			} else if p.lastErr != nil {
				msg += "; last failure: " + p.lastErr.Error()
			}
			return nil, p.fail(KindTooManyRestarts, id, msg, nil)
		}
		p.restarts.Add(1)
	}
	c, err := p.startChild()
	if err != nil {
		p.needRestart = true
		p.lastErr = err
		var ee *EvalError
		if errors.As(err, &ee) {
			ee.ID = id
		}
		return nil, err
	}
	if restart {
		// A restart follows a crash, a timeout or garbage: its first
		// evaluation gets Timeout alone, so that a plugin that hangs is
		// not given the start-up allowance again on every restart.
		c.fresh = false
	}
	p.cur, p.needRestart, p.lastErr = c, false, nil
	return c, nil
}

// drop discards the current child after a failure; restart tells whether
// restarting it counts against MaxRestarts.
func (p *Process) drop(c *child, restart bool, err error) {
	c.discard()
	if p.cur == c {
		p.cur = nil
	}
	if restart {
		p.needRestart = true
		p.lastErr = err
	}
}

// exchange sends one request to c and waits for the reply. Called with sem
// held.
func (p *Process) exchange(ctx, ectx context.Context, c *child, id int, x []float64, params []byte, report Reporter) (Reply, error) {
	req := appendRequest(nil, id, x, params)
	if dl, ok := ectx.Deadline(); ok {
		_ = c.stdin.SetWriteDeadline(dl)
	}
	stopW := context.AfterFunc(ectx, func() { _ = c.stdin.SetWriteDeadline(time.Unix(1, 0)) })
	_, werr := c.stdin.Write(req)
	stopW()
	if werr != nil {
		if ectx.Err() != nil {
			err := p.abortErr(ctx, ectx, id, true)
			p.drop(c, err.Kind == KindTimeout, err)
			return Reply{}, err
		}
		return Reply{}, p.crashed(c, id, "could not send the request ("+werr.Error()+")")
	}

	var exited <-chan struct{} = c.exited
	var grace, pruneGrace <-chan time.Time
	pruning := false
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				if pruning {
					p.drop(c, false, nil)
					return Reply{}, p.fail(KindPruned, id, "evaluation pruned (the plugin exited)", nil)
				}
				return Reply{}, p.crashed(c, id, "")
			}
			if len(bytes.TrimSpace(line.data)) == 0 {
				continue
			}
			if m, ok := parseProgress(line.data); ok && !line.tooLong {
				switch {
				case m.id != id:
					return p.handleReply(c, id, line) // garbage: another id
				case m.pruned:
					return Reply{}, p.fail(KindPruned, id, "evaluation pruned", nil)
				case m.bad != "":
					return p.garbage(c, id, line, m.bad)
				case pruning || report == nil:
					continue
				}
				stop, err := report(m.step, m.value)
				if err != nil {
					p.drop(c, false, nil)
					return Reply{}, err
				}
				if stop {
					pruning = true
					pruneGrace = time.After(p.pruneGrace())
					if _, err := c.stdin.Write(fmt.Appendf(nil, "{\"id\":%d,\"prune\":true}\n", id)); err != nil {
						p.drop(c, false, nil)
						return Reply{}, p.fail(KindPruned, id, "evaluation pruned (the plugin stopped reading)", nil)
					}
				}
				continue
			}
			if pruning {
				// Any reply ends a pruned evaluation.
				return Reply{}, p.fail(KindPruned, id, "evaluation pruned", nil)
			}
			return p.handleReply(c, id, line)
		case <-pruneGrace:
			p.drop(c, false, nil)
			return Reply{}, p.fail(KindPruned, id, fmt.Sprintf("evaluation pruned; the plugin did not stop within %v and was killed", p.pruneGrace()), nil)
		case <-exited:
			// Give stdout a moment to deliver a reply written just before exit.
			exited = nil
			grace = time.After(drainGrace)
		case <-grace:
			return Reply{}, p.crashed(c, id, "")
		case <-ectx.Done():
			err := p.abortErr(ctx, ectx, id, true)
			p.drop(c, err.Kind == KindTimeout, err)
			if err.Kind == KindTimeout {
				err.Stderr = c.sink.Tail()
			}
			return Reply{}, err
		}
	}
}

// pruneGrace is Config.PruneGrace or its default.
func (p *Process) pruneGrace() time.Duration {
	if p.cfg.PruneGrace > 0 {
		return p.cfg.PruneGrace
	}
	return DefaultPruneGrace
}

// Close shuts the plugin down: it ends a running evaluation (which fails
// with ErrClosed), closes the plugin's stdin, waits up to two seconds for it
// to exit and then kills its process group. It waits for the process to be
// reaped and for all goroutines of the Process to end. Close returns an
// error when the plugin had to be killed or exited with a non-zero status;
// calling it again returns nil. Evaluate fails with ErrClosed afterwards.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.lifeCancel()
	p.inflight.Wait()
	c := p.cur
	p.cur = nil
	if c == nil {
		return nil
	}
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(p.closeWait):
		c.discard()
		return fmt.Errorf("plugin %q: did not exit within %v after its stdin was closed; killed", p.name, p.closeWait)
	}
	c.discard()
	if c.waitErr != nil {
		err := fmt.Errorf("plugin %q: exited with %s on close", p.name, c.exitStatus())
		if tail := c.sink.Tail(); tail != "" {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		return err
	}
	return nil
}
