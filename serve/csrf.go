package serve

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Cross-site requests. A browser lets any web page send a "simple"
// request (a POST with Content-Type text/plain, say) to any address,
// loopback included, without asking the server first; it only hides the
// answer from the page. A token-less server on loopback would then take
// asks and tells from every page its user visits. So every request that
// changes state (any method but GET, HEAD and OPTIONS) is refused (403)
// when the browser says it comes from another site: an Origin header
// whose scheme://host:port is not the server's own (or is "null"), or
// Sec-Fetch-Site "cross-site" or "same-site" (another port of the same
// host is another site's page as far as this server is concerned). A body
// must be declared application/json (415 otherwise): a page cannot send
// that type across origins without the CORS preflight, which this server
// answers only for Options.AllowOrigins. Programs (curl, the Python
// client, bkb) send no Origin header and are not affected.

// stateChanging reports whether a request method may change state.
func stateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// checkOrigins validates Options.AllowOrigins: each an origin
// "scheme://host[:port]" with scheme http or https, nothing else.
func checkOrigins(origins []string) ([]string, error) {
	var out []string
	for _, o := range origins {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if o == "" {
			continue
		}
		n, ok := normalOrigin(o)
		if !ok {
			return nil, fmt.Errorf("serve: allowed origin %q: want scheme://host[:port] with scheme http or https (no path, no \"*\")", o)
		}
		out = append(out, n)
	}
	return out, nil
}

// normalOrigin returns an origin as scheme://host:port in lower case,
// with the scheme's default port made explicit; ok is false for anything
// that is not an http or https origin.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return "", false
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// sameOrigin reports whether the origin o names this server as the
// request r reached it (its Host header; http, or https behind a proxy
// that says so).
func sameOrigin(o string, r *http.Request) bool {
	n, ok := normalOrigin(o)
	if !ok {
		return false
	}
	for _, scheme := range []string{"http", "https"} {
		if own, ok := normalOrigin(scheme + "://" + r.Host); ok && own == n {
			return true
		}
	}
	return false
}

// allowedOrigin reports whether the request's Origin is one of
// Options.AllowOrigins.
func (s *Server) allowedOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || len(s.origins) == 0 {
		return false
	}
	n, ok := normalOrigin(o)
	return ok && slices.Contains(s.origins, n)
}

// crossSite answers a request that must not be served because it comes
// from another site, or declares a body that is not JSON, and reports
// whether it did. It also answers the CORS preflight of an allowed origin
// and adds the CORS headers to its requests; without AllowOrigins, no
// CORS header is ever sent.
func (s *Server) crossSite(w http.ResponseWriter, r *http.Request) bool {
	allowed := s.allowedOrigin(r)
	if allowed {
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		w.Header().Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-BKB-Lease")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return true
		}
	}
	if !stateChanging(r.Method) {
		return false
	}
	if !allowed {
		if o, ok := r.Header["Origin"]; ok {
			if len(o) != 1 || o[0] == "null" || !sameOrigin(o[0], r) {
				s.fail(w, http.StatusForbidden, "cross-site request refused: Origin %q is not this server (%s); start the server with --allow-origin to let a web page on another origin use the API", strings.Join(o, ", "), r.Host)
				return true
			}
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "cross-site", "same-site":
			s.fail(w, http.StatusForbidden, "cross-site request refused (Sec-Fetch-Site: %s); start the server with --allow-origin to let a web page on another origin use the API", r.Header.Get("Sec-Fetch-Site"))
			return true
		}
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			s.fail(w, http.StatusUnsupportedMediaType, "a request body must be JSON sent with Content-Type: application/json (got %q)", r.Header.Get("Content-Type"))
			return true
		}
	}
	return false
}

// noRoute answers a request that no route takes: 405 with an Allow header
// when the path exists for other methods, else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pat := s.mux.Handler(probe); pat != "" && pat != apiFallback {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, http.StatusMethodNotAllowed, "%s is not a method of %s (allowed: %s; see /openapi.json)", r.Method, r.URL.Path, strings.Join(allow, ", "))
		return
	}
	s.fail(w, http.StatusNotFound, "no such API path: %s %s (see /openapi.json)", r.Method, r.URL.Path)
}

// apiFallback is the pattern of noRoute.
const apiFallback = "/api/"
