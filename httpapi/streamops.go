package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/loaders"
	"gpugraph/ratelimit"
)

// streamBudget charges every operation that arrives on a stream (each
// message of a WebSocket, an SSE request) as the gate charges an HTTP
// request: one api token of its credential's rate limit before it is
// parsed; a query or mutation also waits for a slot of the public budget,
// runs under the request timeout and gets its own dataloaders (the
// connection's would be shared by concurrent operations and cache rows
// across them). A subscription holds no slot: it lives as long as its
// client wants, and live caps them per key.
//
// It also refuses a subscription that came as a plain GET or POST, at
// once: those transports answer one response, so it would hold its slot
// until its first event or the timeout.
type streamBudget struct{ g *gate }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = streamBudget{}

func (streamBudget) ExtensionName() string                   { return "StreamBudget" }
func (streamBudget) Validate(graphql.ExecutableSchema) error { return nil }

// SubscriptionTransportsMessage refuses a subscription sent as a plain request.
const SubscriptionTransportsMessage = "a subscription is served over a WebSocket (graphql-transport-ws or graphql-ws: GET /graphql with Upgrade: websocket) or Server-Sent Events (POST /graphql with Accept: text/event-stream), not as a plain GET or POST"

func (s streamBudget) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	c := auth.FromContext(ctx)
	if !onStream(ctx) || c == nil {
		return nil
	}
	if ok, after := s.g.rl.lim.Allow(limitKey(c), ratelimit.API, 1); !ok {
		s.g.rl.refused.WithLabelValues(string(ratelimit.API), "graphql").Inc()
		return operationError(ctx, rateLimitedError(ratelimit.API, after))
	}
	return nil
}

func (streamBudget) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation != nil && oc.Operation.Operation == ast.Subscription && !onStream(ctx) {
		return operationError(ctx, apierr.BadRequest("%s", SubscriptionTransportsMessage))
	}
	return nil
}

func (s streamBudget) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	c := auth.FromContext(ctx)
	if !onStream(ctx) || c == nil || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	key := "cred:" + c.CredentialKey()
	ctx = context.WithValue(ctx, gqlRequestKey{}, &gqlRequest{})
	if err := s.g.public.acquire(ctx, key, 1, s.g.queueWait); err != nil {
		s.g.refused.WithLabelValues(refusedReason(err)).Inc()
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{operationError(ctx, refusal(err, s.g.public.share))}})
	}
	ctx, cancel := context.WithTimeout(ctx, s.g.timeout)
	var once sync.Once
	done := func() { once.Do(func() { cancel(); s.g.public.release(key, 1) }) }
	// The slot goes back when the operation's last response is out, or
	// at its deadline, whichever is first: never later, whatever the
	// transport does.
	stop := context.AfterFunc(ctx, done)
	ctx = loaders.With(ctx, s.g.newLoaders(c))
	h := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp == nil {
			stop()
			done()
		}
		return resp
	}
}

// refusedReason is the refusal counter's reason for a budget's error.
func refusedReason(err error) string {
	switch refusal(err, 0).Status {
	case http.StatusTooManyRequests:
		return refusedShare
	case http.StatusGatewayTimeout:
		return refusedTimeout
	}
	return refusedBusy
}
