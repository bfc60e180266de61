package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// overwriteOK holds the output paths checked with --overwrite: the only
// ones writeFileAtomic replaces when they exist.
var overwriteOK sync.Map // filepath.Clean(path) -> true

// checkOutput checks, before a run starts, that path (given with flag) can
// be written: its directory exists, it is not the study's journal (nor
// any journal), not a symbolic link nor a device, FIFO or socket, and it
// does not exist unless overwrite is set. No output file ever replaces a
// study, follows a link or, without --overwrite, replaces any existing
// file (writeFileAtomic checks again when it writes).
func checkOutput(flag, path string, overwrite bool, studyPath string) error {
	if path == "" {
		return nil
	}
	if overwrite {
		overwriteOK.Store(filepath.Clean(path), true)
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("%s %s: directory %s does not exist", flag, path, dir)
		}
	}
	if studyPath != "" && sameFile(path, studyPath) {
		return usagef("%s %s is the study journal: an output never replaces a study", flag, path)
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usagef("%s %s: %v", flag, path, err)
	case st.IsDir():
		return usagef("%s %s is a directory", flag, path)
	case st.Mode()&fs.ModeSymlink != 0:
		return usagef("%s %s is a symbolic link: an output never follows a link (name the file itself)", flag, path)
	case !st.Mode().IsRegular():
		return usagef("%s %s is not a regular file (a device, FIFO or socket): write to a file", flag, path)
	case isJournal(path):
		return usagef("%s %s is a study journal: an output never replaces a study", flag, path)
	case !overwrite:
		return usagef("%s %s exists: choose another file, or give --overwrite to replace it", flag, path)
	}
	return nil
}

// sameFile reports whether a and b name the same file (or the same path
// when neither exists yet).
func sameFile(a, b string) bool {
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// maxHeaderLine bounds what isJournal reads of a file's first line.
const maxHeaderLine = 1 << 20

// isJournal reports whether the regular file at path starts like a study
// journal (a JSON header with a version and a config). It reads at most
// maxHeaderLine bytes, and opens nothing but a regular file (a FIFO would
// block, a device never end).
func isJournal(path string) bool {
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	line, err := bufio.NewReader(io.LimitReader(f, maxHeaderLine)).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	line = bytes.TrimSpace(line)
	return bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"version"`)) && bytes.Contains(line, []byte(`"config"`))
}

// createTemp creates a new file beside path for writing, with mode 0666
// less the umask (os.CreateTemp's 0600 ignores the umask's intent).
func createTemp(path string) (*os.File, error) {
	for range 100 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(b[:])+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: cannot create a temporary file beside it", path)
}

// writeFileAtomic writes data to a temporary file beside path and moves it
// into place, so that a failed write never leaves a half-written file. The
// file's mode is 0666 less the umask. It never follows a symbolic link at
// path, never replaces a study journal, and replaces an existing file only
// if checkOutput was given --overwrite for path: a file created at path
// while the run went on is not replaced.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Link, unlike rename, fails if path appeared since: no clobber.
		err := os.Link(tmp.Name(), path)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s was created while bkb ran: not replaced (give --overwrite to replace it)", path)
		}
		if err == nil {
			return nil
		}
		// No hard links here: an exclusive create instead.
		f, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if cerr != nil {
			if errors.Is(cerr, fs.ErrExist) {
				return fmt.Errorf("%s was created while bkb ran: not replaced (give --overwrite to replace it)", path)
			}
			return cerr
		}
		_, werr := f.Write(data)
		return errors.Join(werr, f.Close())
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: not followed, not replaced", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file: not replaced", path)
	case isJournal(path):
		return fmt.Errorf("%s is a study journal: not replaced", path)
	}
	if _, ok := overwriteOK.Load(filepath.Clean(path)); !ok {
		return fmt.Errorf("%s exists (created while bkb ran?): not replaced without --overwrite", path)
	}
	return os.Rename(tmp.Name(), path)
}
