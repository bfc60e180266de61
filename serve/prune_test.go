package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// TestReportPrune: a report over HTTP is stored in the study's records
// and answered with the pruner's decision; a pruned trial is told with
// "pruned", then refuses reports (409) and shows in the trial list with
// its intermediate values.
func TestReportPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storage.NewMemory()
	sp, _ := study.Box(nil, []float64{0}, []float64{1})
	pc, _ := pruner.ParseFlag("median:startup=1")
	if _, err := study.Create(ctx, st, "p", study.Config{Space: sp, Policy: "random", Budget: 5, Seed: 1, Pruner: pc}); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(path, body string) (int, map[string]any) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	// ask hands out one trial and returns its number and lease.
	ask := func() (string, string) {
		code, out := post("/api/studies/p/ask", "")
		trials, _ := out["trials"].([]any)
		if code != 200 || len(trials) != 1 {
			t.Fatalf("ask: %d %v", code, out)
		}
		tr := trials[0].(map[string]any)
		return strconv.Itoa(int(tr["trial"].(float64))), tr["lease"].(string)
	}
	report := func(trial, lease string, step int, v float64) (int, map[string]any) {
		return post("/api/studies/p/trials/"+trial+"/report", fmt.Sprintf(`{"step": %d, "value": %v, "lease": %q}`, step, v, lease))
	}
	// Trial 0 reports 1 at step 0 and completes with 1; trial 1 reports
	// 0.5 at step 0 and stays pending.
	t0, l0 := ask()
	t1, l1 := ask()
	if code, out := report(t0, l0, 0, 1); code != 200 {
		t.Fatalf("report: %d %v", code, out)
	}
	if code, out := post("/api/studies/p/trials/"+t0+"/tell", fmt.Sprintf(`{"value": 1, "lease": %q}`, l0)); code != 200 {
		t.Fatalf("tell: %d %v", code, out)
	}
	if code, out := report(t1, l1, 0, 0.5); code != 200 {
		t.Fatalf("report: %d %v", code, out)
	}
	if code, out := report(t1, l1, 1, 0.4); code != 200 || out["prune"] != false {
		t.Fatalf("report below the median: %d %v", code, out)
	}
	if code, out := report(t1, l1, 2, 3); code != 200 || out["prune"] != false {
		t.Fatalf("report at a step no complete trial has: %d %v", code, out)
	}
	t2, l2 := ask()
	if code, out := report(t2, l2, 0, 2); code != 200 || out["prune"] != true {
		t.Fatalf("report above the median: %d %v, want prune", code, out)
	}
	if code, out := report(t2, l1, 0, 2); code != http.StatusForbidden {
		t.Fatalf("report with another trial's lease: %d %v, want 403", code, out)
	}
	if code, out := report(t0, "", 5, 1); code != http.StatusConflict {
		t.Fatalf("report on a complete trial: %d %v, want 409", code, out)
	}
	if code, out := post("/api/studies/p/trials/1/tell", fmt.Sprintf(`{"pruned": true, "lease": %q}`, l1)); code != 200 || out["state"] != "pruned" {
		t.Fatalf("tell pruned: %d %v", code, out)
	}
	if code, _ := post("/api/studies/p/trials/1/tell", `{"pruned": true, "value": 1}`); code != http.StatusBadRequest {
		t.Fatalf("tell with pruned and value: %d, want 400", code)
	}
	resp, err := http.Get(srv.URL + "/api/studies/p/trials")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Trials []TrialJSON `json:"trials"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if got := list.Trials[1]; got.State != study.Pruned || len(got.Intermediate) != 3 || got.Intermediate["1"] != 0.4 {
		t.Errorf("trial 1 in the list: %+v", got)
	}
}
