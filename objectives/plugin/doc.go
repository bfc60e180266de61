// Package plugin evaluates an objective function in an external program,
// written in any language, that speaks a tiny line-oriented JSON protocol.
//
// # Long-lived mode (the default)
//
// The plugin is started once and kept running. For every evaluation it reads
// one JSON request per line on its standard input:
//
//	{"id":7,"x":[0.003,4,1],"params":{"lr":0.003,"layers":4,"activation":"tanh"}}
//
// and writes exactly one JSON reply per line on its standard output:
//
//	{"id":7,"y":0.8123}
//	{"id":7,"error":"solver diverged"}
//
// "x" is the point as the caller stores it: one number per parameter (for a
// categorical parameter, the index of its choice). "params" holds the same
// point by parameter name, each value in its own type: a float as a JSON
// number, an integer as a JSON integer, a categorical as its label (a
// string, or the number it is). Plugins should read "params". It comes from
// [Config.Params]; with only [Config.ParamNames] set it maps each name to
// the coordinate of x at the same position, as a number; without either it
// is absent. Ids are positive, increase by one per evaluation and are never
// reused, also not across restarts.
//
// For a study with several objectives "y" is an array of values, one per
// objective, in the study's order ({"id":7,"y":[0.81,12.5]}); a constrained
// study's plugin adds its constraint values, each feasible when <= 0
// ({"id":7,"y":0.81,"constraints":[0.3,-1]}). [Process.EvaluateReply]
// returns them.
//
// "y" is a JSON number. Because JSON cannot carry NaN or infinities, a plugin
// may send them as strings ("NaN", "Inf", "-Inf"); such values are reported
// as [ErrNonFinite]. Any other string, even a numeric one like "1.5", is
// garbage. A reply is always the VALUE of the objective: whether it is
// maximized or minimized is decided by the caller, not by the plugin.
//
// Anything else on standard output while a reply is awaited (log lines,
// invalid JSON, a reply for another id, a reply without "y", a line longer
// than 1 MiB) is garbage: the evaluation fails with [ErrGarbage] and the
// plugin is restarted, since the stream can no longer be trusted. Blank lines are ignored. Standard
// error is free-form: each line is copied, prefixed, to [Config.Stderr] and
// the last lines are quoted in crash reports. When its standard input is
// closed the plugin should exit; see [Process.Close].
//
// Every evaluation must be answered within [Config.Timeout]. The protocol has
// no "ready" message, so a plugin's start-up (interpreter, imports, loading
// data) happens while its first request waits: the first evaluation after
// [Start] is allowed [Config.StartTimeout] (default 30 s) on top of the
// timeout. The first evaluation after a restart that followed a crash, a
// timeout or garbage has the timeout alone (the allowance would let a plugin
// that hangs run longer after every restart).
//
// The environment of the plugin contains BKB_PLUGIN_MODE=long-lived, so that
// one script can support both modes.
//
// # Intermediate values and pruning
//
// In long-lived mode a plugin that trains something step by step may
// report its learning curve before its reply, one line per step:
//
//	{"id":7,"step":3,"value":0.42}
//
// A caller of [Process.EvaluateReporting] receives each value and may tell
// the plugin to stop, with the line {"id":7,"prune":true} on its standard
// input; the plugin should then answer {"id":7,"pruned":true} (or any reply
// for the id) and wait for the next request. A plugin that has not
// answered within [Config.PruneGrace] is killed and restarted for the next
// evaluation (a restart that does not count against MaxRestarts). Plugins
// that never report are unaffected. The examples sgd_curve.py and
// go/sgdcurve train a model epoch by epoch and honor the stop.
//
// # One-shot mode
//
// With [Config.OneShot] the command is run once per evaluation, with extra
// arguments (from [Config.Args]; by default the coordinates of x, formatted
// with strconv.FormatFloat(v, 'g', -1, 64)) and in the environment:
//
//	BKB_PLUGIN_MODE=one-shot
//	BKB_X=0.003,4,1
//	BKB_PARAMS={"lr":0.003,"layers":4,"activation":"tanh"}   (as "params" above)
//
// The last non-empty line of its standard output is the result: either a
// bare number ("0.8123", "NaN") or a reply object as above (its id is not
// checked); a last line longer than 64 KiB is garbage. A non-zero exit
// status fails the evaluation with [ErrCrashed]. One-shot evaluations may
// run concurrently. Nothing is restarted in one-shot mode
// ([Process.Restartable] is false).
//
// The examples directory has plugins in Python and Go: Branin (numbers
// only) and a toy model with a log-scale float, an integer and a
// categorical parameter, read strictly from "params" or BKB_PARAMS.
//
// # Failures
//
// Every failure of [Process.Evaluate] is an [*EvalError] whose Kind tells
// what happened and which matches one of the sentinel errors with
// errors.Is: [ErrCrashed], [ErrTimeout], [ErrGarbage], [ErrPluginError],
// [ErrNonFinite], [ErrTooManyRestarts], [ErrStart], [ErrCanceled],
// [ErrClosed], [ErrBadInput]. After a crash, a timeout or garbage the plugin is
// restarted lazily by the next evaluation, at most [Config.MaxRestarts]
// times over the life of the [Process]; the failed evaluation itself is not
// retried. A reported error or a non-finite value leaves the plugin running.
//
// On Unix the plugin runs in its own process group, so a terminal's Ctrl-C
// reaches only the caller, which shuts plugins down with [Process.Close], and
// killing a plugin also kills the processes it started. On Linux a plugin
// also dies (SIGKILL) when its caller dies without closing it, even in the
// middle of an evaluation; processes the plugin started itself are not
// covered by that and should watch their own parent. (The kernel sends that
// signal when the OS thread that started the plugin exits, so the package
// starts every plugin from one goroutine locked to a thread that lives as
// long as the process; see proc_linux.go.)
package plugin
