// Package reqid gives every request an id that ties its answer, its error
// body and its log lines together: a client's own X-Request-Id when it is
// sane, else one made here.
package reqid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

// MaxLen bounds an incoming id: it is echoed, logged and written into
// bodies, so a client may not make it large.
const MaxLen = 128

// Sane reports whether an incoming id may be echoed: 1 to MaxLen bytes of
// printable ASCII without spaces (no header or log injection).
func Sane(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// New makes an id: 16 random bytes in hex.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type ctxKey struct{}

// With puts id in ctx.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From answers the id of ctx's request, "" outside one.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Middleware answers every request with its id in the header and puts the
// id in the request's context before anything else runs.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !Sane(id) {
			id = New()
		}
		w.Header().Set(Header, id)
		next.ServeHTTP(w, r.WithContext(With(r.Context(), id)))
	})
}

// LogHandler adds requestId to every record logged with a request's
// context (slog.InfoContext(ctx, …) and the like).
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := From(ctx); id != "" {
		rec.AddAttrs(slog.String("requestId", id))
	}
	return l.Handler.Handle(ctx, rec)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(as)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
