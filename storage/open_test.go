package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestOpenLocation: a registered kind opens the locations it matches
// (here a fake "mem:" kind), any other location is a journal file, and a
// kind registered twice panics as database/sql's drivers do.
func TestOpenLocation(t *testing.T) {
	mem := storage.NewMemory()
	storage.Register("test-mem", func(loc string) bool { return strings.HasPrefix(loc, "mem:") },
		func(_ context.Context, loc string, opt storage.OpenOptions) (storage.Storage, error) {
			if loc != "mem:a" {
				return nil, errors.New("no such memory")
			}
			return mem, nil
		})
	ctx := context.Background()
	if st, err := storage.OpenLocation(ctx, "mem:a", storage.OpenOptions{}); err != nil || st != storage.Storage(mem) {
		t.Fatalf("mem:a: %v %v", st, err)
	}
	if _, err := storage.OpenLocation(ctx, "mem:b", storage.OpenOptions{}); err == nil {
		t.Fatal("mem:b opened")
	}
	if got := storage.Match("mem:a"); got != "test-mem" {
		t.Errorf("Match(mem:a) = %q", got)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := storage.OpenLocation(ctx, path, storage.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*storage.JournalStore); !ok {
		t.Errorf("a path opened as %T, want a journal", st)
	}
	st.Close()
	defer func() {
		if recover() == nil {
			t.Error("a second Register of one name did not panic")
		}
	}()
	storage.Register("test-mem", func(string) bool { return false }, nil)
}
