//go:build unix

package serve_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// benchStudy creates the study name with n complete trials (imported) in
// the directory catalog d, and runs one ask and tell so that the policy
// has fitted its kernel before the timing starts.
func benchStudy(b *testing.B, d storage.Storage, name string, n int) *study.Study {
	ctx := context.Background()
	space, err := study.NewSpace(study.Float("x", -2, 2), study.LogFloat("lr", 1e-4, 1), study.Int("depth", 1, 8), study.Categorical("kernel", "rbf", "linear", "poly"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := study.Create(ctx, d, name, study.Config{Space: space, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	kernels := []string{"rbf", "linear", "poly"}
	for range n {
		x, lr, depth, k := -2+4*r.Float64(), math.Exp(math.Log(1e-4)*r.Float64()), 1+r.IntN(8), r.IntN(3)
		fmt.Fprintf(&sb, "%g,%g,%d,%s,%g\n", x, lr, depth, kernels[k], benchValue(x, lr, depth, k))
	}
	if _, err := s.ImportCSV(ctx, strings.NewReader(sb.String()), "bench.csv"); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchValue(x, lr float64, depth, k int) float64 {
	return (x-0.5)*(x-0.5) + 0.3*math.Abs(math.Log10(lr)+2) + 0.02*float64(depth) + 0.4*float64(k)
}

func paramValue(p map[string]any) float64 {
	k := map[string]int{"rbf": 0, "linear": 1, "poly": 2}[p["kernel"].(string)]
	return benchValue(p["x"].(float64), p["lr"].(float64), int(p["depth"].(float64)), k)
}

// BenchmarkAskTell measures one ask and one tell on a 1,000-trial study,
// over HTTP through the server and, alternating with it in the same run,
// through the library on an identical copy of the study: p50 and p99 of
// each, in milliseconds. Storages: memory (the policy and HTTP alone) and
// journal (a directory of journals: every ask and tell fsynced).
//
//	GOMAXPROCS=1 go test -run '^$' -bench AskTell -benchtime 100x ./serve/
func BenchmarkAskTell(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchAskTell(b, storage.NewMemory()) })
	b.Run("journal", func(b *testing.B) {
		d, err := storage.OpenDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		benchAskTell(b, d)
	})
}

func benchAskTell(b *testing.B, d storage.Storage) {
	ctx := context.Background()
	lib := benchStudy(b, d, "lib", 1000)
	benchStudy(b, d, "http", 1000)
	srv, err := serve.New(serve.Options{Storage: d})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &client{t: b, base: ts.URL, http: ts.Client()}

	httpStep := func() {
		var a asked
		c.must("POST", "/api/studies/http/ask", nil, &a, 200)
		tr := a.Trials[0]
		c.must("POST", fmt.Sprintf("/api/studies/http/trials/%d/tell", tr.Trial), map[string]any{"value": paramValue(tr.Params), "lease": tr.Lease}, nil, 200)
	}
	libStep := func() {
		t, err := lib.Ask(ctx)
		if err != nil {
			b.Fatal(err)
		}
		p := map[string]any{"x": t.Params.Float("x"), "lr": t.Params.Float("lr"), "depth": float64(t.Params.Int("depth")), "kernel": t.Params.String("kernel")}
		if err := lib.Tell(ctx, t.Number, paramValue(p)); err != nil {
			b.Fatal(err)
		}
	}
	httpStep() // the first asks fit the kernel on the imported trials
	libStep()
	// Wall time, and this process's CPU time (user + system, all threads:
	// the server's and the client's side of HTTP), which a machine shared
	// with other work does not inflate.
	var th, tl, ch, cl []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), cpuMs()
		httpStep()
		t1, c1 := time.Now(), cpuMs()
		libStep()
		t2, c2 := time.Now(), cpuMs()
		th = append(th, t1.Sub(t0).Seconds()*1e3)
		tl = append(tl, t2.Sub(t1).Seconds()*1e3)
		ch = append(ch, c1-c0)
		cl = append(cl, c2-c1)
	}
	b.StopTimer()
	q := func(x []float64, p float64) float64 {
		s := slices.Clone(x)
		slices.Sort(s)
		return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
	}
	b.ReportMetric(q(th, 0.5), "http-p50-ms")
	b.ReportMetric(q(th, 0.99), "http-p99-ms")
	b.ReportMetric(q(tl, 0.5), "lib-p50-ms")
	b.ReportMetric(q(tl, 0.99), "lib-p99-ms")
	b.ReportMetric(q(ch, 0.5), "http-cpu-p50-ms")
	b.ReportMetric(q(ch, 0.99), "http-cpu-p99-ms")
	b.ReportMetric(q(cl, 0.5), "lib-cpu-p50-ms")
	b.ReportMetric(q(cl, 0.99), "lib-cpu-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// cpuMs is the process's CPU time so far, in milliseconds.
func cpuMs() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}
