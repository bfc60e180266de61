package storage

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
)

// NewWorkerID returns an identifier for this process as a worker of a
// study, "host:pid:nonce" (nonce: 8 random hex digits, so that two
// workers are told apart even when a pid is reused or two processes of one
// program share a host name). Study layers put it in the Worker field of
// the ask records they write; [JournalStore] finds the trials of dead
// processes from it.
func NewWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather)
	return strings.ReplaceAll(host, ":", "_") + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b[:])
}

// ParseWorkerID splits an identifier made by NewWorkerID into its host and
// pid; ok is false for any other string.
func ParseWorkerID(id string) (host string, pid int, ok bool) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return "", 0, false
	}
	rest := id[:i]
	j := strings.LastIndexByte(rest, ':')
	if j <= 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[j+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return rest[:j], pid, true
}
