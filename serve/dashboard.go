package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// static holds the dashboard: its page, script and the vendored chart
// library (uPlot, MIT licence: static/vendor/uPlot.LICENSE), embedded so
// that the dashboard works offline, without a CDN.
//
//go:embed static
var static embed.FS

//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the OpenAPI document of the API.
func OpenAPI() []byte { return append([]byte(nil), openapiJSON...) }

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openapiJSON)
}

// dashboardRoutes serves the page at / and its files at /static/.
func (s *Server) dashboardRoutes(m *http.ServeMux) {
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	m.Handle("GET /static/", http.StripPrefix("/static/", files))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page, err := fs.ReadFile(sub, "index.html")
		if err != nil {
			s.fail(w, http.StatusInternalServerError, "dashboard missing from the build")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'")
		w.Write(page)
	})
}
