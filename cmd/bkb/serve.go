package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// catalogFlags say which storage of many studies a command uses: a
// PostgreSQL database (--storage) or a directory of journals (--dir).
type catalogFlags struct {
	storage string
	dir     string
	// grace, when positive, is the PostgreSQL storage's heartbeat grace
	// (serve's --heartbeat-grace; default the storage's minute).
	grace time.Duration
}

func (c *catalogFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.storage, "storage", "", "PostgreSQL database holding the studies: a URL (postgres://user:pass@host/db) or a keyword/value string ('host=... dbname=...')")
	fs.StringVar(&c.dir, "dir", "", "directory of study journals (one NAME.jsonl per study; created if missing)")
}

// open opens the catalog; it also returns its description (no password)
// and the secrets to mask in output.
func (c catalogFlags) open(ctx context.Context, cmd string) (storage.Storage, string, []string, error) {
	switch {
	case c.storage != "" && c.dir != "":
		return nil, "", nil, usagef("%s: give --storage or --dir, not both", cmd)
	case c.storage != "":
		if !isConnString(c.storage) {
			return nil, "", nil, usagef("--storage %s: want a postgres:// URL or a keyword/value string ('host=... dbname=...')", redactURL(c.storage))
		}
		describe := redactURL(c.storage) // also remembers the password for maskSecrets
		secrets := urlSecrets(c.storage)
		st, err := storage.OpenLocation(ctx, c.storage, storage.OpenOptions{HeartbeatGrace: c.grace, CacheDir: localCacheDir()})
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", nil, errInterrupted
			}
			return nil, "", nil, errors.New(mask(trimPkg(err).Error(), secrets))
		}
		return st, describe, secrets, nil
	case c.dir != "":
		d, err := storage.OpenDir(c.dir)
		if err != nil {
			return nil, "", nil, usageError{trimPkg(err)}
		}
		return d, "directory " + c.dir, nil, nil
	}
	return nil, "", nil, usagef("%s needs --storage postgres://... or --dir DIR", cmd)
}

// urlSecrets returns the forms in which the password of a connection
// string could appear in a message: in a URL (":PASS@", escaped too) or a
// keyword/value string ("password=PASS"), and the password itself when it
// is long enough to mask everywhere (see minSecret; a shorter one, such
// as "bkb", would garble words like a policy name).
func urlSecrets(conn string) []string {
	var pws []string
	if cfg, err := pgconn.ParseConfig(conn); err == nil && cfg.Password != "" {
		pws = append(pws, cfg.Password)
	}
	if p, err := url.Parse(conn); err == nil && p.User != nil {
		if pw, ok := p.User.Password(); ok && pw != "" {
			pws = append(pws, pw)
		}
	}
	var out []string
	add := func(s string) {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	for _, pw := range pws {
		for _, f := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
			add(":" + f + "@")
			add("password=" + f)
			add("password='" + f + "'")
			if len(pw) >= minSecret {
				add(f)
			}
		}
	}
	return out
}

// mask replaces the secrets in s, longest first, then whatever
// maskSecrets knows.
func mask(s string, secrets []string) string {
	list := append([]string(nil), secrets...)
	slices.SortFunc(list, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range list {
		s = strings.ReplaceAll(s, sec, "***")
	}
	return maskSecrets(s)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [--storage URL | --dir DIR | --study FILE] [--addr 127.0.0.1:8080] [--token-file FILE]", stdout)
	var c catalogFlags
	c.register(fs)
	journal := fs.String("study", "", "a single study journal file to serve (instead of --storage or --dir)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; any address but loopback needs --token-file")
	tokenFile := fs.String("token-file", "", "file holding the bearer token clients must send (Authorization: Bearer TOKEN)")
	grace := fs.Duration("heartbeat-grace", serve.DefaultGrace, "a trial handed out whose client sends no heartbeat for this long is handed out again (after a restart, every trial has this long from the server's start)")
	maxBody := fs.Int64("max-body", serve.DefaultMaxBody, "largest request body in bytes")
	origins := fs.StringSlice("allow-origin", nil, "a web origin (https://host:port) whose pages may call the API (CORS); repeat for several. By default requests that change state from a page of another origin are refused")
	serverFiles := fs.Bool("allow-server-files", false, "let clients create studies that name files or commands of this machine (csv arms, a plugin objective); by default refused: only for clients you trust with them")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	token := ""
	if *tokenFile != "" {
		var err error
		if token, err = readTokenFile(*tokenFile); err != nil {
			return err
		}
	}
	if err := serve.CheckAddr(*addr, token); err != nil {
		return usageError{trimPkg(err)}
	}
	if *grace <= 0 || *maxBody <= 0 {
		return usagef("--heartbeat-grace and --max-body must be positive")
	}
	c.grace = *grace
	var (
		st       storage.Storage
		describe string
		secrets  []string
		err      error
	)
	if *journal != "" {
		if c.storage != "" || c.dir != "" {
			return usagef("serve: give one of --study, --storage and --dir")
		}
		js, err := storage.OpenJournalStore(*journal, storage.JournalStoreOptions{})
		if err != nil {
			return usageError{trimPkg(err)}
		}
		// The one study must be there now, not a "no such study" to every
		// client.
		if _, err := js.Study(ctx, ""); err != nil {
			js.Close()
			if errors.Is(err, storage.ErrNotFound) {
				return usagef("serve --study %s: no such journal (create the study first: bkb create-study --study %s ...)", *journal, *journal)
			}
			return usagef("serve --study %s: %v", *journal, trimPkg(err))
		}
		st, describe = js, "journal "+*journal
	} else if st, describe, secrets, err = c.open(ctx, "serve"); err != nil {
		return err
	}
	defer st.Close()
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "bkb serve: %s %s\n", time.Now().UTC().Format(time.RFC3339), mask(fmt.Sprintf(format, args...), secrets))
	}
	srv, err := serve.New(serve.Options{Storage: st, Describe: describe, Token: token, MaxBody: *maxBody, Grace: *grace,
		Secrets: secrets, Mask: maskSecrets, Logf: logf, AllowOrigins: *origins, AllowServerFiles: *serverFiles})
	if err != nil {
		return usagef("--allow-origin: %v", strings.TrimPrefix(trimPkg(err).Error(), "serve: "))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	auth := "no token (loopback only)"
	if token != "" {
		auth = "token required"
	}
	logf("serving %s at http://%s/ (%s); API description at /openapi.json", describe, ln.Addr(), auth)
	if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve: %v", mask(err.Error(), secrets))
	}
	logf("stopped")
	return nil
}

// maxTokenFile bounds a --token-file: a token is a line, not a file.
const maxTokenFile = 4 << 10

// readTokenFile reads the bearer token of --token-file: a regular file
// (a FIFO or a device such as /dev/zero is refused before it is read, so
// nothing blocks or runs on at start-up) of at most maxTokenFile bytes.
func readTokenFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", usagef("--token-file: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return "", usagef("--token-file %s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", usagef("--token-file: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", usagef("--token-file %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", usagef("--token-file: %v", err)
	}
	if len(b) > maxTokenFile {
		return "", usagef("--token-file %s is larger than %d bytes: not a token", path, maxTokenFile)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usagef("--token-file %s is empty", path)
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", usagef("--token-file %s holds more than one line: want the token alone", path)
	}
	return token, nil
}

func runStudies(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("studies", "studies (--storage URL | --dir DIR) [--json]", stdout)
	var c catalogFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print JSON (one array) instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, _, secrets, err := c.open(ctx, "studies")
	if err != nil {
		return err
	}
	defer st.Close()
	hs, err := st.(storage.Catalog).ListStudies(ctx)
	if err != nil {
		return errors.New(mask(trimPkg(err).Error(), secrets))
	}
	type row struct {
		Name      string    `json:"name"`
		Created   time.Time `json:"created"`
		Trials    int       `json:"trials"`
		Complete  int       `json:"complete"`
		Budget    int       `json:"budget"`
		Direction string    `json:"direction,omitempty"`
		Best      *float64  `json:"best,omitempty"`
		// Several objectives: their directions and the number of trials
		// on the Pareto front (no best value).
		Directions []study.Direction `json:"directions,omitempty"`
		Front      *int              `json:"pareto_front_size,omitempty"`
	}
	var rows []row
	for _, h := range hs {
		r := row{Name: h.Name, Created: h.Created}
		var cfg struct {
			Budget     int               `json:"budget"`
			Direction  string            `json:"direction"`
			Directions []study.Direction `json:"directions"`
		}
		_ = json.Unmarshal(h.Config, &cfg)
		r.Budget, r.Direction = cfg.Budget, cfg.Direction
		several := len(cfg.Directions) >= 2
		if several {
			r.Directions = cfg.Directions
		}
		if b, err := study.StoredBudget(ctx, st, h.Name); err == nil && b > 0 {
			r.Budget = b // extended over HTTP: the budget in force
		}
		recs, err := st.Records(ctx, h.Name, 0)
		if err != nil {
			return errors.New(mask(trimPkg(err).Error(), secrets))
		}
		if sum, err := storage.Summarize(recs); err == nil {
			r.Trials, r.Complete = sum.NextTrial, sum.Tells
			var done []study.TrialResult
			for _, rec := range sum.Completed {
				if several {
					if rec.Y != nil && len(rec.Values) == len(cfg.Directions) {
						done = append(done, study.TrialResult{Number: rec.Trial, State: study.Complete, Value: *rec.Y,
							Values: rec.Values, Infeasible: !feasible(rec.Constraints)})
					}
					continue
				}
				if rec.Y != nil && feasible(rec.Constraints) && (r.Best == nil || (cfg.Direction == "maximize") == (*rec.Y > *r.Best)) {
					v := *rec.Y
					r.Best = &v
				}
			}
			if several {
				front, err := study.ParetoFront(study.Config{Direction: cfg.Directions[0], Directions: cfg.Directions}, done)
				if err == nil || errors.Is(err, study.ErrNoFeasible) {
					n := len(front)
					r.Front = &n
				}
			}
		}
		rows = append(rows, r)
	}
	if *asJSON {
		if rows == nil {
			rows = []row{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "no studies")
		return nil
	}
	fmt.Fprintf(stdout, "%-24s %-20s %7s %8s %6s %-8s %s\n", "NAME", "CREATED", "TRIALS", "COMPLETE", "BUDGET", "DIR", "BEST")
	for _, r := range rows {
		best := "-"
		if r.Best != nil {
			best = fmt.Sprintf("%.6g", *r.Best)
		}
		dir := strings.TrimSuffix(r.Direction, "imize")
		if len(r.Directions) >= 2 {
			ds := make([]string, len(r.Directions))
			for i, d := range r.Directions {
				ds[i] = strings.TrimSuffix(string(d), "imize")
			}
			dir = strings.Join(ds, ",")
			if r.Front != nil {
				best = fmt.Sprintf("front of %d", *r.Front)
			}
		}
		budget := "-"
		if r.Budget > 0 {
			budget = fmt.Sprint(r.Budget)
		}
		fmt.Fprintf(stdout, "%-24s %-20s %7d %8d %6s %-8s %s\n", r.Name, r.Created.Format("2006-01-02 15:04:05"), r.Trials, r.Complete, budget, dir, best)
	}
	return nil
}

func runDeleteStudy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("delete-study", "delete-study --study NAME (--storage URL | --dir DIR)", stdout)
	var c catalogFlags
	c.register(fs)
	name := fs.String("study", "", "the study to delete, with its trials and attributes (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return usagef("delete-study needs --study NAME (a journal file is deleted with rm)")
	}
	st, describe, secrets, err := c.open(ctx, "delete-study")
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.(storage.Catalog).DeleteStudy(ctx, *name); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return usagef("study %s does not exist in %s", *name, describe)
		}
		return errors.New(mask(trimPkg(err).Error(), secrets))
	}
	fmt.Fprintf(stdout, "deleted study %s from %s\n", *name, describe)
	return nil
}

func runSetAttr(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("set-attr", "set-attr --study NAME|FILE [--storage URL | --dir DIR] --key KEY --value JSON [--trial N]", stdout)
	var c catalogFlags
	c.register(fs)
	name := fs.String("study", "", "the study: a journal file, or a name with --storage or --dir (required)")
	key := fs.String("key", "", "the attribute's key (required)")
	value := fs.String("value", "", `the attribute's value: JSON ("v2", 3, {"a": 1}); a word that is not JSON is taken as a string; null deletes`)
	trial := fs.Int("trial", -1, "the trial the attribute belongs to (default: the study)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" || *key == "" || !fs.Changed("value") {
		return usagef("set-attr needs --study, --key and --value")
	}
	if strings.HasPrefix(*key, "bkb.") {
		return usagef("--key %s: keys starting with \"bkb.\" are the toolkit's", *key)
	}
	v := json.RawMessage(*value)
	if !json.Valid(v) {
		v, _ = json.Marshal(*value)
	}
	var (
		st       storage.Storage
		describe string
		secrets  []string
		err      error
		sname    = *name
	)
	if c.storage == "" && c.dir == "" {
		st, err = storage.OpenJournalStore(*name, storage.JournalStoreOptions{})
		if err != nil {
			return usageError{trimPkg(err)}
		}
		describe, sname = *name, ""
	} else if st, describe, secrets, err = c.open(ctx, "set-attr"); err != nil {
		return err
	}
	defer st.Close()
	at, ok := storage.As[storage.Attributes](st)
	if !ok {
		return usagef("%s keeps no attributes", describe)
	}
	if *trial >= 0 {
		recs, err := st.Records(ctx, sname, 0)
		if err != nil {
			return errors.New(mask(trimPkg(err).Error(), secrets))
		}
		if sum, err := storage.Summarize(recs); err == nil && *trial >= sum.NextTrial {
			return usagef("study %s has no trial %d (%d trials)", *name, *trial, sum.NextTrial)
		}
	}
	if err := at.SetAttr(ctx, sname, storage.Attr{Trial: *trial, Key: *key, Value: v}); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return usagef("study %s does not exist in %s", *name, describe)
		}
		return usageError{errors.New(mask(trimPkg(err).Error(), secrets))}
	}
	what := "study " + *name
	if *trial >= 0 {
		what = fmt.Sprintf("trial %d of study %s", *trial, *name)
	}
	fmt.Fprintf(stdout, "set %s = %s on %s\n", *key, v, what)
	return nil
}
