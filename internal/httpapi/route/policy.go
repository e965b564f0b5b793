package route

import (
	"net/http"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/ratelimit"
)

// Policy is what a route may cost, declared with the route and read by
// the server's gate: how large its body may be, which rate class it
// spends, whether it is public traffic. The zero Policy is a public API
// route whose body is at most MaxBody bytes and that spends one api token.
type Policy struct {
	// MaxBody bounds the request body in bytes (MaxBody when 0).
	MaxBody int64
	// Rate is the class the route spends besides api ("" for none).
	Rate ratelimit.Class
	// Infrastructure marks the node agents' reports: outside the public
	// budget and the per-credential rate limits, so abuse of the public API
	// cannot starve heartbeats.
	Infrastructure bool
	// API is the API the route belongs to: the server's gate answers its
	// refusals (429, 503, 408) in that API's error shape, and labels them
	// with it in /metrics. A REST route served through the face's own
	// wrapper (rest's runai or openRelay) has its API already.
	API API
}

// MaxBody bounds the body of a route that declares no other bound.
const MaxBody = 1 << 20

// API is one of the REST APIs gpugraph serves.
type API string

// The REST APIs.
const (
	Runai     API = "runai"
	OpenRelay API = "openrelay"
)

// WriteError answers e in f's error shape.
func (f API) WriteError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if f == Runai {
		WriteRunaiError(w, r, e)
		return
	}
	WriteOpenRelayError(w, r, e)
}
