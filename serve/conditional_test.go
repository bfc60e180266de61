package serve_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/serve"
)

// condConfig chooses a kernel: "poly" has an integer degree, whose values
// 3 and 4 have a coef0 (a chained condition); "rbf" has a log-scale gamma.
// The space is in the space file's format, as clients send it.
func condConfig(budget int) map[string]any {
	return map[string]any{
		"space": map[string]any{"params": []any{
			map[string]any{"name": "kernel", "type": "categorical", "choices": []any{"rbf", "poly"}},
			map[string]any{"name": "degree", "type": "int", "low": 2, "high": 5, "condition": map[string]any{"parent": "kernel", "values": []any{"poly"}}},
			map[string]any{"name": "coef0", "low": 0, "high": 1, "condition": map[string]any{"parent": "degree", "values": []any{3, 4}}},
			map[string]any{"name": "gamma", "low": 1e-3, "high": 1, "log": true, "condition": map[string]any{"parent": "kernel", "values": []any{"rbf"}}},
			map[string]any{"name": "c", "low": -1, "high": 1},
		}},
		"budget": budget,
		"seed":   3,
	}
}

// condActive is the active set of the params p of condConfig.
func condActive(p map[string]any) []string {
	out := []string{"c", "kernel"}
	if p["kernel"] == "rbf" {
		out = append(out, "gamma")
	} else {
		out = append(out, "degree")
		if d := p["degree"]; d == 3.0 || d == 4.0 {
			out = append(out, "coef0")
		}
	}
	sort.Strings(out)
	return out
}

func paramNames(p map[string]any) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestConditionalSpace: a study created over HTTP with a conditional
// space asks trials whose params are their active parameters only, the
// trials and the study's space show the same, and a bad condition is a
// 400 naming the parameter.
func TestConditionalSpace(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	bad := condConfig(5)
	bad["space"].(map[string]any)["params"].([]any)[2].(map[string]any)["condition"] = map[string]any{"parent": "degre", "values": []any{3}}
	if code, raw := c.do("POST", "/api/studies", map[string]any{"name": "bad", "config": bad}, nil); code != http.StatusBadRequest || !strings.Contains(raw, `parameter \"coef0\": condition: parent \"degre\" is not a parameter`) {
		t.Errorf("a condition naming a missing parent: %d %s", code, raw)
	}
	c.must("POST", "/api/studies", map[string]any{"name": "cond", "config": condConfig(16)}, nil, http.StatusCreated)
	for range 4 {
		var a asked
		c.must("POST", "/api/studies/cond/ask", map[string]any{"n": 4}, &a, http.StatusOK)
		for _, tr := range a.Trials {
			if got, want := paramNames(tr.Params), condActive(tr.Params); !slices.Equal(got, want) {
				t.Errorf("trial %d: params %v, want the active set %v", tr.Trial, tr.Params, want)
			}
			v := tr.Params["c"].(float64) * tr.Params["c"].(float64)
			if g, ok := tr.Params["gamma"].(float64); ok {
				v += g
			}
			c.must("POST", fmt.Sprintf("/api/studies/cond/trials/%d/tell", tr.Trial), map[string]any{"value": v, "lease": tr.Lease}, nil, http.StatusOK)
		}
	}
	var trials struct {
		Trials []serve.TrialJSON `json:"trials"`
	}
	c.must("GET", "/api/studies/cond/trials", nil, &trials, http.StatusOK)
	if len(trials.Trials) != 16 {
		t.Fatalf("%d trials, want 16", len(trials.Trials))
	}
	for _, tr := range trials.Trials {
		if got, want := paramNames(tr.Params), condActive(tr.Params); !slices.Equal(got, want) {
			t.Errorf("listed trial %d: params %v, want %v", tr.Number, tr.Params, want)
		}
	}
	raw := c.must("GET", "/api/studies/cond", nil, nil, http.StatusOK)
	if !strings.Contains(raw, `"condition":{"parent":"degree","values":[3,4]}`) {
		t.Errorf("the study's space has lost its conditions: %s", raw)
	}
}
