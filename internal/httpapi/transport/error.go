package transport

import (
	"encoding/json"
	"net/http"
	"strconv"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/reqid"
)

// WriteError answers e alone in GraphQL's shape, with e's status,
// Retry-After and the request's id, as the error presenter renders errors
// inside an operation: what a refusal before any operation answers (a
// missing key, the gate's 429 and 503, a body over its limit). Nothing
// ran, so, as for a request error, the answer has no data entry.
func WriteError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	ext := map[string]any{"code": e.Code, "status": e.Status}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		ext["retryAfter"] = e.RetryAfter
	}
	if id := reqid.From(r.Context()); id != "" {
		ext["requestId"] = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{
		"errors": []any{map[string]any{"message": e.Message, "extensions": ext}},
	})
}
