//go:build linux

package plugin

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setProcAttr puts the plugin in a process group of its own, so that a
// terminal's SIGINT reaches only the caller and killGroup can also reach the
// plugin's own children, and asks the kernel to SIGKILL the plugin when its
// parent dies: a caller killed without running Close (kill -9, a crash, an
// OOM kill) must not leave behind a plugin busy in a long evaluation, which
// would only notice the end of its stdin when it next reads it. The death
// signal reaches the plugin itself, not processes it started; Close's
// process-group kill covers those when the caller shuts down normally.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The Linux parent-death signal fires when the OS THREAD that created the
// child exits, not the process (prctl(2), PR_SET_PDEATHSIG). Go's runtime
// ends a thread when a goroutine locked to it with runtime.LockOSThread
// returns without unlocking, so a plugin started from such a goroutine of
// the caller would be killed long before the caller exits. Plugins are
// therefore started by one goroutine that locks itself to its thread and
// never returns: that thread lives exactly as long as the process.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// initSpawner starts the spawner goroutine once.
func initSpawner() {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go spawnLoop(spawner.reqs)
	})
}

func spawnLoop(reqs <-chan spawnReq) {
	runtime.LockOSThread() // never unlocked, and the loop never ends
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}

// startCmd starts cmd on the spawner's thread (see spawner).
func startCmd(cmd *exec.Cmd) error {
	initSpawner()
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}
