// Package idempotency makes a POST or DELETE safe to retry, as Stripe's API
// and the IETF draft "The Idempotency-Key HTTP Header Field" do: the first
// request with a key acts and its answer is kept for 24 hours; the same key
// with the same request (method, path and body) answers that answer again,
// byte for byte, without acting; the same key with another request is a
// 422. Keys belong to an organization.
//
// A key is reserved before the request acts (an insert under the table's
// primary key), so of two identical requests racing with one key only one
// acts: the other answers 409 IDEMPOTENCY_KEY_IN_USE while the first is in
// flight, and the first's answer once it is kept. A reservation whose
// request died without answering is given up after Lease.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"gpugraph/apierr"
	"gpugraph/store"
)

// Header is the request header that carries the key; ReplayedHeader marks
// an answer given again.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

// The limits of keys.
const (
	MaxKeyLength = 255
	// TTL is how long an answer is kept and replayed.
	TTL = 24 * time.Hour
	// Lease is how long a reservation stays in flight before another
	// request with the key may take it over: far above any request's run.
	Lease = 2 * time.Minute
)

// The codes of refusals.
const (
	CodeKeyReused = "IDEMPOTENCY_KEY_REUSED"
	CodeKeyInUse  = "IDEMPOTENCY_KEY_IN_USE"
	CodeBadKey    = "INVALID_IDEMPOTENCY_KEY"
)

// CheckKey refuses an empty key, one over 255 characters, and a header
// sent more than once.
func CheckKey(values []string) (string, error) {
	switch {
	case len(values) > 1:
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "send one %s header, not %d", Header, len(values))
	case values[0] == "":
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "%s is empty: send 1 to %d characters, such as a UUID", Header, MaxKeyLength)
	case len([]rune(values[0])) > MaxKeyLength:
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "%s is %d characters long: at most %d are allowed",
			Header, len([]rune(values[0])), MaxKeyLength)
	}
	return values[0], nil
}

// Fingerprint is what makes two requests "the same request": method,
// path with query, and the SHA-256 of the body.
func Fingerprint(method, pathAndQuery string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + pathAndQuery + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Answer is a kept answer: its HTTP status and body.
type Answer struct {
	Status int
	Body   []byte
}

// Service keeps keys in the store.
type Service struct{ store *store.Store }

// New is the service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// Reservation is a key this request holds: it acts, then Finishes with its
// answer or Releases the key.
type Reservation struct {
	st  *store.Store
	rec *store.IdempotencyRecord
}

// Begin looks key up for orgID's request fingerprint: a kept answer to give
// again, or a reservation for this request to act under. A key in flight
// is a 409, a key kept for another request a 422.
func (s *Service) Begin(ctx context.Context, orgID, key, fingerprint string) (*Answer, *Reservation, error) {
	now := store.Now()
	rec, reserved, err := s.store.ReserveIdempotencyKey(ctx, orgID, key, fingerprint, now, now.Add(-TTL), now.Add(-Lease))
	switch {
	case err != nil:
		return nil, nil, err
	case reserved:
		return nil, &Reservation{st: s.store, rec: rec}, nil
	case rec.RequestHash != fingerprint:
		return nil, nil, apierr.New(http.StatusUnprocessableEntity, CodeKeyReused,
			"%s %q was already used with another request (a different method, path or body) in the last 24 hours; use a new key for a new request",
			Header, key)
	case rec.Status == 0:
		e := apierr.Conflict(CodeKeyInUse, "a request with %s %q is still in flight; retry once it has answered", Header, key)
		e.RetryAfter = 1
		return nil, nil, e
	}
	return &Answer{Status: rec.Status, Body: []byte(rec.Body)}, nil, nil
}

// Finish keeps the answer of the request that held the reservation. A
// server error is not kept: the key is released, so a retry acts again
// (nothing was done, or the error says to try again).
func (r *Reservation) Finish(ctx context.Context, status int, body []byte) error {
	if status >= 500 {
		return r.st.ReleaseIdempotencyKey(ctx, r.rec)
	}
	return r.st.FinishIdempotencyKey(ctx, r.rec, status, string(body))
}
