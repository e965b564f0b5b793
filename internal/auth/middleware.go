package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"gpugraph/internal/lib/apierr"
)

type errKey struct{}

// Middleware resolves the request's API key into its caller. A request
// without a valid key goes on with no caller and with the reason kept, so
// each face answers 401 in its own format (Authenticate returns that reason).
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		c, err := a.Lookup(ctx, BearerToken(r))
		switch {
		case err == nil:
			ctx = WithCaller(ctx, c)
		default:
			var e *apierr.Error
			switch {
			case errors.As(err, &e):
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				// The request's own time ran out during the lookup: a
				// timeout like any other (504), not the key store's fault.
				e = apierr.Timeout()
			case ctx.Err() != nil:
				// The client went away: no one reads the answer.
				e = apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "the request was abandoned")
			default:
				slog.ErrorContext(ctx, "api key lookup", "err", err)
				e = apierr.New(http.StatusServiceUnavailable, apierr.Unavailable, "the key store did not answer; try again")
			}
			ctx = context.WithValue(ctx, errKey{}, e)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Authenticate answers the caller of ctx or the reason there is none.
func Authenticate(ctx context.Context) (*Caller, error) {
	if c := FromContext(ctx); c != nil {
		return c, nil
	}
	if e, ok := ctx.Value(errKey{}).(*apierr.Error); ok {
		return nil, e
	}
	return nil, MissingKey()
}
