package storage_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// optional reports which optional interfaces st offers through As.
func optional(st storage.Storage) map[string]bool {
	_, sn := storage.As[storage.Snapshots](st)
	_, cat := storage.As[storage.Catalog](st)
	_, at := storage.As[storage.Attributes](st)
	return map[string]bool{"Snapshots": sn, "Catalog": cat, "Attributes": at}
}

// passThrough wraps a storage the way every wrapper in the module must:
// embedding it and naming it with Unwrap.
type passThrough struct{ storage.Storage }

func (p passThrough) Unwrap() storage.Storage { return p.Storage }

// TestAsThroughWrappers checks that every optional interface of every
// storage stays reachable through a wrapper (nested twice), and that a
// plain type assertion on the wrapper would have hidden it.
func TestAsThroughWrappers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, err := storage.OpenJournalStore(filepath.Join(dir, "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	ds, err := storage.OpenDir(filepath.Join(dir, "studies"))
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	for _, tc := range []struct {
		name string
		st   storage.Storage
		want map[string]bool
	}{
		{"memory", storage.NewMemory(), map[string]bool{"Snapshots": false, "Catalog": true, "Attributes": true}},
		{"journal", js, map[string]bool{"Snapshots": true, "Catalog": false, "Attributes": true}},
		{"dir", ds, map[string]bool{"Snapshots": true, "Catalog": true, "Attributes": true}},
	} {
		direct := optional(tc.st)
		for k, v := range tc.want {
			if direct[k] != v {
				t.Errorf("%s: implements %s = %v, the test expects %v", tc.name, k, direct[k], v)
			}
		}
		wrapped := optional(passThrough{passThrough{tc.st}})
		for k, v := range direct {
			if wrapped[k] != v {
				t.Errorf("%s wrapped twice: As finds %s = %v, the storage itself %v", tc.name, k, wrapped[k], v)
			}
		}
		if _, ok := storage.Storage(passThrough{tc.st}).(storage.Attributes); ok {
			t.Errorf("%s: the wrapper itself implements Attributes: the test no longer shows As is needed", tc.name)
		}
	}
}

// TestWrappersUnwrap reads the module's source: every struct type that
// embeds a storage.Storage (a wrapper) must have an Unwrap method, so
// that As reaches the optional interfaces it would otherwise hide (a
// server that wrapped its storage once hid its snapshots this way, and
// every ask replayed the whole study).
func TestWrappersUnwrap(t *testing.T) {
	t.Parallel()
	root := ".."
	embeds := map[string]string{} // "dir.Type" -> file
	unwraps := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.Dir(path)
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						if len(fld.Names) == 0 && isStorageType(fld.Type, f.Name.Name) {
							embeds[pkg+"."+ts.Name.Name] = path
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil || decl.Name.Name != "Unwrap" || len(decl.Recv.List) != 1 {
					continue
				}
				typ := decl.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					unwraps[pkg+"."+id.Name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(embeds) == 0 {
		t.Fatal("found no storage wrapper in the module: the scan is broken (serve's leases wrap the storage)")
	}
	for typ, file := range embeds {
		if !unwraps[typ] {
			t.Errorf("%s (%s) embeds a storage.Storage without an Unwrap method: storage.As cannot see through it", typ, file)
		}
	}
}

func isStorageType(e ast.Expr, pkg string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "storage" && e.Sel.Name == "Storage"
	case *ast.Ident:
		return pkg == "storage" && e.Name == "Storage"
	}
	return false
}
