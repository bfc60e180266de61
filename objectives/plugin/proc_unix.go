//go:build unix

package plugin

import (
	"errors"
	"os/exec"
	"syscall"
)

// killGroup sends SIGKILL to the process group led by cmd's process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		err = nil
	}
	if err != nil {
		// Fall back to the process alone.
		return cmd.Process.Kill()
	}
	return nil
}
