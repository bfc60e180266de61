package study

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestExtendDurable: an extension is stored, and every later Load has the
// budget in force while the engine keeps reading the creation budget; a
// budget below the trials asked is refused, and a storage without
// attributes says why.
func TestExtendDurable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.jsonl")
	st, err := storage.OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := NewSpace(Float("x", 0, 1), Float("y", 0, 1))
	s, err := Create(ctx, st, "e", Config{Space: sp, Budget: 5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	obj := func(_ context.Context, tr *Trial) (float64, error) { return tr.X[0] + tr.X[1], nil }
	if err := s.Optimize(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Extend(ctx, 4); err == nil {
		t.Fatal("a budget below the trials asked was accepted")
	}
	if err := s.Extend(ctx, 8); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = storage.OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := Load(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config().Budget; got != 8 {
		t.Fatalf("budget in force after Load %d, want 8", got)
	}
	if got := l.CreationConfig().Budget; got != 5 {
		t.Fatalf("creation budget %d, want 5", got)
	}
	if err := l.Optimize(ctx, obj, 0); err != nil {
		t.Fatal(err)
	}
	if n := len(l.Trials()); n != 8 {
		t.Fatalf("%d trials after the extension, want 8", n)
	}
	m, err := Create(ctx, noAttrs{storage.NewMemory()}, "m", Config{Space: sp, Budget: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, 9); !errors.Is(err, ErrNoAttributes) {
		t.Fatalf("extend without attributes: %v", err)
	}
}

// noAttrs hides a storage's optional interfaces (no Unwrap).
type noAttrs struct{ storage.Storage }
