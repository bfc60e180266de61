//go:build unix

package storage

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has the given pid: kill(pid, 0)
// fails with ESRCH. EPERM (a process of another user) counts as alive. A
// zombie (dead, not yet reaped by its parent) counts as alive until it is
// reaped.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
