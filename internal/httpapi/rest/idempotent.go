package rest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/services/idempotency"
)

// maxIdempotentBody bounds the body an idempotent request may carry: it is
// read whole to fingerprint it.
const maxIdempotentBody = 1 << 20

// idempotent makes h, an OpenRelay POST or DELETE, honour an
// Idempotency-Key header (package idempotency): the first request acts and
// its answer is kept, with every header h set (a create's Location, a
// restart's Warning, Content-Type); the same request again gets that
// answer with Idempotent-Replayed: true. A request without the header acts
// as always.
// The face has checked the caller's permission before this runs, so a
// refusal for the key itself is never kept.
func (api *API) idempotent(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		values := r.Header.Values(idempotency.Header)
		if len(values) == 0 {
			return h(w, r)
		}
		key, err := idempotency.CheckKey(values)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxIdempotentBody))
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		caller := auth.FromContext(r.Context())
		print := idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body)
		answer, res, err := api.Services.Idempotency.Begin(r.Context(), caller.OrganizationID, key, print)
		if err != nil {
			return err
		}
		if answer != nil {
			for k, v := range answer.Header {
				w.Header()[k] = v
			}
			if answer.Header.Get("Content-Type") == "" { // kept before its headers were
				w.Header().Set("Content-Type", "application/json")
			}
			w.Header().Set(idempotency.ReplayedHeader, "true")
			w.WriteHeader(answer.Status)
			_, _ = w.Write(answer.Body)
			return nil
		}

		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		if err := h(rec, r); err != nil {
			route.WriteOpenRelayError(rec, r, err)
		}
		// The action happened: keep its answer even if the client has gone.
		if err := res.Finish(context.WithoutCancel(r.Context()), rec.status, rec.header, rec.body.Bytes()); err != nil {
			slog.ErrorContext(r.Context(), "keep idempotent answer", "err", err, "key", key)
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
		return nil
	}
}

// recorder holds an answer until it is kept.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
