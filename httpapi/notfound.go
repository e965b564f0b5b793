package httpapi

import (
	"net/http"
	"strings"

	"gpugraph/apierr"
	"gpugraph/rest"
)

// jsonMisses answers what mux does not route (an unknown path, a method a
// path does not take) in the shape of the API the path falls under, in
// place of ServeMux's plain-text 404 and 405: Run:ai's under /api/,
// OpenRelay's under /v1/ and elsewhere. A 405 keeps the Allow header the
// mux computes.
func jsonMisses(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &headerProbe{header: http.Header{}}
		h.ServeHTTP(probe, r)
		var e *apierr.Error
		switch probe.status {
		case http.StatusNotFound:
			e = apierr.NotFound(apierr.NotFoundCode, "no such path: %s %s", r.Method, r.URL.Path)
		case http.StatusMethodNotAllowed:
			allow := probe.header.Get("Allow")
			w.Header().Set("Allow", allow)
			e = apierr.New(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "%s does not take %s; it takes %s", r.URL.Path, r.Method, allow)
		default:
			// A redirect (a path without its trailing slash): as the mux says.
			mux.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			rest.WriteRunaiError(w, r, e)
			return
		}
		rest.WriteOpenRelayError(w, r, e)
	})
}

// headerProbe records what the mux's own 404/405 handler would answer and
// discards its plain-text body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *headerProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
