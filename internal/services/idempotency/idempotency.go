// Package idempotency makes a POST or DELETE safe to retry, as Stripe's API
// and the IETF draft "The Idempotency-Key HTTP Header Field" do: the first
// request with a key acts and its answer is kept for 24 hours; the same key
// with the same request (method, path and body) answers that answer again,
// byte for byte with the headers it had (Location, Warning, …), without
// acting; the same key with another request is a 422. Keys belong to an
// organization, and GraphQL's mutations share them (a mutation is never the
// same request as a REST one).
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
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
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
	if len(values) > 1 {
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "send one %s header, not %d", Header, len(values))
	}
	return CheckNamed(Header, values[0])
}

// CheckNamed refuses an empty key and one over 255 characters, naming the
// key as name (the header, or GraphQL's @idempotent(key:)).
func CheckNamed(name, key string) (string, error) {
	switch n := len([]rune(key)); {
	case key == "":
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "%s is empty: send 1 to %d characters, such as a UUID", name, MaxKeyLength)
	case n > MaxKeyLength:
		return "", apierr.New(http.StatusBadRequest, CodeBadKey, "%s is %d characters long: at most %d are allowed", name, n, MaxKeyLength)
	}
	return key, nil
}

// Fingerprint is what makes two requests "the same request": method,
// path with query, and the SHA-256 of the body.
func Fingerprint(method, pathAndQuery string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + pathAndQuery + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Answer is a kept answer: its HTTP status, the headers its handler set
// (nil for an answer kept without them) and its body.
type Answer struct {
	Status int
	Header http.Header
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

// Naming is how a face's refusals name a key and what tells two of its
// requests apart.
type Naming struct {
	// Key names the key: "Idempotency-Key" (followed by the key, quoted).
	Key string
	// Differs is what another request differs in.
	Differs string
}

// REST is the naming of the Idempotency-Key header on a REST request.
var REST = Naming{Key: Header, Differs: "a different method, path or body"}

// Begin looks key up for orgID's request fingerprint: a kept answer to give
// again, or a reservation for this request to act under. A key in flight
// is a 409, a key kept for another request a 422. Its refusals name the
// key as REST's header.
func (s *Service) Begin(ctx context.Context, orgID, key, fingerprint string) (*Answer, *Reservation, error) {
	return s.BeginNamed(ctx, REST, orgID, key, fingerprint)
}

// BeginNamed is Begin with the refusals naming the key as n says.
func (s *Service) BeginNamed(ctx context.Context, n Naming, orgID, key, fingerprint string) (*Answer, *Reservation, error) {
	now := store.Now()
	rec, reserved, err := s.store.ReserveIdempotencyKey(ctx, orgID, key, fingerprint, now, now.Add(-TTL), now.Add(-Lease))
	switch {
	case err != nil:
		return nil, nil, err
	case reserved:
		return nil, &Reservation{st: s.store, rec: rec}, nil
	case rec.RequestHash != fingerprint:
		return nil, nil, apierr.New(http.StatusUnprocessableEntity, CodeKeyReused,
			"%s %q was already used with another request (%s) in the last 24 hours; use a new key for a new request",
			n.Key, key, n.Differs)
	case rec.Status == 0:
		e := apierr.Conflict(CodeKeyInUse, "a request with %s %q is still in flight; retry once it has answered", n.Key, key)
		e.RetryAfter = 1
		return nil, nil, e
	}
	ans := &Answer{Status: rec.Status, Body: []byte(rec.Body)}
	if rec.Headers != "" {
		if err := json.Unmarshal([]byte(rec.Headers), &ans.Header); err != nil {
			// The body is still the answer: give it without its headers.
			slog.ErrorContext(ctx, "kept idempotent answer's headers", "err", err, "key", key)
		}
	}
	return ans, nil, nil
}

// Finish keeps the answer of the request that held the reservation: its
// status, the headers its handler set (Location, Warning, Content-Type, …;
// nil for none) and its body. A server error is not kept: the key is
// released, so a retry acts again (nothing was done, or the error says to
// try again).
func (r *Reservation) Finish(ctx context.Context, status int, header http.Header, body []byte) error {
	if status >= 500 {
		return r.Release(ctx)
	}
	var headers []byte
	if len(header) > 0 {
		var err error
		if headers, err = json.Marshal(header); err != nil {
			return err
		}
	}
	return r.st.FinishIdempotencyKey(ctx, r.rec, status, string(headers), string(body))
}

// Release gives the key up without an answer, so a retry acts again.
func (r *Reservation) Release(ctx context.Context) error {
	return r.st.ReleaseIdempotencyKey(ctx, r.rec)
}
