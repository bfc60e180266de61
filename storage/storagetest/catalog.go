package storagetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// RunCatalog checks a storage that lists and deletes studies and keeps
// user attributes: open returns a fresh, empty storage.
func RunCatalog(t *testing.T, open func(t *testing.T) storage.Storage) {
	s := open(t)
	cat, ok := s.(storage.Catalog)
	if !ok {
		t.Fatalf("%T is not a storage.Catalog", s)
	}
	at, ok := s.(storage.Attributes)
	if !ok {
		t.Fatalf("%T is not a storage.Attributes", s)
	}
	if l, err := cat.ListStudies(bg); err != nil || len(l) != 0 {
		t.Fatalf("ListStudies of an empty storage: %v, %v", l, err)
	}
	for _, name := range []string{"zeta", "alpha", "mid-1"} {
		if _, err := s.CreateStudy(bg, name, json.RawMessage(`{"n":"`+name+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	appendRecs(t, s, "alpha", ask(0, 0.5), tell(0, 1.5, 0.5))
	l, err := cat.ListStudies(bg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range l {
		names = append(names, h.Name)
		if h.Created.IsZero() || !jsonEq(h.Config, `{"n":"`+h.Name+`"}`) {
			t.Errorf("header %+v", h)
		}
	}
	if JSONOf(t, names) != `["alpha","mid-1","zeta"]` {
		t.Fatalf("ListStudies names %v, want alpha, mid-1, zeta", names)
	}

	// Attributes: set, overwrite, delete with null, per trial.
	set := func(trial int, key, value string) {
		t.Helper()
		if err := at.SetAttr(bg, "alpha", storage.Attr{Trial: trial, Key: key, Value: json.RawMessage(value)}); err != nil {
			t.Fatalf("SetAttr(%d, %q, %s): %v", trial, key, value, err)
		}
	}
	set(-1, "owner", `"ann"`)
	set(0, "note", `{"a": [1, 2]}`)
	set(-1, "dataset", `"v1"`)
	set(-1, "dataset", `"v2"`)
	set(-1, "owner", `null`)
	got, err := at.Attrs(bg, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	type kv struct {
		Trial int
		Key   string
		Value string
	}
	var flat []kv
	for _, a := range got {
		if a.Time.IsZero() {
			t.Errorf("attribute %q without a time", a.Key)
		}
		var v any
		_ = json.Unmarshal(a.Value, &v)
		flat = append(flat, kv{a.Trial, a.Key, JSONOf(t, v)})
	}
	want := `[{"Trial":-1,"Key":"dataset","Value":"\"v2\""},{"Trial":0,"Key":"note","Value":"{\"a\":[1,2]}"}]`
	if JSONOf(t, flat) != want {
		t.Fatalf("Attrs = %s\nwant   %s", JSONOf(t, flat), want)
	}
	if got, err := at.Attrs(bg, "zeta"); err != nil || len(got) != 0 {
		t.Fatalf("Attrs of a study without any: %v, %v", got, err)
	}
	for _, bad := range []storage.Attr{
		{Trial: -2, Key: "k", Value: json.RawMessage(`1`)},
		{Trial: -1, Key: "", Value: json.RawMessage(`1`)},
		{Trial: -1, Key: "k", Value: json.RawMessage(`{`)},
	} {
		if err := at.SetAttr(bg, "alpha", bad); err == nil {
			t.Errorf("SetAttr(%+v) accepted", bad)
		}
	}
	if err := at.SetAttr(bg, "nope", storage.Attr{Trial: -1, Key: "k", Value: json.RawMessage(`1`)}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SetAttr on a missing study: %v, want ErrNotFound", err)
	}

	// Delete: records and attributes go; the name can be reused.
	if err := cat.DeleteStudy(bg, "alpha"); err != nil {
		t.Fatal(err)
	}
	if err := cat.DeleteStudy(bg, "alpha"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second DeleteStudy: %v, want ErrNotFound", err)
	}
	if _, err := s.Study(bg, "alpha"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Study after DeleteStudy: %v, want ErrNotFound", err)
	}
	if l, _ := cat.ListStudies(bg); len(l) != 2 {
		t.Fatalf("ListStudies after a delete: %d studies, want 2", len(l))
	}
	if _, err := s.CreateStudy(bg, "alpha", nil); err != nil {
		t.Fatalf("CreateStudy of a deleted name: %v", err)
	}
	if r := records(t, s, "alpha"); len(r) != 0 {
		t.Fatalf("a recreated study has %d old records", len(r))
	}
	if got, err := at.Attrs(bg, "alpha"); err != nil || len(got) != 0 {
		t.Fatalf("a recreated study has old attributes: %v, %v", got, err)
	}
}

// jsonEq compares a JSON text with want by value.
func jsonEq(a json.RawMessage, want string) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal([]byte(want), &vb) == nil && JSONOfAny(va) == JSONOfAny(vb)
}

// JSONOfAny is the JSON text of v ("" when it has none).
func JSONOfAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
