package middleware

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
)

// Mux is the router JSONMisses stands in front of: a ServeMux that
// keeps its patterns as registered.
type Mux interface {
	http.Handler
	Handler(r *http.Request) (h http.Handler, pattern string)
	Patterns() []string
}

// JSONMisses answers what mux does not route (an unknown path, a method a
// path does not take) in the shape of the API the path falls under, in
// place of ServeMux's plain-text 404 and 405: Run:ai's under /api/,
// OpenRelay's under /v1/ and elsewhere. A 405 keeps the Allow header the
// mux computes.
//
// A path that is not in its clean form (an empty segment, "." or "..":
// GET /v1/vms//restart) is a 404 too, rather than the mux's 307 to the
// cleaned path with an HTML body: a client that built it has a bug (an
// empty id), and following the redirect would act on another path than
// the one it named. Where the empty segments stand for a pattern's
// wildcards, the answer names them ("the {id} of /v1/vms/{id}/restart is
// empty").
func JSONMisses(mux Mux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && cleanPath(p) != p {
			if names, pattern := emptyWildcards(mux.Patterns(), r.Method, p); names != "" {
				verb := "is"
				if strings.Contains(names, " and ") {
					verb = "are"
				}
				writeMiss(w, r, apierr.NotFound(apierr.NotFoundCode,
					"no such path: %s %s: the %s of %s %s empty", r.Method, r.URL.Path, names, pattern, verb))
				return
			}
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
		route.WriteRunaiError(w, r, e)
		return
	}
	route.WriteOpenRelayError(w, r, e)
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

// emptyWildcards finds the pattern (of patterns, as registered) that the
// escaped path p would match if its empty segments held values, and
// answers the wildcards those segments stand for ("{id}", "{workloadId}
// and {podId}") and the pattern's path; "" when none does, or when p has
// "." or ".." segments. A pattern of method wins over one of another.
func emptyWildcards(patterns []string, method, p string) (names, pattern string) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if slices.Contains(segs, ".") || slices.Contains(segs, "..") {
		return "", ""
	}
	for _, sameMethod := range []bool{true, false} {
		for _, pat := range patterns {
			m, path, ok := strings.Cut(pat, " ")
			if !ok {
				m, path = "", pat
			}
			if (m == method || m == "") != sameMethod {
				continue
			}
			if empty := emptyAt(strings.Split(strings.TrimPrefix(path, "/"), "/"), segs); len(empty) > 0 {
				return strings.Join(empty, " and "), path
			}
		}
	}
	return "", ""
}

// emptyAt answers the wildcards of the pattern segments psegs that the
// path segments segs leave empty, when segs match psegs otherwise; nil
// when they do not match.
func emptyAt(psegs, segs []string) []string {
	if len(psegs) != len(segs) {
		return nil
	}
	var empty []string
	for i, ps := range psegs {
		wildcard := strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "}") && !strings.HasSuffix(ps, "...}") && ps != "{$}"
		switch {
		case wildcard && segs[i] == "":
			empty = append(empty, ps)
		case wildcard || ps == segs[i]:
		default:
			return nil
		}
	}
	return empty
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
