package httpapi

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
)

// noIntrospection refuses, before execution, an operation that asks for
// __schema or __type when --introspection=false, with the FORBIDDEN code
// every other face of the API uses.
type noIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = noIntrospection{}

func (noIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }

func (noIntrospection) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || !asksIntrospection(oc.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	err := gqlerror.Errorf("introspection is disabled on this server")
	err.Extensions = map[string]any{"code": apierr.Forbidden, "status": http.StatusForbidden}
	return err
}

// asksIntrospection looks at the root fields, through fragments.
func asksIntrospection(set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if asksIntrospection(s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && !seen[s.Name] {
				seen[s.Name] = true
				if asksIntrospection(s.Definition.SelectionSet, seen) {
					return true
				}
			}
		}
	}
	return false
}
