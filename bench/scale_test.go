package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestScaleSmall runs the scaling experiment on a small problem: the
// incremental variants must choose the same arms as the rebuilt ones
// (equal cumulative regret at every checkpoint) and BKB's dictionary must
// stay below t.
func TestScaleSmall(t *testing.T) {
	rows, bw, err := Scale(context.Background(), ScaleConfig{Arms: []int{500}, Checkpoints: []int{50, 100}, Seed: 3, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !(bw > 0) {
		t.Fatalf("bandwidth %v", bw)
	}
	byKey := map[string]ScaleRow{}
	for _, r := range rows {
		byKey[fmt.Sprint(r.Variant, r.T)] = r
	}
	for _, t0 := range []int{50, 100} {
		g, gr := byKey[fmt.Sprint("gp-ucb", t0)], byKey[fmt.Sprint("gp-ucb-rebuild", t0)]
		b, br := byKey[fmt.Sprint("bkb", t0)], byKey[fmt.Sprint("bkb-rebuild", t0)]
		if g.CumRegret != gr.CumRegret || b.CumRegret != br.CumRegret {
			t.Errorf("t=%d: incremental and rebuilt regrets differ: gp-ucb %v/%v, bkb %v/%v", t0, g.CumRegret, gr.CumRegret, b.CumRegret, br.CumRegret)
		}
		if b.DictionarySize >= t0 {
			t.Errorf("t=%d: BKB dictionary %d", t0, b.DictionarySize)
		}
	}
	var sb strings.Builder
	if err := WriteScaleMarkdown(&sb, rows, bw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "| bkb | 500 | 100 |") {
		t.Errorf("table misses the bkb row:\n%s", sb.String())
	}
}

// TestScaleTable is the full experiment of docs/scaling.md (about 15
// minutes); it runs only with BKB_SCALE=1.
func TestScaleTable(t *testing.T) {
	if os.Getenv("BKB_SCALE") == "" {
		t.Skip("set BKB_SCALE=1 to run the full scaling experiment")
	}
	rows, bw, err := Scale(context.Background(), ScaleConfig{
		Arms: []int{1000, 10000, 100000}, Checkpoints: []int{100, 500, 1000, 2000, 5000},
		LengthScale: 0.2, Seed: 1, Budget: 90 * time.Second,
		Progress: func(s string) { fmt.Fprintln(os.Stderr, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	WriteScaleMarkdown(os.Stdout, rows, bw)
}
