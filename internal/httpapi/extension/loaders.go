package extension

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/loaders"
)

// FreshLoadersPerEvent gives every event of a subscription its own
// dataloaders: the connection's would cache the VM as it was at the first
// event. They are scoped to the caller, as every GraphQL request's are
// (handler.Server.AroundResponses).
func FreshLoadersPerEvent(newLoaders loaders.Factory) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if !graphql.HasOperationContext(ctx) {
			return next(ctx) // an error answered before any operation
		}
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
			ctx = loaders.With(ctx, newLoaders(auth.FromContext(ctx)))
		}
		return next(ctx)
	}
}
