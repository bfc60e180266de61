//go:build unix && !linux

package plugin

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in a process group of its own, so that a
// terminal's SIGINT reaches only the caller and killGroup can also reach the
// plugin's own children. Unlike on Linux, a plugin busy in an evaluation
// outlives a caller killed without running Close (it sees the end of its
// stdin only when it next reads it).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

// initSpawner does nothing: only Linux needs a spawner thread.
func initSpawner() {}
