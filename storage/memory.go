package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is a Storage held in this process's memory: for tests, and for Go
// callers who keep their own records. It forgets everything when the
// process ends. Its methods are safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	studies map[string]*memStudy
	attrs   map[string][]Attr // by study: every SetAttr, oldest first
}

type memStudy struct {
	header  Header
	records []Record
	tracker *tracker
}

// NewMemory returns an empty in-memory storage.
func NewMemory() *Memory { return &Memory{studies: map[string]*memStudy{}} }

// CreateStudy implements Storage.
func (m *Memory) CreateStudy(_ context.Context, name string, config json.RawMessage) (Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.studies[name]; ok {
		return Header{}, fmt.Errorf("storage: study %q: %w", name, ErrExists)
	}
	if len(config) == 0 {
		config = json.RawMessage("null")
	}
	h := Header{Version: Version, Created: time.Now().UTC(), Name: name, Config: slices.Clone(config)}
	m.studies[name] = &memStudy{header: h, tracker: newTracker()}
	return h, nil
}

func (m *Memory) study(name string) (*memStudy, error) {
	s, ok := m.studies[name]
	if !ok {
		return nil, fmt.Errorf("storage: study %q: %w", name, ErrNotFound)
	}
	return s, nil
}

// Study implements Storage.
func (m *Memory) Study(_ context.Context, name string) (Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.study(name)
	if err != nil {
		return Header{}, err
	}
	h := s.header
	h.Config = slices.Clone(h.Config)
	return h, nil
}

// Records implements Storage.
func (m *Memory) Records(_ context.Context, name string, from int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.study(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(s.records[min(max(from, 0), len(s.records)):]), nil
}

// Update implements Storage. A Memory has no workers to lose: View.Stale
// is always empty.
func (m *Memory) Update(_ context.Context, name string, from int, fn func(View) ([]Record, error)) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.study(name)
	if err != nil {
		return nil, err
	}
	from = min(max(from, 0), len(s.records))
	out, err := fn(View{From: from, New: slices.Clone(s.records[from:])})
	if err != nil {
		return nil, err
	}
	add, result, err := admit(s.tracker, out, time.Now())
	if err != nil {
		return nil, fmt.Errorf("storage: study %q: %w", name, err)
	}
	s.tracker.commit()
	s.records = append(s.records, add...)
	return result, nil
}

// Heartbeat implements Storage; a Memory has nothing to record.
func (m *Memory) Heartbeat(context.Context, string, []int) error { return nil }

// Close implements Storage.
func (m *Memory) Close() error { return nil }
