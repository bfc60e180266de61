//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStartup: serve refuses at start-up, with exit 2 and a message,
// a token file that is not a regular file (a FIFO must not block it,
// /dev/zero must not be read on), one larger than 4 KiB or of several
// lines, a --study journal that does not exist (rather than serve "no
// such study" to every client) and an allowed origin that is not one.
func TestServeStartup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := writeFile(t, dir, "big", strings.Repeat("t", 5000))
	lines := writeFile(t, dir, "lines", "tok\nen\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", "/dev/zero"}, "not a regular file"},
		{[]string{"--token-file", fifo}, "not a regular file"},
		{[]string{"--token-file", big}, "larger than 4096 bytes"},
		{[]string{"--token-file", lines}, "more than one line"},
		{[]string{"--study", filepath.Join(dir, "missing.jsonl")}, "no such journal"},
		{[]string{"--dir", dir, "--allow-origin", "*"}, "--allow-origin"},
		{[]string{"--dir", dir, "--allow-origin", "evil.example"}, "--allow-origin"},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)
		if !contains(c.args, "--dir") && !contains(c.args, "--study") {
			args = append(args, "--dir", dir)
		}
		done := make(chan int, 1)
		var out, errb bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		go func() { done <- run(ctx, args, &out, &errb) }()
		select {
		case code := <-done:
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("bkb %v: exit %d, %q; want exit 2 and %q", args, code, errb.String(), c.want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("bkb %v did not refuse to start within 10 s", args)
			cancel()
			<-done
		}
		cancel()
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("serve --study created the missing journal")
	}
}
