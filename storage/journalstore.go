package storage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// JournalStore is the journal as a [Storage]: one JSON-lines file (the
// format of [Create] and [Open]) holding one study, shared by any number of
// processes on one machine. Every [JournalStore.Update] takes the file's
// exclusive lock (flock(2), the lock Open holds for its whole life), reads
// only what other processes appended since this JournalStore last read,
// runs its function, appends and fsyncs the new records in one write, and
// unlocks; [JournalStore.Records] and [JournalStore.Study] take no lock
// (they read complete lines only, so they may see the first records of an
// Update being written, never part of a record). A process killed in the
// middle of its write leaves an incomplete last line, which the next
// Update cuts off; the complete records before it (a prefix of that
// Update's, each consistent with the ones before) stay.
// The kernel drops the lock of a process that dies, so a killed worker
// never blocks the others.
//
// Stale trials: a pending trial is stale when the Worker of its ask record
// (see [NewWorkerID]) names this host and a process that no longer exists
// (kill(pid, 0) fails with ESRCH). The journal is for one machine, where
// the kernel knows exactly which processes are alive, so heartbeats are not
// needed: [JournalStore.Heartbeat] does nothing, and a worker that is alive
// but stuck is never stale. Trials asked on another host, or without a
// Worker, are never stale. On systems without kill(2), nothing is stale.
// So a process that asks and exits, leaving the evaluation to someone else
// (a one-shot "bkb ask"), must leave Worker empty, or its trial is stale
// as soon as it exits.
//
// The name "" matches the file's study whatever its name (a journal holds
// one study); a header without a name (a journal written by [Create] without
// Header.Name) matches every study name. A [Journal] (from Create or Open)
// holds the file's lock for its whole life: Updates of a JournalStore on
// the same file wait until it is closed (or their context ends).
//
// Its methods are safe for concurrent use.
type JournalStore struct {
	path string
	host string

	mu      sync.Mutex
	f       *os.File // nil until the file is first found
	header  Header
	off     int64 // bytes of the file read so far (complete lines only)
	lines   int   // lines read so far, header included
	records []Record
	tracker *tracker
	closed  bool

	// The records cache (recordcache.go): sum is the CRC-32C of the
	// file's first off bytes; cached the records a cache covers (read or
	// written by this store), decoded the records decoded from JSON lines
	// since; noCache that this store writes no cache: it has appended
	// records (it holds them as written, not as read), or its records do
	// not decode back equal from one.
	sum     uint32
	cached  int
	decoded int
	noCache bool
}

// JournalStoreOptions are the options of [OpenJournalStore]; the zero value
// is the default. There are none yet: the type lets options be added
// without changing OpenJournalStore's signature, which takes them as an
// optional argument.
type JournalStoreOptions struct{}

// OpenJournalStore returns the journal storage of the file path. The file
// need not exist: [JournalStore.CreateStudy] creates it, and the other
// methods fail with [ErrNotFound] until it exists. opts are optional
// (OpenJournalStore(path) takes the defaults); at most one may be given.
func OpenJournalStore(path string, opts ...JournalStoreOptions) (*JournalStore, error) {
	if path == "" {
		return nil, errors.New("storage: journal store: empty path")
	}
	if len(opts) > 1 {
		return nil, fmt.Errorf("storage: journal store: %d options structs, want at most one", len(opts))
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return &JournalStore{path: path, host: host, tracker: newTracker()}, nil
}

// Path returns the journal's file name.
func (s *JournalStore) Path() string { return s.path }

// CreateStudy implements [Storage]: it creates the file with a header
// naming the study. It never overwrites a file: when path exists, it fails
// with an error wrapping [ErrExists] (whatever the file holds). The file
// appears complete or not at all: the header is written to a temporary
// file that is then linked to path.
func (s *JournalStore) CreateStudy(_ context.Context, name string, config json.RawMessage) (Header, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Header{}, fmt.Errorf("storage: %s: journal store is closed", s.path)
	}
	if len(config) == 0 {
		config = json.RawMessage("null")
	}
	h := Header{Version: Version, Created: time.Now().UTC(), Name: name, Config: slices.Clone(config)}
	line, err := json.Marshal(h)
	if err != nil {
		return Header{}, fmt.Errorf("storage: create study %q in %s: header: %w", name, s.path, err)
	}
	line = append(line, '\n')
	if _, err := os.Lstat(s.path); err == nil {
		return Header{}, fmt.Errorf("storage: create study %q: %s: %w (a file exists)", name, s.path, ErrExists)
	}
	tmp, err := createTemp(s.path)
	if err != nil {
		return Header{}, fmt.Errorf("storage: create study %q: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(line)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return Header{}, fmt.Errorf("storage: create study %q in %s: %w", name, s.path, err)
	}
	if err := os.Link(tmp.Name(), s.path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Header{}, fmt.Errorf("storage: create study %q: %s: %w (a file exists)", name, s.path, ErrExists)
		}
		// No hard links on this file system: exclusive create instead
		// (a reader may then see the file before its header).
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			return Header{}, fmt.Errorf("storage: create study %q: %s: %w (a file exists)", name, s.path, ErrExists)
		}
		if err != nil {
			return Header{}, fmt.Errorf("storage: create study %q: %w", name, err)
		}
		_, werr := f.Write(line)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			return Header{}, fmt.Errorf("storage: create study %q in %s: %w", name, s.path, err)
		}
	}
	syncDir(s.path)
	h, _ = parseHeader(bytes.TrimSpace(line))
	return h, nil
}

// createTemp creates a new file beside path, with mode 0666 less the
// umask (a journal is as readable as any file the user creates; the
// umask says by whom), under a random name.
func createTemp(path string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: cannot create a temporary file beside it", path)
}

// open opens the file once; s.mu is held.
func (s *JournalStore) open(name string) error {
	if s.closed {
		return fmt.Errorf("storage: %s: journal store is closed", s.path)
	}
	if s.f != nil {
		return nil
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: study %q: %s: %w", name, s.path, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("storage: study %q: %w", name, err)
	}
	s.f = f
	return nil
}

// catchUp reads the complete lines appended since the last read, checks
// them and adds them to s.records. With locked (the caller holds the
// file's lock, so no write is under way), an incomplete final line is the
// trace of a writer that died: it is cut off, or, if it is a valid record
// that only lacks its '\n', terminated. s.mu is held.
func (s *JournalStore) catchUp(locked bool) error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("storage: %s: %w", s.path, err)
	}
	size := st.Size()
	if size < s.off {
		return fmt.Errorf("storage: %s: the file shrank from %d to %d bytes under this process", s.path, s.off, size)
	}
	if size == s.off {
		return nil
	}
	if s.off == 0 {
		s.fromCache(size)
	}
	buf := make([]byte, size-s.off)
	if _, err := s.f.ReadAt(buf, s.off); err != nil {
		return fmt.Errorf("storage: %s: read: %w", s.path, err)
	}
	// One growth of the records for the lines read, not a doubling
	// series: a long journal is read whole by every command.
	lines := bytes.Count(buf, []byte{'\n'})
	s.records = slices.Grow(s.records, lines)
	if len(s.records) == 0 {
		s.tracker = newTrackerFor(lines)
	}
	s.tracker.completed = slices.Grow(s.tracker.completed, lines/2)
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		complete := i >= 0
		line := buf
		if complete {
			line = buf[:i+1]
		}
		body := bytes.TrimSpace(line)
		lineNo := s.lines + 1
		if !complete {
			if !locked {
				return nil // a write under way: read it next time
			}
			if s.lines > 0 && len(body) > 0 {
				if rec, err := parseRecord(body); err == nil && s.tracker.check(rec) == nil {
					// A complete record without its '\n': keep it, as Open does.
					if _, err := s.f.Write([]byte{'\n'}); err != nil {
						return fmt.Errorf("storage: %s: terminate final line: %w", s.path, err)
					}
					if err := s.f.Sync(); err != nil {
						return fmt.Errorf("storage: %s: sync: %w", s.path, err)
					}
					line = append(line, '\n')
					complete = true
				}
			}
			if !complete {
				if err := s.f.Truncate(s.off); err != nil {
					return fmt.Errorf("storage: %s: cut an incomplete final line: %w", s.path, err)
				}
				if err := s.f.Sync(); err != nil {
					return fmt.Errorf("storage: %s: sync: %w", s.path, err)
				}
				return nil
			}
		}
		lerr := func(err error) error { return &LineError{Path: s.path, Line: lineNo, Err: err} }
		if s.lines == 0 {
			h, err := parseHeader(body)
			if err != nil {
				return lerr(err)
			}
			s.header = h
		} else if len(body) > 0 {
			rec, err := parseRecord(body)
			if err != nil {
				return lerr(fmt.Errorf("invalid record: %w", err))
			}
			if err := s.tracker.addOwned(rec); err != nil {
				return lerr(err)
			}
			s.records = append(s.records, rec)
			s.decoded++
		}
		s.lines++
		s.off += int64(len(line))
		s.sum = crc32.Update(s.sum, castagnoli, line)
		buf = buf[min(len(line), len(buf)):]
	}
	return nil
}

// load opens the file and reads what is new, without the lock, and checks
// that the file holds the study name. s.mu is held.
func (s *JournalStore) load(name string, locked bool) error {
	if err := s.open(name); err != nil {
		return err
	}
	if err := s.catchUp(locked); err != nil {
		return err
	}
	if s.lines == 0 {
		return fmt.Errorf("storage: study %q: %s: no complete header line", name, s.path)
	}
	if name != "" && s.header.Name != "" && s.header.Name != name {
		return fmt.Errorf("storage: study %q: %s holds study %q: %w", name, s.path, s.header.Name, ErrNotFound)
	}
	return nil
}

// Study implements [Storage].
func (s *JournalStore) Study(_ context.Context, name string) (Header, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(name, false); err != nil {
		return Header{}, err
	}
	h := s.header
	h.Config = slices.Clone(h.Config)
	return h, nil
}

// Records implements [Storage]. It takes no lock: a write under way is
// left for the next call.
func (s *JournalStore) Records(_ context.Context, name string, from int) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(name, false); err != nil {
		return nil, err
	}
	return slices.Clone(s.records[min(max(from, 0), len(s.records)):]), nil
}

// lockFile takes the file's exclusive lock, polling (with a short,
// jittered back-off) so that ctx can cancel the wait.
func (s *JournalStore) lockFile(ctx context.Context) (func() error, error) {
	wait := 200 * time.Microsecond
	for {
		unlock, err := lock(s.f)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("storage: %s: %w", s.path, err)
		}
		d := wait/2 + rand.N(wait)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("storage: %s: waiting for the lock: %w", s.path, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// stale lists the pending trials asked by a process of this host that is
// gone. s.mu is held.
func (s *JournalStore) stale() []int {
	var out []int
	for trial, ask := range s.tracker.pending {
		host, pid, ok := ParseWorkerID(ask.Worker)
		if ok && host == s.host && processGone(pid) {
			out = append(out, trial)
		}
	}
	slices.Sort(out)
	return out
}

// Update implements [Storage]; see [JournalStore] for the locking and for
// which trials are stale.
func (s *JournalStore) Update(ctx context.Context, name string, from int, fn func(View) ([]Record, error)) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(name); err != nil {
		return nil, err
	}
	unlock, err := s.lockFile(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unlock() }()
	if err := s.load(name, true); err != nil {
		return nil, err
	}
	s.writeCacheDue()
	from = min(max(from, 0), len(s.records))
	out, err := fn(View{From: from, New: slices.Clone(s.records[from:]), Stale: s.stale()})
	if err != nil {
		return nil, err
	}
	add, result, err := admit(s.tracker, out, time.Now())
	if err != nil {
		return nil, fmt.Errorf("storage: study %q: %s: %w", name, s.path, err)
	}
	// The tracker holds add until they are stored: a failure below takes
	// them back.
	defer s.tracker.rollback()
	if len(add) == 0 {
		return result, nil
	}
	var buf []byte
	for _, r := range add {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("storage: study %q: %s: %w", name, s.path, err)
		}
		buf = append(append(buf, line...), '\n')
	}
	// One write, so that other processes see the records together; a
	// failed write is rolled back.
	if _, err := s.f.Write(buf); err != nil {
		_ = s.f.Truncate(s.off)
		return nil, fmt.Errorf("storage: study %q: append to %s: %w", name, s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		_ = s.f.Truncate(s.off)
		return nil, fmt.Errorf("storage: study %q: append to %s: sync: %w", name, s.path, err)
	}
	s.off += int64(len(buf))
	s.sum = crc32.Update(s.sum, castagnoli, buf)
	s.lines += len(add)
	s.records = append(s.records, add...)
	s.tracker.commit()
	s.noCache = true
	return result, nil
}

// fromCache takes the records of the journal's records cache when it
// covers the start of the file, of size bytes: it checks the cache's
// checksum against the file's first bytes, read a piece at a time (a long
// study's journal is tens of MB that need not be held whole), parses the
// header line, adds the cached records and sets s.off past them. Without a
// cache that matches, it leaves s as it is, and catchUp decodes every
// line. s.mu is held; nothing has been read yet.
func (s *JournalStore) fromCache(size int64) {
	raw, err := readRegular(RecordCachePath(s.path), size*4+1<<20)
	if err != nil {
		return
	}
	c, err := decodeRecordCache(raw)
	if err != nil || c.off > size {
		return
	}
	prefix := io.NewSectionReader(s.f, 0, c.off)
	sum := crc32.New(castagnoli)
	br := bufio.NewReaderSize(io.TeeReader(prefix, sum), 1<<20)
	first, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull { // a header line longer than the buffer
		first = slices.Clone(first)
		var more []byte
		if more, err = br.ReadBytes('\n'); err == nil {
			first = append(first, more...)
		}
	}
	if err != nil {
		return // no complete header line within the cached bytes
	}
	h, err := parseHeader(bytes.TrimSpace(first))
	if err != nil {
		return
	}
	if _, err := io.Copy(io.Discard, br); err != nil || sum.Sum32() != c.sum {
		return
	}
	t := newTrackerFor(len(c.records))
	for _, r := range c.records {
		if t.addOwned(r) != nil {
			return
		}
	}
	s.header, s.records, s.tracker = h, c.records, t
	s.off, s.lines, s.sum, s.cached = c.off, c.lines, c.sum, len(c.records)
}

// writeCacheDue writes the records cache when this store decoded enough
// JSON lines since the last one (cacheMinLines, and an eighth of what the
// cache covers) and may write one (noCache). A cache that cannot
// be written is skipped: it only saves time. s.mu and the file's lock are
// held.
func (s *JournalStore) writeCacheDue() {
	if s.noCache || s.decoded < max(cacheMinLines, s.cached/8) {
		return
	}
	if err := s.writeCache(); errors.Is(err, errInexactCache) {
		s.noCache = true
	}
}

// errInexactCache: the records do not decode back equal from a cache.
var errInexactCache = errors.New("its records do not decode back equal from a cache (a time in a zone written otherwise): no cache")

// writeCache writes the records cache of what the store has read. s.mu
// is held.
func (s *JournalStore) writeCache() error {
	b, ok := recordCacheFor(s.off, s.lines, s.sum, s.records)
	if !ok {
		return errInexactCache
	}
	if err := writeFileVia(s.path, RecordCachePath(s.path), [][]byte{b}); err != nil {
		return err
	}
	s.cached, s.decoded = len(s.records), 0
	return nil
}

// Heartbeat implements [Storage]. It does nothing: on one machine a trial's
// worker is alive exactly while its process is (see [JournalStore]).
func (s *JournalStore) Heartbeat(context.Context, string, []int) error { return nil }

// Close implements [Storage]: it closes the file. Calling it again returns
// nil.
func (s *JournalStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.f == nil {
		return nil
	}
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", s.path, err)
	}
	return nil
}
