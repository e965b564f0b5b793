package fieldmodel

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
)

// Resolve answers declared field f of parent as its declaration says: the
// rows its loader holds for the parent's key (the zero R for a zero key),
// with the rows' Filled fields filled when the field being resolved
// selects them. The generated resolvers of Plain fields are this call
// (graph/fieldmodel_gen.go); a resolver that derives its value from the
// rows calls it for them. R is the loader's value: *V, or []*V for a
// loader of lists.
func Resolve[R any](ctx context.Context, f *Field, parent any) (R, error) {
	var zero R
	if f.source == nil {
		panic(fmt.Sprintf("fieldmodel: %s.%s loads nothing", f.Type, f.Name))
	}
	k, ok := f.key(parent)
	if !ok {
		return zero, nil
	}
	v, err := f.load(ctx, k)
	if err != nil {
		return zero, err
	}
	r, _ := v.(R)
	if typ, declared := f.reg.types[f.child]; declared && len(f.reg.fills[typ]) > 0 && graphql.HasOperationContext(ctx) {
		if sel, ok := Selection(ctx, typ); ok {
			if err := f.reg.fillSelected(ctx, graphql.GetOperationContext(ctx), typ, sel, v); err != nil {
				return zero, err
			}
		}
	}
	return r, nil
}
