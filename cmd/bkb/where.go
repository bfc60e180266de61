package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// where says where a study lives: a journal file (--study FILE), or a
// study NAME in PostgreSQL (--storage postgres://... --study NAME).
type where struct {
	study   string
	storage string
	grace   time.Duration
}

// register adds --study and --storage to fs.
func (w *where) register(fs *pflag.FlagSet, studyHelp string) {
	fs.StringVar(&w.study, "study", "", studyHelp+"; with --storage, the study's name")
	fs.StringVar(&w.storage, "storage", "", "PostgreSQL URL (postgres://user:pass@host/db) holding the study, for workers on many machines (what a command reads is cached on this machine under $"+cacheDirEnv+", default the user cache directory's bkb/; "+cacheDirEnv+"=off for none); default: the journal file --study")
}

// cacheDirEnv names the environment variable that sets where commands keep
// what they read from PostgreSQL (storage.OpenOptions.CacheDir).
const cacheDirEnv = "BKB_CACHE_DIR"

// localCacheDir returns the directory in which commands keep the records
// and snapshot chunks they read from PostgreSQL, so that the next command
// reads only what changed: $BKB_CACHE_DIR, else bkb/ in the user's cache
// directory (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux); ""
// (no cache) for BKB_CACHE_DIR=off or when there is no such directory.
func localCacheDir() string {
	if d, ok := os.LookupEnv(cacheDirEnv); ok {
		if d == "off" || d == "" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "bkb")
}

// postgres reports whether the study is in PostgreSQL.
func (w where) postgres() bool { return w.storage != "" }

// journal is the journal file, "" for PostgreSQL.
func (w where) journal() string {
	if w.postgres() {
		return ""
	}
	return w.study
}

// String names the study for messages.
func (w where) String() string {
	if w.postgres() {
		return w.study + " in " + redactURL(w.storage)
	}
	return w.study
}

// check validates the flags.
func (w where) check(cmd string) error {
	if w.study == "" {
		if w.postgres() {
			return usagef("%s needs --study NAME with --storage", cmd)
		}
		return usagef("%s needs --study FILE", cmd)
	}
	if w.postgres() && !isConnString(w.storage) {
		return usagef("--storage %s: want a postgres:// URL or a keyword/value string such as 'host=... dbname=...' (a journal is given with --study FILE alone)", redactURL(w.storage))
	}
	return nil
}

// open opens the storage and returns the study's name in it ("" for a
// journal file: the file's study, whatever its name).
func (w where) open(ctx context.Context) (storage.Storage, string, error) {
	if w.postgres() {
		st, err := storage.OpenLocation(ctx, w.storage, storage.OpenOptions{HeartbeatGrace: w.grace, CacheDir: localCacheDir()})
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", errInterrupted
			}
			return nil, "", trimPkg(err)
		}
		return st, w.study, nil
	}
	st, err := storage.OpenLocation(ctx, w.study, storage.OpenOptions{})
	if err != nil {
		return nil, "", usageError{trimPkg(err)}
	}
	return st, "", nil
}

// loadStudy opens an existing study and decodes its objective.
func loadStudy(ctx context.Context, w where, opts study.Options) (*study.Study, *spec, func() error, error) {
	st, name, err := w.open(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := study.Load(ctx, st, name, opts)
	if err != nil {
		st.Close()
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil, nil, nil, usagef("study %s does not exist (create it with 'bkb create-study' or 'bkb optimize --study')", w)
		case ctx.Err() != nil:
			return nil, nil, nil, errInterrupted
		}
		return nil, nil, nil, usagef("study %s: %v", w, trimPkg(err))
	}
	sp, err := specOf(s.Config())
	if err != nil {
		st.Close()
		return nil, nil, nil, usagef("study %s: %v", w, err)
	}
	return s, sp, st.Close, nil
}

// createStudy creates the study of sp (in memory when w names no study).
func createStudy(ctx context.Context, w where, sp *spec) (*study.Study, func() error, error) {
	var st storage.Storage = storage.NewMemory()
	name := "bkb"
	if w.study != "" {
		var err error
		if st, _, err = w.open(ctx); err != nil {
			return nil, nil, err
		}
		name = w.study
		if !w.postgres() {
			name = studyName(w.study)
		}
	}
	s, err := study.Create(ctx, st, name, sp.cfg)
	if err != nil {
		st.Close()
		if errors.Is(err, storage.ErrExists) {
			return nil, nil, usagef("study %s already exists: continue it with --resume, or choose another name", w)
		}
		return nil, nil, usageError{trimPkg(err)}
	}
	return s, st.Close, nil
}

// withNotes sets the study's notes (a snapshot not used or not saved) and
// its replay progress to print on stderr as "bkb: ..." lines.
func withNotes(opts study.Options, stderr io.Writer) study.Options {
	opts.Notify = func(msg string) { fmt.Fprintf(stderr, "bkb: %s\n", msg) }
	opts.Progress = func(done, total int) {
		fmt.Fprintf(stderr, "bkb: replaying the study's records: %d of %d\n", done, total)
	}
	return opts
}
