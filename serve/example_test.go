package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
)

// A server on an in-memory storage: a client creates a study, asks a
// trial and tells its value with the trial's lease, as the Python client
// and `curl` do (JSON bodies, the lease from the ask).
func Example() {
	srv, err := serve.New(serve.Options{Storage: storage.NewMemory()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	post := func(path string, body any, out any) int {
		b, _ := json.Marshal(body)
		resp, err := ts.Client().Post(ts.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	space := map[string]any{"params": []map[string]any{{"name": "x", "type": "float", "low": -2, "high": 2}}}
	fmt.Println(post("/api/studies", map[string]any{"name": "demo", "config": map[string]any{"space": space, "budget": 5, "seed": 1}}, nil))
	var asked serve.AskResponse
	post("/api/studies/demo/ask", map[string]any{"n": 1}, &asked)
	tr := asked.Trials[0]
	x := tr.Params["x"].(float64)
	fmt.Println(tr.Number, post(fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Number), map[string]any{"value": x * x, "lease": tr.Lease}, nil))
	fmt.Println(post(fmt.Sprintf("/api/studies/demo/trials/%d/tell", tr.Number), map[string]any{"value": 1.0}, nil) == http.StatusConflict)
	// Output:
	// 201
	// 0 200
	// true
}
