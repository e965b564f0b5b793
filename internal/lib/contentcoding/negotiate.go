// Package contentcoding reads a request's Accept-Encoding: the server's
// one reading of it, which the API's compressed answers (httpapi) and the
// playground's precompressed assets (web) both follow, so they never
// disagree on what a client accepts.
package contentcoding

import (
	"strconv"
	"strings"
)

// Negotiate picks the content coding to answer with from a request's
// Accept-Encoding values (RFC 9110 §12.5.3): "br" when offered and
// acceptable, else "gzip", else "" (identity). A coding is acceptable when
// it, or "*" without it being named, has a q-value above zero; the
// client's q ordering is not followed beyond that, since brotli is smaller
// than gzip for every asset and both cost nothing to serve precompressed.
// The playground's assets are negotiated with both copies; the API's
// answers with haveBr false, since they are gzip or identity.
func Negotiate(acceptEncoding []string, haveBr, haveGzip bool) string {
	q := map[string]float64{}
	for _, header := range acceptEncoding {
		for _, item := range strings.Split(header, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if name == "x-gzip" { // RFC 9110 §8.4.1.3: the same coding
				name = "gzip"
			}
			w := qValue(params)
			if v, seen := q[name]; !seen || w > v {
				q[name] = w
			}
		}
	}
	acceptable := func(coding string) bool {
		if v, ok := q[coding]; ok {
			return v > 0
		}
		v, ok := q["*"]
		return ok && v > 0
	}
	switch {
	case haveBr && acceptable("br"):
		return "br"
	case haveGzip && acceptable("gzip"):
		return "gzip"
	}
	return ""
}

// qValue reads "q=…" from a coding's parameters: a missing weight is 1,
// the default; a malformed one or one out of [0, 1] is 0, not acceptable,
// since a client that wrote it cannot be said to have asked for the coding.
func qValue(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) { // NaN fails both
			return 0
		}
		return f
	}
	return 1
}
