package storage_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/storagetest"
)

func TestCatalogMemory(t *testing.T) {
	storagetest.RunCatalog(t, func(*testing.T) storage.Storage { return storage.NewMemory() })
}

func TestCatalogDir(t *testing.T) {
	storagetest.RunCatalog(t, func(t *testing.T) storage.Storage {
		d, err := storage.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
}

// TestDirNames checks that no study name reaches outside the directory
// and that links and foreign files are never taken for studies.
func TestDirNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "studies")
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := t.Context()
	for _, name := range []string{"", "..", "../x", "a/b", `a\b`, ".hidden", "-flag", "a b", "x\x00", strings.Repeat("a", 129), "é"} {
		if _, err := d.CreateStudy(ctx, name, nil); err == nil {
			t.Errorf("CreateStudy(%q) accepted", name)
		}
		if _, err := d.Study(ctx, name); err == nil {
			t.Errorf("Study(%q) accepted", name)
		}
		if err := d.DeleteStudy(ctx, name); err == nil {
			t.Errorf("DeleteStudy(%q) accepted", name)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 {
		t.Fatalf("files outside the directory: %v", ents)
	}
	// A link named like a study is neither listed nor opened.
	secret := filepath.Join(root, "secret.jsonl")
	if err := os.WriteFile(secret, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := d.ListStudies(ctx); err != nil || len(l) != 0 {
		t.Fatalf("ListStudies: %v, %v (want nothing)", l, err)
	}
	if _, err := d.CreateStudy(ctx, "link", nil); err == nil {
		t.Fatal("CreateStudy over a link accepted")
	}
	if err := d.DeleteStudy(ctx, "link"); err == nil {
		t.Fatal("DeleteStudy of a link accepted")
	}
	if b, _ := os.ReadFile(secret); string(b) != "not yours\n" {
		t.Fatalf("the link's target changed: %q", b)
	}
}
