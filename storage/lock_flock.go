//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive, non-blocking flock(2) on f. The kernel drops it
// when f is closed or the process dies.
func lock(f *os.File) (unlock func() error, err error) {
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() error { return syscall.Flock(fd, syscall.LOCK_UN) }, nil
}

// lockSnapshotDir takes the exclusive, non-blocking flock(2) of a
// snapshot's chunk directory for one save (ErrLocked while another
// process saves), so that a save never removes the chunks of a list
// another is about to write.
func lockSnapshotDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	release, err := lock(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { release(); f.Close() }, nil
}
