// Command bkb is the command-line face of the toolkit: it optimizes a
// built-in test function or an external plugin program with BKB, GP-UCB,
// Thompson sampling, expected improvement or random search, keeps every
// evaluation in a durable study journal that a killed run resumes from,
// lets a shell script drive the loop through ask and tell, and writes regret
// benchmark tables.
//
// Usage:
//
//	bkb optimize      [flags]          optimize an objective (default: Branin with BKB)
//	bkb create-study  --study FILE     create a study journal for ask/tell
//	bkb ask           --study FILE     print the next point to evaluate
//	bkb tell          --study FILE     record the value of an asked point
//	bkb status        --study FILE     summarize a study: best points, trace, plot
//	bkb worker        --study FILE     evaluate a shared study's trials (or --storage postgres://...)
//	bkb export        --study FILE     write a study's trials to CSV or JSON (a file or stdout)
//	bkb copy          --from A --to B  copy a study between a journal and PostgreSQL
//	bkb serve         [--dir DIR]      HTTP/JSON API and dashboard (or --storage postgres://...)
//	bkb studies       --dir DIR        list the studies of a storage
//	bkb delete-study  --study NAME     delete a study (with --dir or --storage)
//	bkb set-attr      --study NAME     set a user attribute of a study or trial
//	bkb bench         [flags]          regret benchmark: policies x objectives x seeds
//	bkb regress       [flags]          online kernel regression (see bkb regress -h)
//	bkb objectives                     list the built-in test functions
//
// Errors are one line on stderr, prefixed "bkb: "; the exit code is 2 for
// usage errors, 1 for runtime failures and 130 after an interrupt. See
// docs/cli.md for every flag.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/storage"
)

// retryNotice says on stderr, in one line with the passwords masked, that
// a storage cannot reach its server and retries (storage.RetryNotice):
// a command does not wait half a minute in silence.
func retryNotice(stderr io.Writer) storage.RetryNotice {
	return func(what string, err error, retrying time.Duration) {
		// One line: a connection error of pgx spans several.
		msg := strings.Join(strings.Fields(fmt.Sprintf("%s: %v", what, err)), " ")
		fmt.Fprintln(stderr, maskSecrets(fmt.Sprintf("bkb: cannot reach PostgreSQL (%s); retrying for up to %v", msg, retrying)))
	}
}

// Exit codes.
const (
	exitOK        = 0
	exitFailure   = 1
	exitUsage     = 2
	exitInterrupt = 130
)

// usageError is a mistake in the command line or in an input file: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// errInterrupted marks a run stopped by SIGINT/SIGTERM.
var errInterrupted = errors.New("interrupted")

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"optimize", "optimize a built-in function or a plugin program (default: Branin with BKB)", wrap(runOptimize)},
		{"create-study", "create a study journal to drive with ask and tell", wrap(runCreateStudy)},
		{"ask", "print the next point of a study to evaluate", wrap(runAsk)},
		{"tell", "record the value (or failure) of an asked point", wrap(runTell)},
		{"report", "record an intermediate value of an asked point; exit status 3: stop it (pruned)", wrap(runReport)},
		{"status", "summarize a study: best points, trace CSV, plot", wrap(runStatus)},
		{"worker", "evaluate trials of a shared study until its budget (many processes, many machines)", wrap(runWorker)},
		{"export", "write a study's trials as CSV or JSON, to a file or stdout", wrap(runExport)},
		{"copy", "copy a study between a journal file and PostgreSQL", wrap(runCopy)},
		{"serve", "HTTP/JSON API and browser dashboard over the studies of a storage", wrap(runServe)},
		{"studies", "list the studies of a PostgreSQL database or a directory of journals", wrap(runStudies)},
		{"delete-study", "delete a study with its trials and attributes", wrap(runDeleteStudy)},
		{"set-attr", "set a user attribute of a study or of one of its trials", wrap(runSetAttr)},
		{"bench", "regret benchmark tables: policies x objectives x seeds", wrap(runBench)},
		{"regress", "online kernel regression on a dataset", runRegress},
		{"objectives", "list the built-in test functions", wrap(runObjectives)},
	}
}

func main() {
	oneShotGC(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// oneShotGC sets the garbage collector's target for the commands that
// load a study, act once and exit (ask, tell, status): their heap grows
// from nothing to its peak (about 140 MB for an ask on a 10,000-trial
// study), and at the default target every doubling on the way runs a
// collection that finds little garbage. At twice the default target
// (GOGC=200) such an ask takes about a tenth less CPU for a few percent
// more peak memory (docs/long-studies.md). A GOGC in the environment is
// kept.
func oneShotGC(args []string) {
	if len(args) == 0 || os.Getenv("GOGC") != "" {
		return
	}
	switch args[0] {
	case "ask", "tell", "status":
		debug.SetGCPercent(200)
	}
}

// run dispatches to a subcommand and never panics: a panic is reported as
// one line (plus the stack when BKB_DEBUG is set) and exit code 1.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer recoverPanic(&code, stderr)
	registerArgSecrets(args)
	ctx = storage.WithRetryNotice(ctx, retryNotice(stderr))
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 && name == "help" {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "bkb", version())
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "bkb: unknown command %q; run 'bkb help' for the list of commands\n", name)
	return exitUsage
}

// recoverPanic turns a panic into one error line and exit code 1: the last
// resort, so that a user never sees a Go stack trace (unless BKB_DEBUG is
// set).
func recoverPanic(code *int, stderr io.Writer) {
	if r := recover(); r != nil {
		fmt.Fprintf(stderr, "bkb: internal error: %v (please report it; set BKB_DEBUG=1 for a stack trace)\n", r)
		if os.Getenv("BKB_DEBUG") != "" {
			stderr.Write(debug.Stack())
		}
		*code = exitFailure
	}
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "bkb: scalable Bayesian optimization and kernel bandits (BKB, GP-UCB)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: bkb <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'bkb <command> --help' for its flags; docs/cli.md has the details.")
	fmt.Fprintln(w, "Try: bkb optimize    (Branin, BKB from 512 Sobol points, 60 evaluations)")
}

// wrap turns a command returning an error into one returning an exit code,
// printing the error as one "bkb: " line.
func wrap(f func(ctx context.Context, args []string, stdout, stderr io.Writer) error) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		err := f(ctx, args, stdout, stderr)
		return report(err, stderr)
	}
}

// report prints err (if any) and returns its exit code.
func report(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.Is(err, errShouldPrune):
		return exitPrune
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(stderr, "bkb: %s\n", safeText(maskSecrets(oneLine(err.Error()))))
		return exitInterrupt
	}
	// Errors may quote a connection string, or a name or label read from
	// a crafted file: passwords masked, control characters escaped.
	fmt.Fprintf(stderr, "bkb: %s\n", safeText(maskSecrets(oneLine(err.Error()))))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage to stdout on -h.
func newFlagSet(name, synopsis string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: bkb %s\n\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args; -h prints the usage and returns pflag.ErrHelp,
// anything else wrong is a usage error.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err // pflag has printed the usage
		}
		return usageError{fmt.Errorf("%s: %w (see bkb %s --help)", fs.Name(), err, fs.Name())}
	}
	return nil
}

// commandAfterDash returns the plugin command given after "--" (nil when
// there is none); any other argument is a usage error.
func commandAfterDash(fs *pflag.FlagSet) ([]string, error) {
	dash := fs.ArgsLenAtDash()
	switch {
	case dash > 0:
		return nil, usagef("unexpected argument %q (a plugin command goes after --)", fs.Args()[0])
	case dash < 0 && fs.NArg() > 0:
		return nil, usagef("unexpected argument %q (a plugin command goes after --, or in --plugin)", fs.Arg(0))
	case dash == 0 && fs.NArg() == 0:
		return nil, usagef("no plugin command after --")
	}
	return fs.Args(), nil
}
