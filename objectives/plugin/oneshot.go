package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	oneShotTail      = 64 << 10 // bytes of stdout kept in one-shot mode
	oneShotWaitDelay = time.Second
)

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped bool // bytes before buf were dropped
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.dropped = true
	}
	return len(b), nil
}

// Bytes returns the bytes kept and whether earlier ones were dropped.
func (t *tailBuffer) Bytes() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...), t.dropped
}

// evalOneShot runs the command once for x. ectx carries the timeout, Close
// and ctx.
func (p *Process) evalOneShot(ctx, ectx context.Context, id int, x []float64, params []byte) (Reply, error) {
	xs := make([]string, len(x))
	for i, v := range x {
		xs[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	extra := xs
	if p.cfg.Args != nil {
		var err error
		if extra, err = p.cfg.Args(x); err != nil {
			return Reply{}, p.fail(KindBadInput, id, "cannot build the arguments", err)
		}
	}
	args := make([]string, 0, len(p.cfg.Command)-1+len(extra))
	args = append(args, p.cfg.Command[1:]...)
	args = append(args, extra...)

	cmd := exec.CommandContext(ectx, p.cfg.Command[0], args...)
	cmd.Dir = p.cfg.Dir
	cmd.Env = append(os.Environ(), p.cfg.Env...)
	cmd.Env = append(cmd.Env, "BKB_PLUGIN_MODE=one-shot", "BKB_X="+strings.Join(xs, ","))
	if params != nil {
		cmd.Env = append(cmd.Env, "BKB_PARAMS="+string(params))
	}
	setProcAttr(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = oneShotWaitDelay
	stdout := &tailBuffer{max: oneShotTail}
	sink := &stderrSink{out: p.cfg.Stderr, outMu: &p.stderrMu}
	cmd.Stdout, cmd.Stderr = stdout, sink

	if err := startCmd(cmd); err != nil {
		if ectx.Err() != nil {
			return Reply{}, p.abortErr(ctx, ectx, id, false)
		}
		return Reply{}, p.fail(KindStart, id, "cannot start", err)
	}
	sink.mu.Lock()
	sink.prefix = fmt.Sprintf("[%s %d] ", p.short, cmd.Process.Pid)
	sink.mu.Unlock()
	werr := cmd.Wait()
	sink.Flush()
	if errors.Is(werr, exec.ErrWaitDelay) {
		werr = nil // exited cleanly, but a child of it kept stdout or stderr open
	}
	if ectx.Err() != nil {
		return Reply{}, p.abortErr(ctx, ectx, id, true)
	}
	if werr != nil {
		var ee *exec.ExitError
		msg := "plugin failed: " + werr.Error()
		if errors.As(werr, &ee) {
			msg = "plugin crashed (" + ee.ProcessState.String() + ")"
		}
		err := p.fail(KindCrash, id, msg, nil)
		err.Stderr = sink.Tail()
		return Reply{}, err
	}

	out, dropped := stdout.Bytes()
	line := lastLine(out)
	if len(line) > oneShotTail || (dropped && len(line) > 0 && bytes.IndexByte(bytes.TrimRight(out, " \t\r\n"), '\n') < 0) {
		// Longer than what is kept, or begun before the kept tail.
		err := p.fail(KindGarbage, id, fmt.Sprintf("garbage on stdout: last line too long (over %d KiB)", oneShotTail>>10), nil)
		err.Line = truncate(string(line), garbageQuote)
		return Reply{}, err
	}
	if len(line) == 0 {
		err := p.fail(KindGarbage, id, "garbage on stdout: no output (want a number or a JSON reply as the last line)", nil)
		err.Stderr = sink.Tail()
		return Reply{}, err
	}
	var y float64
	var reply Reply
	if line[0] == '{' {
		r, perr := ParseReply(line)
		if perr != nil {
			err := p.fail(KindGarbage, id, "garbage on stdout: "+perr.Error(), nil)
			err.Line = truncate(string(line), garbageQuote)
			return Reply{}, err
		}
		if r.Error != "" {
			return Reply{}, p.fail(KindPluginError, id, "plugin reported an error: "+truncate(r.Error, 2000), nil)
		}
		y, reply = r.Y, r
	} else {
		v, perr := strconv.ParseFloat(string(line), 64)
		if perr != nil && !errors.Is(perr, strconv.ErrRange) {
			err := p.fail(KindGarbage, id, "garbage on stdout: last line is not a number", nil)
			err.Line = truncate(string(line), garbageQuote)
			return Reply{}, err
		}
		y = v
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return Reply{}, p.fail(KindNonFinite, id, fmt.Sprintf("plugin returned the non-finite value %v", y), nil)
	}
	if msg := reply.nonFinite(); msg != "" {
		return Reply{}, p.fail(KindNonFinite, id, "plugin returned "+msg, nil)
	}
	reply.Y, reply.HasY = y, true
	return reply, nil
}

// lastLine returns the last non-blank line of out, trimmed.
func lastLine(out []byte) []byte {
	for len(out) > 0 {
		i := bytes.LastIndexByte(out, '\n')
		line := bytes.TrimSpace(out[i+1:])
		if len(line) > 0 {
			return line
		}
		if i < 0 {
			break
		}
		out = out[:i]
	}
	return nil
}
