//go:build unix

package plugin

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in a process group of its own, so that a
// terminal's SIGINT reaches only the caller and killGroup can also reach the
// plugin's own children.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

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
