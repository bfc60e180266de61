package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkOutput checks, before a run starts, that path (given with flag) can
// be written: its directory exists, it is not the study's journal (nor
// any journal), and it does not exist unless overwrite is set. No output
// file ever replaces a study or, without --overwrite, any existing file.
func checkOutput(flag, path string, overwrite bool, studyPath string) error {
	if path == "" {
		return nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("%s %s: directory %s does not exist", flag, path, dir)
		}
	}
	if studyPath != "" && sameFile(path, studyPath) {
		return usagef("%s %s is the study journal: an output never replaces a study", flag, path)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usagef("%s %s: %v", flag, path, err)
	case st.IsDir():
		return usagef("%s %s is a directory", flag, path)
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

// isJournal reports whether the file at path starts like a study journal
// (a JSON header with a version and a config).
func isJournal(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return false
	}
	line = bytes.TrimSpace(line)
	return bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"version"`)) && bytes.Contains(line, []byte(`"config"`))
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so that a failed write never leaves a half-written file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
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
	if isJournal(path) {
		return fmt.Errorf("%s is a study journal: not replaced", path)
	}
	return os.Rename(tmp.Name(), path)
}
