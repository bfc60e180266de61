package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Catalog is a Storage that holds many studies and can list and delete
// them: [Memory], [Dir] (a directory of journal files) and the postgres
// subpackage's Store. A single journal file ([JournalStore]) holds one
// study and is not a Catalog.
type Catalog interface {
	Storage
	// ListStudies returns the headers of every study, ordered by name.
	ListStudies(ctx context.Context) ([]Header, error)
	// DeleteStudy deletes the study name with its records and attributes;
	// an error wrapping ErrNotFound if there is no such study.
	DeleteStudy(ctx context.Context, name string) error
}

// Attr is a user attribute of a study (Trial -1) or of one of its
// trials: a note a person or a program attaches ("dataset": "v2"), kept
// beside the records and never read by the optimizer.
type Attr struct {
	Trial int             `json:"trial"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"` // JSON; null deletes the attribute
	Time  time.Time       `json:"time"`
}

// Attributes is a Storage that keeps user attributes ([Memory],
// [JournalStore], [Dir], the postgres Store).
type Attributes interface {
	// SetAttr sets (or, with a null value, deletes) an attribute of the
	// study name; a zero Time becomes now.
	SetAttr(ctx context.Context, name string, a Attr) error
	// Attrs returns the study's attributes, the latest value of each
	// (trial, key), ordered by trial (the study's first) then key.
	Attrs(ctx context.Context, name string) ([]Attr, error)
}

// MaxAttrValue bounds the size of an attribute's JSON value in bytes.
const MaxAttrValue = 64 << 10

// CheckAttr validates an attribute: a trial >= -1, a key of 1 to 256
// printable characters, and a value that is valid JSON of at most
// MaxAttrValue bytes.
func CheckAttr(a Attr) error {
	if a.Trial < -1 {
		return fmt.Errorf("attribute %q: trial %d (want -1 for the study, or a trial number)", a.Key, a.Trial)
	}
	if a.Key == "" || len(a.Key) > 256 {
		return fmt.Errorf("attribute key %q: want 1 to 256 characters", a.Key)
	}
	for _, r := range a.Key {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("attribute key %q: unprintable character %U", a.Key, r)
		}
	}
	if len(a.Value) > MaxAttrValue {
		return fmt.Errorf("attribute %q: value of %d bytes (at most %d)", a.Key, len(a.Value), MaxAttrValue)
	}
	if len(a.Value) == 0 || !json.Valid(a.Value) {
		return fmt.Errorf("attribute %q: the value is not valid JSON", a.Key)
	}
	return nil
}

// isNull reports whether a JSON value is null (a deletion).
func isNull(v json.RawMessage) bool { return strings.TrimSpace(string(v)) == "null" }

// latestAttrs folds a sequence of attribute settings (oldest first) into
// the latest value of each (trial, key), deletions removed, ordered by
// trial then key.
func latestAttrs(seq []Attr) []Attr {
	type k struct {
		trial int
		key   string
	}
	last := map[k]Attr{}
	for _, a := range seq {
		last[k{a.Trial, a.Key}] = a
	}
	out := make([]Attr, 0, len(last))
	for _, a := range last {
		if !isNull(a.Value) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Attr) int {
		if a.Trial != b.Trial {
			return a.Trial - b.Trial
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// CheckStudyName validates a study name for a storage that keeps one
// file per study ([Dir]) and for names that travel in URLs: 1 to 128
// letters, digits, '.', '_' and '-', not starting with '.' or '-'. It
// refuses path separators and "..", so that no name reaches outside its
// directory.
func CheckStudyName(name string) error {
	if name == "" {
		return errors.New("empty study name")
	}
	if len(name) > 128 {
		return fmt.Errorf("study name of %d characters (at most 128)", len(name))
	}
	if name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("study name %q starts with %q (want a letter, digit or '_')", name, name[0])
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("study name %q: character %q not allowed (letters, digits, '.', '_' and '-' only)", name, r)
		}
	}
	return nil
}

// ListStudies implements [Catalog].
func (m *Memory) ListStudies(context.Context) ([]Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Header, 0, len(m.studies))
	for _, s := range m.studies {
		h := s.header
		h.Config = slices.Clone(h.Config)
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteStudy implements [Catalog].
func (m *Memory) DeleteStudy(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.study(name); err != nil {
		return err
	}
	delete(m.studies, name)
	delete(m.attrs, name)
	return nil
}

// SetAttr implements [Attributes].
func (m *Memory) SetAttr(_ context.Context, name string, a Attr) error {
	if err := CheckAttr(a); err != nil {
		return fmt.Errorf("storage: study %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.study(name); err != nil {
		return err
	}
	if a.Time.IsZero() {
		a.Time = time.Now()
	}
	a.Time = a.Time.UTC()
	a.Value = slices.Clone(a.Value)
	if m.attrs == nil {
		m.attrs = map[string][]Attr{}
	}
	m.attrs[name] = append(m.attrs[name], a)
	return nil
}

// Attrs implements [Attributes].
func (m *Memory) Attrs(_ context.Context, name string) ([]Attr, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.study(name); err != nil {
		return nil, err
	}
	return latestAttrs(m.attrs[name]), nil
}
