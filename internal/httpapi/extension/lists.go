package extension

import (
	"context"
	"reflect"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/live"
)

// Every list a GraphQL argument takes, at any depth of its input objects,
// holds at most maxListValues values unless listCaps names another cap for
// it; over the cap, the whole operation is refused before it runs (HTTP
// 400 naming the argument and the cap). A list that reaches SQL becomes
// one parameter per value, and both engines cap parameters (SQLite at
// 32,766, PostgreSQL at 65,535): 70,000 statuses answered INTERNAL.
// Within the cap, repeated values are dropped before the resolver sees
// them (DistinctLists).
const maxListValues = bounds.MaxParamValues

// listCaps are the caps that differ from maxListValues, by argument
// coordinate (Type.field.argument).
var listCaps = map[string]int{
	// filterBy's own bound, which filterby holds again after comma
	// splitting; the REST face's too.
	"Query.pods.filterBy":           bounds.MaxFilters,
	"Query.podsCount.filterBy":      bounds.MaxFilters,
	"Query.workloadPods.filterBy":   bounds.MaxFilters,
	"Query.podsConnection.filterBy": bounds.MaxFilters,
	"Subscription.vmEvents.ids":     live.MaxIDs,
	"Subscription.nodeEvents.ids":   live.MaxIDs,
}

// argumentCoordinate is Type.field.argument for f's argument arg.
func argumentCoordinate(f *ast.Field, arg string) string {
	typ := ""
	if f.ObjectDefinition != nil {
		typ = f.ObjectDefinition.Name
	}
	return typ + "." + f.Name + "." + arg
}

// checkList holds value v of argument arg of field (of type t, at
// coordinate coord) to the list caps: the argument's own list, and any
// list inside its input objects or nested lists (those take the default).
func (w *costWalker) checkList(coord, arg, field string, t *ast.Type, v any) *gqlerror.Error {
	if v == nil || t == nil {
		return nil
	}
	if t.Elem != nil {
		l, ok := v.([]any)
		if !ok {
			// One value where a list is expected is a list of one.
			return w.checkList("", arg, field, t.Elem, v)
		}
		max := maxListValues
		if c, ok := listCaps[coord]; ok {
			max = c
		}
		if len(l) > max {
			return limitError("argument %s of %s: %d values, more than the limit of %d", arg, field, len(l), max)
		}
		for _, e := range l {
			if err := w.checkList("", arg, field, t.Elem, e); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok || w.schema == nil {
		return nil
	}
	def := w.schema.Types[t.Name()]
	if def == nil || def.Kind != ast.InputObject {
		return nil
	}
	for name, fv := range m {
		if fd := def.Fields.ForName(name); fd != nil {
			if err := w.checkList("", arg+"."+name, field, fd.Type, fv); err != nil {
				return err
			}
		}
	}
	return nil
}

// DistinctLists drops repeated values from every list argument before a
// resolver reads it (vms(status: [RUNNING, RUNNING]) asks what
// vms(status: [RUNNING]) asks), keeping the first of each in its place. It
// reads the arguments gqlgen has just coerced for this one field, so
// nothing shared is changed.
type DistinctLists struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = DistinctLists{}

func (DistinctLists) ExtensionName() string                   { return "DistinctLists" }
func (DistinctLists) Validate(graphql.ExecutableSchema) error { return nil }

func (DistinctLists) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		for name, v := range fc.Args {
			if d, ok := distinct(v); ok {
				fc.Args[name] = d
			}
		}
	}
	return next(ctx)
}

// distinct answers v without its repeated elements, and whether it had
// any: v must be a slice of comparable values (enums, strings, ids).
func distinct(v any) (any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Len() < 2 || !scalarKind(rv.Type().Elem().Kind()) {
		return v, false
	}
	seen := make(map[any]bool, rv.Len())
	out := reflect.MakeSlice(rv.Type(), 0, rv.Len())
	for i := range rv.Len() {
		e := rv.Index(i)
		k := e.Interface()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = reflect.Append(out, e)
	}
	if out.Len() == rv.Len() {
		return v, false
	}
	return out.Interface(), true
}

// scalarKind reports whether values of kind k compare as GraphQL's
// scalars and enums do (interfaces may hold maps, which do not compare).
func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
