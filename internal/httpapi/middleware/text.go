package middleware

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
)

// notText refuses a request whose path or query holds what PostgreSQL's
// text cannot (a NUL, %00, or bytes that are not UTF-8, %FF), naming the
// pattern's wildcard that holds it ("clusterId"), the query parameter, or
// the path. Every API route passes here (Gate.Route), so no route's
// handler, and no statement, sees such a value, on either engine; the
// routes' own checks bound lengths and syntax. A route matched the path,
// so its literal segments are text: only a wildcard's value, or a path
// no wildcard covers (a prefix pattern's), can be anything else.
func notText(r *http.Request) *apierr.Error {
	for _, name := range wildcards(r.Pattern) {
		if err := bounds.Text(name, r.PathValue(name), math.MaxInt); err != nil {
			e, _ := apierr.As(err)
			return e
		}
	}
	if err := bounds.Text("the path", r.URL.Path, math.MaxInt); err != nil {
		e, _ := apierr.As(err)
		return e
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) { // the first bad one, the same at every run
		if err := bounds.Text("a parameter name", name, math.MaxInt); err != nil {
			e, _ := apierr.As(err)
			return e
		}
		for _, v := range q[name] {
			if err := bounds.Text(name, v, math.MaxInt); err != nil {
				e, _ := apierr.As(err)
				return e
			}
		}
	}
	return nil
}

// wildcards are the names of pattern's wildcards: "{clusterId}" is
// clusterId, "{path...}" path; "{$}" is none.
func wildcards(pattern string) []string {
	var names []string
	for seg := range strings.SplitSeq(pattern, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(strings.TrimSuffix(name, "}"), "...")
			if name != "$" {
				names = append(names, name)
			}
		}
	}
	return names
}
