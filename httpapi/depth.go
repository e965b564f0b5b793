package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/apierr"
)

// DepthLimit refuses operations nested deeper than Max fields (gqlgen has
// complexity limits built in, but no depth limit). Introspection's own
// nesting counts like any other.
type DepthLimit struct{ Max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = DepthLimit{}

func (DepthLimit) ExtensionName() string                   { return "DepthLimit" }
func (DepthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d DepthLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if d.Max <= 0 || oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, map[string]bool{}); depth > d.Max {
		err := gqlerror.Errorf("query is nested %d levels deep, more than the limit of %d", depth, d.Max)
		err.Extensions = map[string]any{"code": apierr.BadRequestCode, "status": http.StatusBadRequest}
		return err
	}
	return nil
}

// selectionDepth counts fields along the deepest path; fragments add no
// level of their own, and a fragment already on the path is not re-entered.
func selectionDepth(set ast.SelectionSet, onPath map[string]bool) int {
	deepest := 0
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			d = 1 + selectionDepth(s.SelectionSet, onPath)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, onPath)
		case *ast.FragmentSpread:
			if s.Definition == nil || onPath[s.Name] {
				continue
			}
			onPath[s.Name] = true
			d = selectionDepth(s.Definition.SelectionSet, onPath)
			delete(onPath, s.Name)
		default:
			panic(fmt.Sprintf("unknown selection %T", sel))
		}
		if d > deepest {
			deepest = d
		}
	}
	return deepest
}
