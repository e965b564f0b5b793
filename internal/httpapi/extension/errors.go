package extension

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/reqid"
)

// Outcome is what one GraphQL request's errors share: whether it ran out
// of time (the answer is then a 504, and the timeout is logged once, not
// once per field that saw it), and the status of an error that refused
// the whole operation before it ran (parse, validation, a limit) or its
// answer (the response cap), which the HTTP status then says too.
type Outcome struct {
	timedOut atomic.Bool
	logOnce  sync.Once
	refused  atomic.Int32
	// retryAfter, in seconds, is sent as Retry-After with a refusal (429).
	retryAfter atomic.Int32
	// replayed: the answer is one kept for an idempotency key (Idempotency).
	replayed atomic.Bool
}

type outcomeKey struct{}

// WithOutcome gives the request of ctx its Outcome, which PresentError and
// the extensions fill in as its errors are rendered.
func WithOutcome(ctx context.Context) (context.Context, *Outcome) {
	o := &Outcome{}
	return context.WithValue(ctx, outcomeKey{}, o), o
}

func outcomeOf(ctx context.Context) *Outcome {
	o, _ := ctx.Value(outcomeKey{}).(*Outcome)
	return o
}

// Status is the HTTP status of an answer gqlgen gave code, and the
// Retry-After (in seconds, 0 for none) it carries: an operation refused
// before it ran answers 400 (gqlgen's 422 for parse and validation errors,
// its 200 for the limits), or the refusal's own status; one that ran out
// of time 504 instead of 200. Field errors of an operation that ran keep
// 200, as GraphQL servers answer them.
func (o *Outcome) Status(code int) (status, retryAfter int) {
	switch {
	case code == http.StatusUnprocessableEntity:
		return http.StatusBadRequest, 0
	case code == http.StatusOK && o.timedOut.Load():
		return http.StatusGatewayTimeout, 0
	case code == http.StatusOK && o.refused.Load() != 0:
		return int(o.refused.Load()), int(o.retryAfter.Load())
	}
	return code, 0
}

// Replayed reports whether the answer is one kept for an idempotency key,
// given again (Idempotent-Replayed: true).
func (o *Outcome) Replayed() bool { return o.replayed.Load() }

// apqNotFound is the message of gqlgen's answer to an unknown APQ hash.
const apqNotFound = "PersistedQueryNotFound"

// PresentError renders every error with extensions.code and
// extensions.status (handler.Server.SetErrorPresenter). Errors of apierr
// say what they say; parse and validation errors of the query are the
// caller's (400); a request out of time is one TIMEOUT (504); anything
// else is internal, logged here and never shown.
func PresentError(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := presentKind(ctx, err)
	if id := reqid.From(ctx); id != "" {
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		gqlErr.Extensions["requestId"] = id
	}
	return gqlErr
}

func presentKind(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if e, ok := apierr.As(err); ok {
		gqlErr.Message = e.Message
		gqlErr.Extensions = map[string]any{"code": e.Code, "status": e.Status}
		if e.Details != "" {
			gqlErr.Extensions["details"] = e.Details
		}
		if e.RetryAfter > 0 {
			// What REST sends as the Retry-After header.
			gqlErr.Extensions["retryAfter"] = e.RetryAfter
		}
		return gqlErr
	}
	var q *gqlerror.Error
	if errors.As(err, &q) && q.Unwrap() == nil {
		// The operation's own errors: ours (limits, introspection) say their
		// status already; gqlgen's parse and validation errors are a 400.
		if _, set := q.Extensions["status"]; !set {
			gqlErr.Extensions = map[string]any{"code": apierr.BadRequestCode, "status": http.StatusBadRequest}
		}
		// No path: it refused the operation, not one field of it. An
		// unknown persisted-query hash is not a refusal but a step of the
		// APQ protocol, which clients expect with a 200.
		if st := outcomeOf(ctx); st != nil && len(q.Path) == 0 && q.Message != apqNotFound {
			if status, ok := gqlErr.Extensions["status"].(int); ok {
				st.refused.CompareAndSwap(0, int32(status))
			}
		}
		return gqlErr
	}
	if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		st := outcomeOf(ctx)
		gone := errors.Is(ctxErr, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
		if st != nil {
			if !gone {
				st.timedOut.Store(true)
			}
			st.logOnce.Do(func() {
				if gone {
					slog.InfoContext(ctx, "graphql: client went away; request abandoned")
				} else {
					slog.WarnContext(ctx, "graphql: request ran out of time", "path", gqlErr.Path.String())
				}
			})
		}
		gqlErr.Message = "the request ran out of time"
		gqlErr.Extensions = map[string]any{"code": apierr.TimeoutCode, "status": http.StatusGatewayTimeout}
		return gqlErr
	}
	slog.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
	gqlErr.Message = "internal error"
	gqlErr.Extensions = map[string]any{"code": apierr.Internal, "status": http.StatusInternalServerError}
	return gqlErr
}

// ResponseCap answers one error instead of data larger than Max bytes, and
// folds the per-field errors of a request that ran out of time into one.
type ResponseCap struct{ Max int }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = ResponseCap{}

func (ResponseCap) ExtensionName() string                   { return "ResponseCap" }
func (ResponseCap) Validate(graphql.ExecutableSchema) error { return nil }

func (c ResponseCap) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	if st := outcomeOf(ctx); st != nil && st.timedOut.Load() {
		// One error, not one per alias that saw the deadline.
		var first *gqlerror.Error
		for _, e := range resp.Errors {
			if e.Extensions["code"] == apierr.TimeoutCode {
				first = e
				break
			}
		}
		if first != nil {
			first.Path = nil
			resp.Errors = gqlerror.List{first}
			resp.Data = []byte("null")
		}
		return resp
	}
	if c.Max > 0 && len(resp.Data) > c.Max {
		err := gqlerror.Errorf("the answer is larger than %d bytes; ask fewer fields or a smaller limit", c.Max)
		err.Extensions = map[string]any{"code": "RESPONSE_TOO_LARGE", "status": http.StatusBadRequest}
		if id := reqid.From(ctx); id != "" {
			err.Extensions["requestId"] = id
		}
		if st := outcomeOf(ctx); st != nil {
			st.refused.CompareAndSwap(0, http.StatusBadRequest)
		}
		return &graphql.Response{Errors: gqlerror.List{err}, Data: []byte("null")}
	}
	return resp
}

// operationError is err refusing a whole operation (an extension's
// refusal, or Idempotency's answered in place of running it), rendered as
// PresentError renders it (code, status, details, retryAfter, requestId),
// its status and Retry-After recorded in the request's Outcome: gqlgen
// hands an extension's refusal to the transport as it is, and Replay's
// answer is never presented, so over HTTP the answer's status (and
// Retry-After) says it only through the Outcome.
func operationError(ctx context.Context, err error) *gqlerror.Error {
	g := PresentError(ctx, err)
	if st := outcomeOf(ctx); st != nil {
		if status, ok := g.Extensions["status"].(int); ok {
			st.refused.CompareAndSwap(0, int32(status))
		}
		if s, ok := g.Extensions["retryAfter"].(int); ok {
			st.retryAfter.Store(int32(s))
		}
	}
	return g
}
