package serve

import (
	"context"
	"encoding/json"
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
	s, err := study.Create(ctx, st, "p", study.Config{Space: sp, Policy: "random", Budget: 5, Seed: 1, Pruner: pc})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{1, 0.5} {
		tr, _ := s.Ask(ctx)
		if _, err := s.Report(ctx, tr.Number, 0, v); err != nil {
			t.Fatal(err)
		}
		if v == 1 {
			if err := s.Tell(ctx, tr.Number, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Trial 1 (0.5 at step 0) is pending.
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
	if code, out := post("/api/studies/p/trials/1/report", `{"step": 1, "value": 0.4}`); code != 200 || out["prune"] != false {
		t.Fatalf("report below the median: %d %v", code, out)
	}
	if code, out := post("/api/studies/p/trials/1/report", `{"step": 2, "value": 3}`); code != 200 || out["prune"] != false {
		t.Fatalf("report at a step no complete trial has: %d %v", code, out)
	}
	tr, _ := s.Ask(ctx)
	if code, out := post("/api/studies/p/trials/"+strconv.Itoa(tr.Number)+"/report", `{"step": 0, "value": 2}`); code != 200 || out["prune"] != true {
		t.Fatalf("report above the median: %d %v, want prune", code, out)
	}
	if code, out := post("/api/studies/p/trials/0/report", `{"step": 5, "value": 1}`); code != http.StatusConflict {
		t.Fatalf("report on a complete trial: %d %v, want 409", code, out)
	}
	if code, out := post("/api/studies/p/trials/1/tell", `{"pruned": true}`); code != 200 || out["state"] != "pruned" {
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
