package extension

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/ratelimit"
)

// Gate is what the budget extensions ask of the server's gate, which
// charges every HTTP request before its handler (internal/httpapi/middleware): the
// operations of a stream, and a mutation's restarts, are charged here
// against the same budgets.
type Gate interface {
	// OnStream reports whether ctx is a stream's (a WebSocket's or an SSE
	// request's): the gate charged its connection, not its operations.
	OnStream(ctx context.Context) bool
	// Limited reports whether class has a rate limit at all.
	Limited(class ratelimit.Class) bool
	// Charge spends n tokens of class from c's rate limit, or answers (and
	// counts) the refusal.
	Charge(c *auth.Caller, class ratelimit.Class, n int) *apierr.Error
	// Slot takes a slot of the public budget for c, waiting as an HTTP
	// request waits, or answers (and counts) the refusal; release gives
	// it back.
	Slot(ctx context.Context, c *auth.Caller) (release func(), e *apierr.Error)
	// Timeout is an HTTP request's timeout.
	Timeout() time.Duration
}

// StreamBudget charges every operation that arrives on a stream (each
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
type StreamBudget struct {
	Gate    Gate
	Loaders loaders.Factory
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = StreamBudget{}

func (StreamBudget) ExtensionName() string                   { return "StreamBudget" }
func (StreamBudget) Validate(graphql.ExecutableSchema) error { return nil }

// SubscriptionTransportsMessage refuses a subscription sent as a plain request.
const SubscriptionTransportsMessage = "a subscription is served over a WebSocket (graphql-transport-ws or graphql-ws: GET /graphql with Upgrade: websocket) or Server-Sent Events (POST /graphql with Accept: text/event-stream), not as a plain GET or POST"

func (s StreamBudget) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	c := auth.FromContext(ctx)
	if !s.Gate.OnStream(ctx) || c == nil {
		return nil
	}
	if e := s.Gate.Charge(c, ratelimit.API, 1); e != nil {
		return operationError(ctx, e)
	}
	return nil
}

func (s StreamBudget) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation != nil && oc.Operation.Operation == ast.Subscription && !s.Gate.OnStream(ctx) {
		return operationError(ctx, apierr.BadRequest("%s", SubscriptionTransportsMessage))
	}
	return nil
}

func (s StreamBudget) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	c := auth.FromContext(ctx)
	if !s.Gate.OnStream(ctx) || c == nil || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	ctx, _ = WithOutcome(ctx)
	release, e := s.Gate.Slot(ctx, c)
	if e != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{operationError(ctx, e)}})
	}
	ctx, cancel := context.WithTimeout(ctx, s.Gate.Timeout())
	var once sync.Once
	done := func() { once.Do(func() { cancel(); release() }) }
	// The slot goes back when the operation's last response is out, or
	// at its deadline, whichever is first: never later, whatever the
	// transport does.
	stop := context.AfterFunc(ctx, done)
	ctx = loaders.With(ctx, s.Loaders(c))
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

// RestartBudget spends one restart token per restartVm of a mutation,
// before any runs: a mutation of ten restarts over the budget is refused
// whole (HTTP 429), not cut half-way.
type RestartBudget struct{ Gate Gate }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = RestartBudget{}

func (RestartBudget) ExtensionName() string                   { return "RestartBudget" }
func (RestartBudget) Validate(graphql.ExecutableSchema) error { return nil }

func (b RestartBudget) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation || !b.Gate.Limited(ratelimit.Restart) {
		return nil
	}
	c := auth.FromContext(ctx)
	if c == nil {
		return nil
	}
	keys := map[string]bool{}
	fieldmodel.Roots(oc.Operation.SelectionSet, func(f *ast.Field) {
		if f.Name == "restartVm" {
			keys[f.Alias] = true
		}
	})
	if len(keys) == 0 {
		return nil
	}
	if e := b.Gate.Charge(c, ratelimit.Restart, len(keys)); e != nil {
		return operationError(ctx, e)
	}
	return nil
}
