package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// AttrsPath returns the file beside a journal that holds its study's user
// attributes: one JSON object per line (an [Attr]), appended, the last
// line of each (trial, key) winning. A separate file keeps the journal's
// format, and every reader of it, unchanged.
func AttrsPath(journal string) string { return journal + ".attrs" }

// SetAttr implements [Attributes]: it appends one line to the journal's
// attribute file (see [AttrsPath]) in one write, and syncs it.
func (s *JournalStore) SetAttr(ctx context.Context, name string, a Attr) error {
	if err := CheckAttr(a); err != nil {
		return fmt.Errorf("storage: study %q: %w", name, err)
	}
	if _, err := s.Study(ctx, name); err != nil {
		return err
	}
	if a.Time.IsZero() {
		a.Time = time.Now()
	}
	a.Time = a.Time.UTC()
	var buf bytes.Buffer
	if err := json.Compact(&buf, a.Value); err != nil {
		return fmt.Errorf("storage: study %q: attribute %q: %w", name, a.Key, err)
	}
	a.Value = buf.Bytes()
	line, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("storage: study %q: attribute %q: %w", name, a.Key, err)
	}
	path := AttrsPath(s.path)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("storage: %s is not a regular file (a link?): refusing to write attributes there", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("storage: study %q: attributes: %w", name, err)
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("storage: study %q: attributes: %w", name, err)
	}
	return nil
}

// Attrs implements [Attributes]. An incomplete last line (a writer that
// died) is ignored.
func (s *JournalStore) Attrs(ctx context.Context, name string) ([]Attr, error) {
	if _, err := s.Study(ctx, name); err != nil {
		return nil, err
	}
	path := AttrsPath(s.path)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("storage: %s is not a regular file (a link?)", path)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []Attr{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: study %q: attributes: %w", name, err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		b = b[:i+1]
	}
	var seq []Attr
	for n, line := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var a Attr
		if err := json.Unmarshal(line, &a); err != nil {
			return nil, &LineError{Path: path, Line: n + 1, Err: err}
		}
		seq = append(seq, a)
	}
	return latestAttrs(seq), nil
}

// Dir is a [Catalog] of journal files in one directory: the study NAME is
// the file NAME.jsonl (see [JournalStore]), its attributes NAME.jsonl.attrs.
// Names are checked with [CheckStudyName], so none reaches outside the
// directory, and links are never followed onto other files. Its methods
// are safe for concurrent use; any number of processes may share the
// directory, as they may share a journal.
type Dir struct {
	dir string

	mu     sync.Mutex
	stores map[string]*JournalStore
	closed bool
}

// JournalExt is the extension of the journal files of a [Dir].
const JournalExt = ".jsonl"

// OpenDir returns the catalog of the directory dir, creating it if it
// does not exist.
func OpenDir(dir string) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("storage: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("storage: %s is not a directory", dir)
	}
	return &Dir{dir: dir, stores: map[string]*JournalStore{}}, nil
}

// Path returns the directory.
func (d *Dir) Path() string { return d.dir }

// JournalPath returns the journal file of the study name.
func (d *Dir) JournalPath(name string) (string, error) {
	if err := CheckStudyName(name); err != nil {
		return "", fmt.Errorf("storage: %w", err)
	}
	return filepath.Join(d.dir, name+JournalExt), nil
}

// store returns the journal store of the study name.
func (d *Dir) store(name string) (*JournalStore, error) {
	path, err := d.JournalPath(name)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("storage: %s: closed", d.dir)
	}
	if s, ok := d.stores[name]; ok {
		return s, nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		// Not a study of the directory (ListStudies leaves it out): links
		// are never followed, so that no name reaches outside.
		return nil, fmt.Errorf("storage: study %q: %s is not a regular file (a link?): %w", name, path, ErrNotFound)
	}
	s, err := OpenJournalStore(path, JournalStoreOptions{})
	if err != nil {
		return nil, err
	}
	d.stores[name] = s
	return s, nil
}

// CreateStudy implements [Storage].
func (d *Dir) CreateStudy(ctx context.Context, name string, config json.RawMessage) (Header, error) {
	s, err := d.store(name)
	if err != nil {
		return Header{}, err
	}
	return s.CreateStudy(ctx, name, config)
}

// Study implements [Storage].
func (d *Dir) Study(ctx context.Context, name string) (Header, error) {
	s, err := d.store(name)
	if err != nil {
		return Header{}, err
	}
	return s.Study(ctx, name)
}

// Records implements [Storage].
func (d *Dir) Records(ctx context.Context, name string, from int) ([]Record, error) {
	s, err := d.store(name)
	if err != nil {
		return nil, err
	}
	return s.Records(ctx, name, from)
}

// Update implements [Storage].
func (d *Dir) Update(ctx context.Context, name string, from int, fn func(View) ([]Record, error)) ([]Record, error) {
	s, err := d.store(name)
	if err != nil {
		return nil, err
	}
	return s.Update(ctx, name, from, fn)
}

// Heartbeat implements [Storage]; see [JournalStore.Heartbeat].
func (d *Dir) Heartbeat(ctx context.Context, name string, trials []int) error {
	s, err := d.store(name)
	if err != nil {
		return err
	}
	return s.Heartbeat(ctx, name, trials)
}

// SetAttr implements [Attributes].
func (d *Dir) SetAttr(ctx context.Context, name string, a Attr) error {
	s, err := d.store(name)
	if err != nil {
		return err
	}
	return s.SetAttr(ctx, name, a)
}

// Attrs implements [Attributes].
func (d *Dir) Attrs(ctx context.Context, name string) ([]Attr, error) {
	s, err := d.store(name)
	if err != nil {
		return nil, err
	}
	return s.Attrs(ctx, name)
}

// SaveSnapshot implements [Snapshots]: the study's journal keeps its
// snapshot beside it (see [SnapshotPath]).
func (d *Dir) SaveSnapshot(ctx context.Context, name string, snap Snapshot) error {
	s, err := d.store(name)
	if err != nil {
		return err
	}
	return s.SaveSnapshot(ctx, name, snap)
}

// LoadSnapshot implements [Snapshots].
func (d *Dir) LoadSnapshot(ctx context.Context, name string, withData bool) (Snapshot, error) {
	s, err := d.store(name)
	if err != nil {
		return Snapshot{}, err
	}
	return s.LoadSnapshot(ctx, name, withData)
}

// OpenSnapshot implements [SnapshotStreams].
func (d *Dir) OpenSnapshot(ctx context.Context, name string) (Snapshot, SnapshotData, error) {
	s, err := d.store(name)
	if err != nil {
		return Snapshot{}, nil, err
	}
	return s.OpenSnapshot(ctx, name)
}

// WriteSnapshot implements [SnapshotStreams].
func (d *Dir) WriteSnapshot(ctx context.Context, name string, snap Snapshot, encode func(io.Writer) error) error {
	s, err := d.store(name)
	if err != nil {
		return err
	}
	return s.WriteSnapshot(ctx, name, snap, encode)
}

// ListStudies implements [Catalog]: the regular files NAME.jsonl with a
// valid name and a readable header; other files are left out.
func (d *Dir) ListStudies(ctx context.Context) ([]Header, error) {
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	var out []Header
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), JournalExt)
		if !ok || !e.Type().IsRegular() || CheckStudyName(name) != nil {
			continue
		}
		h, err := d.Study(ctx, name)
		if err != nil {
			continue // being created, or not a journal
		}
		if h.Name == "" {
			h.Name = name
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteStudy implements [Catalog]: it removes the journal, its
// attribute file and its snapshot (its list file and chunks). A worker process that still has the journal open keeps
// writing to the removed file.
func (d *Dir) DeleteStudy(ctx context.Context, name string) error {
	if _, err := d.Study(ctx, name); err != nil {
		return err
	}
	path, _ := d.JournalPath(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.stores[name]; ok {
		s.Close()
		delete(d.stores, name)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("storage: delete study %q: %w", name, err)
	}
	for _, side := range []string{AttrsPath(path), SnapshotPath(path), RecordCachePath(path)} {
		if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("storage: delete study %q: %w", name, err)
		}
	}
	// The snapshot's chunks (a directory this package made; a link in
	// its place is removed, not followed).
	if err := os.RemoveAll(SnapshotChunksPath(path)); err != nil {
		return fmt.Errorf("storage: delete study %q: %w", name, err)
	}
	syncDir(path)
	return nil
}

// Close implements [Storage]: it closes every journal.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var errs []error
	for _, s := range d.stores {
		errs = append(errs, s.Close())
	}
	d.stores = nil
	return errors.Join(errs...)
}
