package httpapi

import (
	"net/http"
	"path"
	"strings"

	"gpugraph/apierr"
	"gpugraph/rest"
)

// jsonMisses answers what mux does not route (an unknown path, a method a
// path does not take) in the shape of the API the path falls under, in
// place of ServeMux's plain-text 404 and 405: Run:ai's under /api/,
// OpenRelay's under /v1/ and elsewhere. A 405 keeps the Allow header the
// mux computes.
//
// A path that is not in its clean form (an empty segment, "." or "..":
// GET /v1/vms//restart) is a 404 too, rather than the mux's 307 to the
// cleaned path with an HTML body: a client that built it has a bug (an
// empty id), and following the redirect would act on another path than
// the one it named.
func jsonMisses(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && cleanPath(p) != p {
			writeMiss(w, r, apierr.NotFound(apierr.NotFoundCode,
				"no such path: %s %s (a path has no empty, \".\" or \"..\" segment)", r.Method, r.URL.Path))
			return
		}
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
		writeMiss(w, r, e)
	})
}

// writeMiss answers e in the shape of the API the path falls under.
func writeMiss(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		rest.WriteRunaiError(w, r, e)
		return
	}
	rest.WriteOpenRelayError(w, r, e)
}

// cleanPath is p as ServeMux cleans it before matching: rooted, without
// empty, "." or ".." segments, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
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
