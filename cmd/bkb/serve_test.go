package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// dashboardStudy creates, in the directory dir, the study name of trials
// complete trials (imported evaluations of a known function) and a budget
// a little larger.
func dashboardStudy(t testing.TB, dir, name string, trials int) {
	t.Helper()
	ctx := context.Background()
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	space, err := study.NewSpace(study.Float("x", -2, 2), study.LogFloat("lr", 1e-4, 1), study.Int("depth", 1, 8), study.Categorical("kernel", "rbf", "linear", "poly"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Create(ctx, d, name, study.Config{Space: space, Budget: trials + 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("x,lr,depth,kernel,value\n")
	kernels := []string{"rbf", "linear", "poly"}
	for range trials {
		x, lr, depth, k := -2+4*r.Float64(), math.Exp(math.Log(1e-4)*r.Float64()), 1+r.IntN(8), r.IntN(3)
		v := (x-0.5)*(x-0.5) + 0.3*math.Abs(math.Log10(lr)+2) + 0.02*float64(depth) + 0.4*float64(k) + 0.05*r.NormFloat64()
		fmt.Fprintf(&b, "%g,%g,%d,%s,%g\n", x, lr, depth, kernels[k], v)
	}
	if _, err := s.ImportCSV(ctx, strings.NewReader(b.String()), "trials.csv"); err != nil {
		t.Fatal(err)
	}
}

// TestServeCLI checks studies, set-attr and delete-study on a directory,
// and that serve refuses a non-loopback address without a token.
func TestServeCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dashboardStudy(t, dir, "alpha", 20)
	bkb := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != want {
			t.Fatalf("bkb %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	out := bkb(0, "studies", "--dir", dir)
	if !strings.Contains(out, "alpha") || !strings.Contains(out, "20") {
		t.Fatalf("studies:\n%s", out)
	}
	bkb(0, "set-attr", "--dir", dir, "--study", "alpha", "--key", "owner", "--value", "ann")
	bkb(0, "set-attr", "--dir", dir, "--study", "alpha", "--key", "note", "--value", `{"gpu": 2}`, "--trial", "3")
	bkb(2, "set-attr", "--dir", dir, "--study", "alpha", "--key", "note", "--value", "1", "--trial", "99")
	bkb(2, "set-attr", "--dir", dir, "--study", "../alpha", "--key", "k", "--value", "1")
	d, _ := storage.OpenDir(dir)
	attrs, err := d.Attrs(context.Background(), "alpha")
	d.Close()
	if err != nil || len(attrs) != 2 || string(attrs[0].Value) != `"ann"` || string(attrs[1].Value) != `{"gpu":2}` {
		t.Fatalf("attributes %+v, %v", attrs, err)
	}
	out = bkb(0, "studies", "--dir", dir, "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0]["complete"] != 20.0 {
		t.Fatalf("studies --json: %s (%v)", out, err)
	}
	// A single journal file.
	journal, _ := d.JournalPath("alpha")
	bkb(0, "set-attr", "--study", journal, "--key", "owner", "--value", "bob")
	js, _ := storage.OpenJournalStore(journal, storage.JournalStoreOptions{})
	attrs, err = js.Attrs(context.Background(), "")
	js.Close()
	if err != nil || len(attrs) != 2 || string(attrs[0].Value) != `"bob"` { // owner replaced
		t.Fatalf("attributes of the journal file: %+v, %v", attrs, err)
	}
	bkb(2, "delete-study", "--dir", dir, "--study", "nope")
	bkb(0, "delete-study", "--dir", dir, "--study", "alpha")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files left after delete-study: %v", ents)
	}
	out = bkb(2, "serve", "--dir", dir, "--addr", "0.0.0.0:0")
	if !strings.Contains(out, "token") {
		t.Fatalf("serve off loopback without a token: %s", out)
	}
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("\n"), 0o600)
	bkb(2, "serve", "--dir", dir, "--addr", "0.0.0.0:0", "--token-file", tok)
	bkb(2, "serve", "--dir", dir, "--storage", "postgres://u:hunter2@h/db")
	out = bkb(2, "studies", "--storage", "mysql://u:hunter2@h/db")
	if strings.Contains(out, "hunter2") {
		t.Fatalf("a password printed: %s", out)
	}
}
