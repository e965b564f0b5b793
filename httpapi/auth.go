package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"gpugraph/apierr"
	"gpugraph/auth"
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
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="gpugraph"`)
			w.WriteHeader(e.Status)
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(map[string]any{
				"errors": []any{map[string]any{
					"message":    e.Message,
					"extensions": map[string]any{"code": e.Code, "status": e.Status},
				}},
				"data": nil,
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeGraphQLError answers one error in GraphQL's shape with status.
func writeGraphQLError(w http.ResponseWriter, status int, code, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{
		"errors": []any{map[string]any{
			"message":    fmt.Sprintf(format, args...),
			"extensions": map[string]any{"code": code, "status": status},
		}},
		"data": nil,
	})
}
