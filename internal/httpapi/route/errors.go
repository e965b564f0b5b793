package route

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/reqid"
)

// WriteRunaiError answers in Run:ai's shape: {"code": 404, "message": "...", "details": "..."}.
func WriteRunaiError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(r, err)
	setErrorHeaders(w, r, e)
	// Run:ai's Error schema allows properties besides its own.
	body := map[string]any{"code": e.Status, "message": e.Message}
	if e.Details != "" {
		body["details"] = e.Details
	}
	if id := reqid.From(r.Context()); id != "" {
		body["requestId"] = id
	}
	writeJSON(w, e.Status, body)
}

// WriteOpenRelayError answers in OpenRelay's shape: {"error": {"code": "VM_NODE_BUSY", "message": "..."}}.
func WriteOpenRelayError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(r, err)
	setErrorHeaders(w, r, e)
	body := map[string]any{"code": e.Code, "message": e.Message}
	if id := reqid.From(r.Context()); id != "" {
		body["requestId"] = id
	}
	writeJSON(w, e.Status, map[string]any{"error": body})
}

// SetChallenge sets WWW-Authenticate on a 401: error="invalid_token" when
// the request sent a token (unknown, expired or revoked), a bare challenge
// when it sent none (RFC 6750, section 3.1).
func SetChallenge(w http.ResponseWriter, r *http.Request) {
	c := `Bearer realm="gpugraph"`
	if auth.BearerToken(r) != "" {
		c += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

// errorOf turns any error into the answer a client may see; internal causes
// are logged here and never written out.
func errorOf(r *http.Request, err error) *apierr.Error {
	e, ok := apierr.As(err)
	if !ok && (r.Context().Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		// Out of time (or the client left): one line, and the API's shape
		// with a 504, not "internal error".
		slog.WarnContext(r.Context(), "request ran out of time", "path", r.URL.Path, "err", err)
		return apierr.Timeout()
	}
	if !ok {
		slog.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path)
	}
	return e
}

// setErrorHeaders sets what an error's status asks for besides its body:
// Retry-After, and on a 401 the challenge of RFC 6750.
func setErrorHeaders(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Status == http.StatusUnauthorized {
		SetChallenge(w, r)
	}
}

// writeJSON writes an error's body with its status, as package rest
// writes its answers.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages may say <API key>; this is not HTML
	if err := enc.Encode(v); err != nil {
		slog.Error("write response", "err", err)
	}
}
