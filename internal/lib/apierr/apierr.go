// Package apierr is the one error type every face answers with: a code, the
// HTTP status the REST face gives, and a message a user can act on. The REST
// shims and the GraphQL error presenter both render it; anything that is not
// an *Error is internal and is never shown as it is.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Generic codes; the domain codes (VM_NODE_BUSY, …) are defined where they arise.
const (
	Unauthenticated = "UNAUTHENTICATED"
	Forbidden       = "FORBIDDEN"
	NotFoundCode    = "NOT_FOUND"
	BadRequestCode  = "BAD_REQUEST"
	Internal        = "INTERNAL"
	// PayloadTooLarge answers a body over a path's size limit (413).
	PayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// Unavailable answers a dependency that did not answer in time (503).
	Unavailable = "UNAVAILABLE"
	// TimeoutCode answers a request that ran out of its own time (504).
	TimeoutCode = "TIMEOUT"
)

// Error is an answer that is not a success.
type Error struct {
	Status  int    // HTTP status the REST face answers
	Code    string // machine-readable code
	Message string
	Details string // optional, for Run:ai bodies
	// RetryAfter, in seconds, is sent as the Retry-After header (every 503 has one).
	RetryAfter int
}

func (e *Error) Error() string { return e.Message }

// New makes an error with an explicit status and code.
func New(status int, code, format string, args ...any) *Error {
	e := &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
	if status == http.StatusServiceUnavailable {
		e.RetryAfter = DefaultRetryAfter
	}
	return e
}

// DefaultRetryAfter is what a 503 asks a client to wait, in seconds.
const DefaultRetryAfter = 30

// Timeout is the answer to a request that ran out of time: every face's
// 504, whichever step (the key lookup, a wait for the budget, a statement)
// saw the deadline.
func Timeout() *Error {
	return New(http.StatusGatewayTimeout, TimeoutCode, "the request ran out of time")
}

// BadRequest is a 400 naming what was wrong.
func BadRequest(format string, args ...any) *Error {
	return New(http.StatusBadRequest, BadRequestCode, format, args...)
}

// NotFound is a 404 with the given code (NOT_FOUND, VM_NOT_FOUND, …).
func NotFound(code, format string, args ...any) *Error {
	return New(http.StatusNotFound, code, format, args...)
}

// Conflict is a 409: the request clashes with the state of what it names.
func Conflict(code, format string, args ...any) *Error {
	return New(http.StatusConflict, code, format, args...)
}

// Unauthorized is the 401 for a missing or unknown key.
func Unauthorized(msg string) *Error {
	return New(http.StatusUnauthorized, Unauthenticated, "%s", msg)
}

// MissingPermission is the 403 for a known credential that lacks perm,
// naming its kind (credential: "API key", "access token"). Services do not
// call it: they ask the caller (auth.Caller.Require), which knows its kind.
func MissingPermission(credential, perm string) *Error {
	return New(http.StatusForbidden, Forbidden, "this %s lacks the %s permission", credential, perm)
}

// As finds the *Error in err's chain; anything else becomes an internal error
// that says nothing about its cause.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return &Error{Status: http.StatusInternalServerError, Code: Internal, Message: "internal error"}, false
}

// Refused is a 403 with its own code: the caller is known, and may not do
// this (not for want of a permission: that is MissingPermission).
func Refused(code, format string, args ...any) *Error {
	return New(http.StatusForbidden, code, format, args...)
}
