package serve_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
)

// TestShutdownCheckpoint: a server saves snapshots by the long-lived rule
// (not at every ask), so on a graceful shutdown it saves a snapshot of
// every record of the studies it asked for: the next server restores the
// study instead of replaying the asks since its last due save.
func TestShutdownCheckpoint(t *testing.T) {
	t.Parallel()
	js, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	srv, err := serve.New(serve.Options{Storage: js})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c := &client{t: t, base: "http://" + ln.Addr().String(), http: http.DefaultClient}
	c.must("POST", "/api/studies", map[string]any{"name": "s", "config": testConfig(40)}, nil, http.StatusCreated)
	for i := 0; i < 40; i++ {
		var a asked
		c.must("POST", "/api/studies/s/ask", map[string]any{"n": 1}, &a, http.StatusOK)
		tr := a.Trials[0]
		c.must("POST", fmt.Sprintf("/api/studies/s/trials/%d/tell", tr.Trial), map[string]any{"value": objective(tr.Params), "lease": tr.Lease}, nil, http.StatusOK)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	snap, err := js.LoadSnapshot(context.Background(), "s", false)
	if err != nil {
		t.Fatalf("no snapshot after the shutdown: %v", err)
	}
	if want := 80; snap.Records != want {
		t.Errorf("the snapshot after the shutdown covers %d records, the study has %d", snap.Records, want)
	}
}
