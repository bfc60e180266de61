package plugin

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

const (
	tailLines    = 8   // stderr lines quoted in crash reports
	tailLineMax  = 300 // bytes kept of each quoted line
	partialLimit = 1 << 16
)

// stderrSink receives a plugin's stderr: it copies complete lines, prefixed,
// to an optional writer (serialized by a mutex shared by all children of one
// Process) and remembers the last few lines for error messages.
type stderrSink struct {
	out    io.Writer   // may be nil
	outMu  *sync.Mutex // guards out
	prefix string

	mu      sync.Mutex
	partial []byte
	tail    []string
}

func (s *stderrSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.partial = append(s.partial, b...)
			if len(s.partial) >= partialLimit {
				s.emit(s.partial)
				s.partial = s.partial[:0]
			}
			break
		}
		if len(s.partial) > 0 {
			s.partial = append(s.partial, b[:i]...)
			s.emit(s.partial)
			s.partial = s.partial[:0]
		} else {
			s.emit(b[:i])
		}
		b = b[i+1:]
	}
	return n, nil
}

// Flush emits a final line that lacks its newline.
func (s *stderrSink) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.emit(s.partial)
		s.partial = s.partial[:0]
	}
}

// emit handles one complete line; s.mu is held.
func (s *stderrSink) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if s.out != nil {
		buf := make([]byte, 0, len(s.prefix)+len(line)+1)
		buf = append(buf, s.prefix...)
		buf = append(buf, line...)
		buf = append(buf, '\n')
		s.outMu.Lock()
		_, _ = s.out.Write(buf) // a failing log writer must not fail evaluations
		s.outMu.Unlock()
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if len(s.tail) == tailLines {
		copy(s.tail, s.tail[1:])
		s.tail = s.tail[:tailLines-1]
	}
	s.tail = append(s.tail, truncate(string(line), tailLineMax))
}

// Tail returns the last lines of stderr joined by " | ", "" if none.
func (s *stderrSink) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, " | ")
}
