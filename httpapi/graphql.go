package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
	"gpugraph/graph"
	"gpugraph/resolvers"
)

// newGraphQL builds the GraphQL executor with the transports gpugraph
// speaks and the limits that keep one query from taking the server down.
func newGraphQL(cfg Config, res *resolvers.Resolver) *handler.Server {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: res})
	specDirectiveLocations(es.Schema())
	srv := handler.New(es)
	addLive(srv, cfg)
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	if cfg.DisableIntrospection {
		srv.Use(noIntrospection{})
	} else {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.FixedComplexityLimit(cfg.ComplexityLimit))
	srv.Use(DepthLimit{Max: cfg.DepthLimit})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		slog.ErrorContext(ctx, "panic in resolver", "panic", p, "path", graphql.GetPath(ctx).String())
		return errors.New("panic")
	})
	return srv
}

// presentError renders every error with extensions.code and
// extensions.status. Errors of apierr say what they say; parse and
// validation errors of the query are the caller's (400); anything else is
// internal, logged here and never shown.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if e, ok := apierr.As(err); ok {
		gqlErr.Message = e.Message
		gqlErr.Extensions = map[string]any{"code": e.Code, "status": e.Status}
		if e.Details != "" {
			gqlErr.Extensions["details"] = e.Details
		}
		return gqlErr
	}
	var q *gqlerror.Error
	if errors.As(err, &q) && q.Unwrap() == nil {
		// The operation's own errors: ours (depth, introspection) say their
		// status already; gqlgen's parse and validation errors are a 400.
		if _, set := q.Extensions["status"]; !set {
			gqlErr.Extensions = map[string]any{"code": apierr.BadRequestCode, "status": http.StatusBadRequest}
		}
		return gqlErr
	}
	slog.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
	gqlErr.Message = "internal error"
	gqlErr.Extensions = map[string]any{"code": apierr.Internal, "status": http.StatusInternalServerError}
	return gqlErr
}
