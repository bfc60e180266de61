package plugin

import (
	"errors"
	"strconv"
	"strings"
)

// Kind classifies the failure of an evaluation.
type Kind int

// The kinds of failure reported in [EvalError.Kind].
const (
	KindStart           Kind = iota + 1 // the program could not be started
	KindCrash                           // the plugin exited (or closed stdout) before replying
	KindTimeout                         // no reply within Config.Timeout; the plugin was killed
	KindGarbage                         // invalid output: not JSON, wrong id, missing y, ...
	KindPluginError                     // the plugin replied {"error": ...}
	KindNonFinite                       // the plugin replied NaN or ±Inf
	KindTooManyRestarts                 // the restart budget (Config.MaxRestarts) is used up
	KindCanceled                        // the caller's context ended the evaluation
	KindClosed                          // the Process was closed
	KindBadInput                        // x was rejected before reaching the plugin
	KindPruned                          // the caller's Reporter stopped the evaluation (see EvaluateReporting)
)

// Sentinel errors, one per [Kind]; an [*EvalError] matches the sentinel of
// its kind with errors.Is.
var (
	ErrStart           = errors.New("plugin cannot be started")
	ErrCrashed         = errors.New("plugin crashed")
	ErrTimeout         = errors.New("plugin timed out")
	ErrGarbage         = errors.New("garbage on plugin stdout")
	ErrPluginError     = errors.New("plugin reported an error")
	ErrNonFinite       = errors.New("plugin returned a non-finite value")
	ErrTooManyRestarts = errors.New("plugin restarted too many times")
	ErrCanceled        = errors.New("evaluation canceled")
	ErrClosed          = errors.New("plugin process closed")
	ErrBadInput        = errors.New("invalid evaluation input")
	ErrPruned          = errors.New("evaluation pruned")
)

var kindInfo = map[Kind]struct {
	name string
	err  error
}{
	KindStart:           {"start", ErrStart},
	KindCrash:           {"crash", ErrCrashed},
	KindTimeout:         {"timeout", ErrTimeout},
	KindGarbage:         {"garbage", ErrGarbage},
	KindPluginError:     {"plugin error", ErrPluginError},
	KindNonFinite:       {"non-finite", ErrNonFinite},
	KindTooManyRestarts: {"too many restarts", ErrTooManyRestarts},
	KindCanceled:        {"canceled", ErrCanceled},
	KindClosed:          {"closed", ErrClosed},
	KindBadInput:        {"bad input", ErrBadInput},
	KindPruned:          {"pruned", ErrPruned},
}

// String returns a short lower-case name of the kind, e.g. "timeout".
func (k Kind) String() string {
	if info, ok := kindInfo[k]; ok {
		return info.name
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Sentinel returns the sentinel error of the kind (ErrTimeout for
// KindTimeout, ...), or nil for an unknown kind.
func (k Kind) Sentinel() error {
	return kindInfo[k].err
}

// EvalError is the error returned by [Start] and [Process.Evaluate]. It
// matches the sentinel of its Kind and, through Err, its cause (for example
// context.Canceled) with errors.Is.
type EvalError struct {
	Kind    Kind   // what went wrong
	Command string // the plugin command line, for messages
	ID      int    // evaluation id (0 when not tied to an evaluation)
	Msg     string // human-readable description of the problem
	Line    string // garbage only: the offending stdout line, truncated
	Stderr  string // last lines of the plugin's stderr, " | "-separated, if any
	Err     error  // underlying cause, may be nil
}

// Error formats the error as
// `plugin "cmd": evaluation 3: <msg>: <cause>; line: "..."; stderr: ...`.
func (e *EvalError) Error() string {
	return "plugin " + strconv.Quote(e.Command) + ": " + e.detail()
}

// detail is the message without the command.
func (e *EvalError) detail() string {
	var b strings.Builder
	if e.ID > 0 {
		b.WriteString("evaluation ")
		b.WriteString(strconv.Itoa(e.ID))
		b.WriteString(": ")
	}
	msg := e.Msg
	if msg == "" {
		msg = e.Kind.String()
	}
	b.WriteString(msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Line != "" {
		b.WriteString("; offending line: ")
		b.WriteString(strconv.Quote(e.Line))
	}
	if e.Stderr != "" {
		b.WriteString("; stderr: ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap returns the sentinel of the kind and the cause.
func (e *EvalError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s := e.Kind.Sentinel(); s != nil {
		errs = append(errs, s)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// KindOf returns the Kind of the first [*EvalError] in err's chain, or 0
// when there is none.
func KindOf(err error) Kind {
	var e *EvalError
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// truncate shortens s to at most n bytes (not splitting UTF-8 sequences
// carelessly matters little here: the result is quoted with strconv.Quote).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "...(" + strconv.Itoa(len(s)-n) + " more bytes)"
}
