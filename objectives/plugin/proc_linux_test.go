//go:build linux

package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processDead reports whether pid is gone or a zombie (killed, waiting to
// be reaped by whoever inherited it).
func processDead(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may contain spaces and parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}

// TestPluginDiesWithParent checks that a plugin busy in an evaluation dies
// with a caller killed by SIGKILL (issue 9): the test binary, re-executed as
// a caller (runParent), starts the "hang" fake, which sleeps in its first
// evaluation; the caller is killed and the plugin must be gone within a
// second, where before it lived on for the whole evaluation.
func TestPluginDiesWithParent(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), parentEnv+"=1", "GORACE=atexit_sleep_ms=0")
	var stderr syncBuffer
	parent.Stderr = &stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	var pid int
	select {
	case l := <-line:
		if pid, err = strconv.Atoi(strings.TrimSpace(l)); err != nil || pid <= 0 {
			t.Fatalf("caller printed %q, want the plugin's pid; stderr: %s", l, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("caller never reported a busy plugin; stderr: %s", stderr.String())
	}
	if processDead(pid) {
		t.Fatalf("plugin %d is not running before its caller is killed", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(time.Second)
	for !processDead(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // our fake: do not leave it sleeping
			t.Fatalf("plugin %d still running 1s after its caller was killed", pid)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for an outcome
	}
}

// TestPluginSurvivesStartingThread checks the spawner: a plugin started from
// a goroutine locked to its OS thread, which then exits (and with it the
// thread), must keep running, whereas the parent-death signal of a child
// forked from that thread would kill it.
func TestPluginSurvivesStartingThread(t *testing.T) {
	t.Parallel()
	type started struct {
		p   *Process
		err error
		tid int
	}
	ch := make(chan started, 1)
	var run func()
	run = func() {
		runtime.LockOSThread() // not unlocked: the thread exits with the goroutine
		if syscall.Gettid() == syscall.Getpid() {
			// The runtime never ends the main thread. Keep it locked
			// while another goroutine, hence another thread, does the work.
			done := make(chan struct{})
			go func() { run(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		cfg := Config{
			Command: fakeCommand(t),
			Env:     []string{fakeEnv + "=good", "GORACE=atexit_sleep_ms=0"},
			Timeout: 10 * time.Second,
		}
		p, err := Start(context.Background(), cfg)
		ch <- started{p, err, syscall.Gettid()}
	}
	go run()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.p.Close()
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(task); err == nil; _, err = os.Stat(task) {
		if time.Now().After(deadline) {
			t.Fatalf("the goroutine's thread %d did not exit (pid %d)", s.tid, os.Getpid())
		}
		time.Sleep(time.Millisecond) // polling interval
	}
	for i := range 3 {
		x := []float64{float64(i)}
		if y, err := s.p.Evaluate(context.Background(), x); err != nil || y != good(x) {
			t.Fatalf("evaluation %d after the starting thread exited: %v, %v", i+1, y, err)
		}
	}
	if s.p.Restarts() != 0 {
		t.Errorf("plugin was restarted %d times", s.p.Restarts())
	}
}
