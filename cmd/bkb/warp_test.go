package main

import (
	"os"
	"path/filepath"
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
	// The default (version 8) warps Goldstein-Price too; version 4 and
	// --warp none do not, and say nothing of a warp.
	r = runBKB(t, nil, "optimize", "-f", "goldsteinprice", "-T", "25")
	if r.code != 0 || !strings.Contains(r.stdout, "output warp: box-cox lambda=") {
		t.Errorf("a default study reports no warp:\n%s%s", r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"--config-version", "4"}, {"--warp", "none"}} {
		r = runBKB(t, nil, append([]string{"optimize", "-f", "goldsteinprice", "-T", "25"}, args...)...)
		if r.code != 0 || strings.Contains(r.stdout, "output warp") {
			t.Errorf("%v: exit %d, a warp reported:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	checkOneErrorLine(t, runBKB(t, nil, "optimize", "-f", "branin", "-T", "5", "--warp", "boxcox"), `warp "boxcox"`)
}

// TestWarpSpaceFile: a space file may carry "warp" beside its parameters;
// --warp may repeat it but not contradict it.
func TestWarpSpaceFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, warp string) string {
		p := filepath.Join(dir, name)
		body := `{"params":[{"name":"a","low":-2,"high":2},{"name":"b","low":-2,"high":2}],"warp":` + warp + `}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("log.json", `"log"`)
	r := runBKB(t, nil, "optimize", "-f", "goldsteinprice", "--space", good, "-T", "25", "--json")
	if res := decodeResult(t, r.stdout); r.code != 0 || res.Warp == nil || res.Warp.Lambda != 0 {
		t.Fatalf("exit %d, warp %+v: %s", r.code, res.Warp, r.stderr)
	}
	if r := runBKB(t, nil, "optimize", "-f", "goldsteinprice", "--space", good, "-T", "5", "--warp", "log"); r.code != 0 {
		t.Errorf("--warp log with the file's log: exit %d: %s", r.code, r.stderr)
	}
	checkOneErrorLine(t, runBKB(t, nil, "optimize", "-f", "goldsteinprice", "--space", good, "-T", "5", "--warp", "none"), "differ")
	checkOneErrorLine(t, runBKB(t, nil, "optimize", "-f", "goldsteinprice", "--space", write("bad.json", "3"), "-T", "5"), `"warp" must be`)
	checkOneErrorLine(t, runBKB(t, nil, "optimize", "-f", "goldsteinprice", "--space", write("bad2.json", `"cube"`), "-T", "5"), `warp "cube"`)
}
