package extension

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/lib/apierr"
)

// NoIntrospection refuses, before execution, an operation that asks for
// __schema or __type when --introspection=false, with the FORBIDDEN code
// every other face of the API uses.
type NoIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = NoIntrospection{}

func (NoIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (NoIntrospection) Validate(graphql.ExecutableSchema) error { return nil }

func (n NoIntrospection) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	return n.check(oc.Operation, nil)
}

// check refuses op when it asks for introspection (documents runs it
// before validation too).
func (NoIntrospection) check(op *ast.OperationDefinition, _ map[string]any) *gqlerror.Error {
	if !asksIntrospection(op.SelectionSet) {
		return nil
	}
	err := gqlerror.Errorf("introspection is disabled on this server")
	err.Extensions = map[string]any{"code": apierr.Forbidden, "status": http.StatusForbidden}
	return err
}

// asksIntrospection looks at the root fields, through fragments.
func asksIntrospection(set ast.SelectionSet) bool {
	asks := false
	fieldmodel.Roots(set, func(f *ast.Field) { asks = asks || f.Name == "__schema" || f.Name == "__type" })
	return asks
}

var trimOnce sync.Once

// SpecDirectiveLocations takes DIRECTIVE_DEFINITION out of the built-in
// @deprecated's locations, once per process (the parsed schema is shared).
// gqlparser's prelude lists it, after the GraphQL spec draft and
// graphql-js 16.14; the October 2021 spec does not, and clients built on it
// fail on the introspection result: graphql-core 3.2 before 3.2.11 (the
// default of Python's gql) raises TypeError in build_client_schema, as it
// has no such DirectiveLocation. No schema of ours puts @deprecated on a
// directive definition, so nothing but the listing changes.
// ARGUMENT_DEFINITION and INPUT_FIELD_DEFINITION stay: they are in the
// 2021 spec and graphql-core 3.2 knows them.
func SpecDirectiveLocations(s *ast.Schema) {
	trimOnce.Do(func() {
		d := s.Directives["deprecated"]
		if d == nil {
			return
		}
		d.Locations = slices.DeleteFunc(slices.Clone(d.Locations), func(l ast.DirectiveLocation) bool {
			return l == ast.LocationDirectiveDefinition
		})
	})
}
