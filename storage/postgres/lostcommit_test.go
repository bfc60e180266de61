package postgres_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// cutProxy forwards TCP connections to a server; once armed, it forwards
// the next client message holding "commit", lets the server act on it,
// and cuts the connection before the answer reaches the client: the
// client cannot know whether its transaction committed.
type cutProxy struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	cuts   atomic.Int32
	wg     sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if bytes.Contains(bytes.ToLower(buf[:n]), []byte("commit\x00")) && p.armed.CompareAndSwap(true, false) {
				p.cuts.Add(1)
				_ = c.Close() // the client sees the connection lost ...
				_, _ = s.Write(buf[:n])
				time.Sleep(200 * time.Millisecond) // ... and the server commits
				return
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestLostCommit: an Update whose commit succeeded on the server but whose
// answer was lost with the connection is recognized on the retry as
// stored: fn is not run again and no second ask is stored.
func TestLostCommit(t *testing.T) {
	u := newSchema(t)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, pu.Host)
	pu.Host = proxy.ln.Addr().String()
	s := openStore(t, pu.String(), postgres.Options{})
	ctx := context.Background()
	if _, err := s.CreateStudy(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	calls := 0
	proxy.armed.Store(true)
	out, err := s.Update(ctx, "s", 0, func(v storage.View) ([]storage.Record, error) {
		calls++
		return []storage.Record{{Kind: storage.KindAsk, Trial: len(v.New), Arm: -1, X: []float64{1}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if proxy.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d commits, want 1", proxy.cuts.Load())
	}
	recs, err := s.Records(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(recs) != 1 || len(out) != 1 || out[0].Trial != 0 {
		t.Fatalf("fn called %d times, %d records stored, returned %+v; want 1, 1, trial 0", calls, len(recs), out)
	}
}
