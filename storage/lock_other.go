//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// lock creates f.Name()+".lock" with O_EXCL, holding the pid of the owner;
// unlock removes it. A crashed process leaves the lock file behind.
func lock(f *os.File) (unlock func() error, err error) {
	name := f.Name() + ".lock"
	lf, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		owner, _ := os.ReadFile(name)
		return nil, fmt.Errorf("%w (lock file %s, owner %q; remove it if no process uses the journal)", ErrLocked, name, owner)
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	_, werr := lf.WriteString("pid " + strconv.Itoa(os.Getpid()) + "\n")
	cerr := lf.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() error { return os.Remove(name) }, nil
}

// lockSnapshotDir does nothing here: a lock file left by a crashed saver
// would stop every later save, and two saves at once cost at most a
// replay (a chunk missing fails the read).
func lockSnapshotDir(string) (unlock func(), err error) { return func() {}, nil }
