package httpapi

import (
	"net/http"
	"strings"
	"time"

	"gpugraph/apierr"
	"gpugraph/rest"
)

// Body limits, in bytes (README "Limits"). Every request body is read
// through http.MaxBytesReader; the handlers that read bodies answer 413 in
// their API's shape when one is larger.
const (
	MaxGraphQLBody = 1 << 20             // a GraphQL request (query, variables, extensions)
	MaxSamplesBody = rest.MaxSamplesBody // POST /api/v1/metrics/samples
	MaxOtherBody   = 1 << 20             // every other body (agent reports, restart)
)

// limitBodies puts a MaxBytesReader on every request body.
func limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			max := int64(MaxOtherBody)
			switch {
			case r.URL.Path == "/graphql":
				max = MaxGraphQLBody
			case r.URL.Path == "/api/v1/metrics/samples":
				max = MaxSamplesBody
			}
			// /graphql answers an announced oversize body at once; the REST
			// handlers answer the MaxBytesReader's error in their own words.
			if r.URL.Path == "/graphql" && r.ContentLength > max {
				writeGraphQLAPIError(w, r, apierr.New(http.StatusRequestEntityTooLarge, apierr.PayloadTooLarge, "the request body is larger than the limit of %d bytes", max))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

func isAgentPath(p string) bool { return strings.HasPrefix(p, "/v1/agent/") }

// budget is a counting semaphore: at most n requests inside at once; one
// that waits longer than wait (or whose client leaves) answers 503.
type budget struct {
	slots chan struct{}
	wait  time.Duration
}

func newBudget(n int, wait time.Duration) *budget {
	return &budget{slots: make(chan struct{}, n), wait: wait}
}

func (b *budget) wrap(next http.Handler, busy func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			// A subscription lives as long as its client: it would hold a
			// slot for hours. Streams have their own cap (per key, in live).
			next.ServeHTTP(w, r)
			return
		}
		select {
		case b.slots <- struct{}{}:
		default:
			t := time.NewTimer(b.wait)
			defer t.Stop()
			select {
			case b.slots <- struct{}{}:
			case <-t.C:
				busy(w, r)
				return
			case <-r.Context().Done():
				busy(w, r)
				return
			}
		}
		defer func() { <-b.slots }()
		next.ServeHTTP(w, r)
	})
}

const busyMessage = "the server is busy; retry later"

func writeBusyREST(w http.ResponseWriter, r *http.Request) {
	e := apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, busyMessage)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		rest.WriteRunaiError(w, r, e)
		return
	}
	rest.WriteOpenRelayError(w, r, e)
}

func writeBusyGraphQL(w http.ResponseWriter, r *http.Request) {
	e := apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "%s", busyMessage)
	e.RetryAfter = 5
	writeGraphQLAPIError(w, r, e)
}
