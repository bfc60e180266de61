//go:build !unix

package plugin

import "os/exec"

// setProcAttr does nothing on systems without Unix process groups.
func setProcAttr(cmd *exec.Cmd) {}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

// initSpawner does nothing: only Linux needs a spawner thread.
func initSpawner() {}

// killGroup kills the plugin process (its children may survive).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
