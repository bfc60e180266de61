package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestVersionTableReleased: the rows of the version table are those
// released (testdata/versions.json): a row is never edited, and a new
// version is a row appended to both, with its golden journals. The last
// row is LatestVersion's.
func TestVersionTableReleased(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "versions.json")
	if _, err := os.Stat(path); os.IsNotExist(err) && os.Getenv("BKB_UPDATE_GOLDEN") != "" {
		b, _ := json.MarshalIndent(versionTable, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var released []Rules
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&released); err != nil {
		t.Fatal(err)
	}
	if len(versionTable) != LatestVersion || versionTable[len(versionTable)-1].Version != LatestVersion {
		t.Fatalf("the table has %d rows, the last of version %d; LatestVersion is %d", len(versionTable), versionTable[len(versionTable)-1].Version, LatestVersion)
	}
	if len(released) > len(versionTable) {
		t.Fatalf("%d versions released, %d in the table: a row was removed", len(released), len(versionTable))
	}
	for i, r := range versionTable {
		if r.Version != i+1 {
			t.Errorf("row %d is version %d", i, r.Version)
		}
		if i < len(released) && r != released[i] {
			t.Errorf("version %d's rules changed from those released:\n  released %+v\n  now      %+v", r.Version, released[i], r)
		}
	}
	if len(released) < len(versionTable) {
		t.Errorf("versions %d to %d are not in testdata/versions.json: add their rows (and golden journals)", len(released)+1, len(versionTable))
	}
}

// TestVersionTableDoc: docs/versions.md shows the version table as it is
// (BKB_UPDATE_GOLDEN=1 rewrites the table between its markers).
func TestVersionTableDoc(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("| rule |")
	for _, r := range versionTable {
		fmt.Fprintf(&b, " %d |", r.Version)
	}
	b.WriteString("\n|---|")
	for range versionTable {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	var rows []map[string]any
	raw, _ := json.Marshal(versionTable)
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(Rules{})
	for i := 1; i < typ.NumField(); i++ {
		name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		fmt.Fprintf(&b, "| `%s` |", name)
		for _, r := range rows {
			if r[name] == true {
				b.WriteString(" x |")
			} else {
				b.WriteString("   |")
			}
		}
		b.WriteString("\n")
	}
	table := b.String()
	path := filepath.Join("..", "docs", "versions.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- version table: begin -->\n", "<!-- version table: end -->"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no version table markers", path)
	}
	if got := string(doc[i+len(begin) : j]); got != table {
		if os.Getenv("BKB_UPDATE_GOLDEN") != "" {
			out := append(append(append([]byte{}, doc[:i+len(begin)]...), table...), doc[j:]...)
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's version table differs from versionTable (BKB_UPDATE_GOLDEN=1 rewrites it):\n%s", path, table)
	}
}
