//go:build unix

package plugin

import (
	"errors"
	"syscall"
)

// processGone reports whether pid no longer exists (not even as a zombie).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
