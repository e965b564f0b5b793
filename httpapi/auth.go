package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/reqid"
	"gpugraph/rest"
)

// requireCaller answers 401 to a GraphQL request without a valid key, with
// the error in GraphQL's shape, before any query is parsed.
func requireCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebsocket(r) { // authenticates in connection_init
			next.ServeHTTP(w, r)
			return
		}
		if _, err := auth.Authenticate(r.Context()); err != nil {
			e, _ := apierr.As(err)
			if e.Status == http.StatusUnauthorized {
				rest.SetChallenge(w, r)
			}
			writeGraphQLAPIError(w, r, e)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeGraphQLAPIError answers e alone in GraphQL's shape, with e's status,
// Retry-After and the request's id, as presentError renders errors inside
// an operation.
func writeGraphQLAPIError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
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
		"data":   nil,
	})
}
