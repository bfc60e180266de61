package main

import (
	"strings"
	"testing"
)

// TestWarpFlag: --warp auto fits a transform to Goldstein-Price's values
// (which span 3 to 1e6 over the box) and reports it, in the text and the
// JSON output; a bad value is one clear error line.
func TestWarpFlag(t *testing.T) {
	t.Parallel()
	r := runBKB(t, nil, "optimize", "-f", "goldsteinprice", "-T", "25", "--warp", "auto")
	if r.code != 0 || !strings.Contains(r.stdout, "output warp: box-cox lambda=") {
		t.Fatalf("exit %d, no warp reported:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBKB(t, nil, "optimize", "-f", "goldsteinprice", "-T", "25", "--warp", "log", "--json")
	if res := decodeResult(t, r.stdout); res.Warp == nil || res.Warp.Kind != "box-cox" || res.Warp.Lambda != 0 {
		t.Fatalf("--warp log: warp %+v", res.Warp)
	}
	r = runBKB(t, nil, "optimize", "-f", "goldsteinprice", "-T", "25")
	if strings.Contains(r.stdout, "output warp") {
		t.Errorf("a default (version 4) study reports a warp:\n%s", r.stdout)
	}
	checkOneErrorLine(t, runBKB(t, nil, "optimize", "-f", "branin", "-T", "5", "--warp", "boxcox"), `warp "boxcox"`)
}
