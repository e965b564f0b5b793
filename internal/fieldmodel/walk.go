package fieldmodel

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The one walker of selection sets. Everything in the server that reads
// what a query selects reads it here: the limits (httpapi's cost, depth,
// alias and root-field checks, and the document precheck), column
// narrowing, prefetch and the plans. Two ways of walking serve them all:
//
//   - Collect merges a selection set as gqlgen executes it (CollectFields:
//     @skip and @include applied, aliases and fragments merged, one entry
//     per response key), for what runs per field: prefetch, plans, a
//     resolver asking whether a subfield is selected.
//   - Walk and Fold go through a document's syntax as written, each
//     fragment spread followed once per walk or per set (whatever the
//     directives say: a superset), for what must bound or cover every
//     field before anything runs: the limits and narrowing.

// Collect answers the fields of sel that apply to an object of type typ
// (nil: of any type, as gqlgen collects the fields of a wrapper), merged
// as gqlgen merges them.
func Collect(op *graphql.OperationContext, sel ast.SelectionSet, typ ...string) []graphql.CollectedField {
	return graphql.CollectFields(op, sel, typ)
}

// Selects reports whether the GraphQL field being resolved selects its
// subfield name (outside a GraphQL request: false).
func Selects(ctx context.Context, name string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return false
	}
	for _, f := range Collect(graphql.GetOperationContext(ctx), fc.Field.Selections) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// SelectsOf reports whether the GraphQL field being resolved selects field
// name of its objects of type typ, found as Selection finds them.
func SelectsOf(ctx context.Context, typ, name string) bool {
	sel, ok := Selection(ctx, typ)
	if !ok || len(sel) == 0 {
		return false
	}
	for _, f := range Collect(graphql.GetOperationContext(ctx), sel, typ) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Selection answers what the GraphQL field being resolved selects of its
// objects of type typ (nil when it selects none): its own selection when
// it answers typ, else the selection of its fields that do, one wrapper
// deeper too (a connection lists its rows both as nodes and as edges'
// node); ok is false outside a GraphQL request.
func Selection(ctx context.Context, typ string) (sel ast.SelectionSet, ok bool) {
	if !graphql.HasOperationContext(ctx) {
		return nil, false
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil, false
	}
	return selectionOf(graphql.GetOperationContext(ctx), fc.Field, typ), true
}

// selectionOf is field's own selection when it answers typ, else the
// selection of its fields that do, looked for one wrapper deeper too.
func selectionOf(op *graphql.OperationContext, field graphql.CollectedField, typ string) ast.SelectionSet {
	own := typeName(field.Field)
	if own == typ {
		return field.Selections
	}
	return wrapped(op, field.Selections, own, typ, 2)
}

// wrapped is the selection of the fields of type typ in sel, a selection of
// type own, and of such fields of its object fields, depth levels down.
func wrapped(op *graphql.OperationContext, sel ast.SelectionSet, own, typ string, depth int) ast.SelectionSet {
	var out ast.SelectionSet
	for _, f := range Collect(op, sel, own) {
		switch t := typeName(f.Field); {
		case t == typ:
			out = append(out, f.Selections...)
		case depth > 1 && len(f.Selections) > 0:
			out = append(out, wrapped(op, f.Selections, t, typ, depth-1)...)
		}
	}
	return out
}

// typeName is the named type a field answers, lists and non-null unwrapped.
func typeName(f *ast.Field) string {
	if f == nil || f.Definition == nil {
		return ""
	}
	return f.Definition.Type.Name()
}

// Fragments finds the fragment a spread names: its Definition, set by
// validation (nil: none), when the walk runs on a validated document; a
// document's own list before validation (ByName).
type Fragments func(*ast.FragmentSpread) *ast.FragmentDefinition

// Bound is Fragments on a validated document: a spread's Definition.
func Bound(s *ast.FragmentSpread) *ast.FragmentDefinition { return s.Definition }

// ByName is Fragments before validation: the first fragment of list named
// as the spread (the one gqlparser's walker binds; validation refuses a
// duplicate).
func ByName(list map[string]*ast.FragmentDefinition) Fragments {
	return func(s *ast.FragmentSpread) *ast.FragmentDefinition { return list[s.Name] }
}

// A Walk goes through selection sets as written, following inline
// fragments and fragment spreads.
type Walk struct {
	// Fragments finds a spread's fragment (Bound when nil).
	Fragments Fragments
	// Enter, when set, is called on each inline fragment and each spread
	// followed (spread set, def its fragment) before its selections: the
	// precheck counts them, the plans refuse directives. A false answer
	// skips the fragment, an error stops the walk.
	Enter func(inline *ast.InlineFragment, spread *ast.FragmentSpread, def *ast.FragmentDefinition) (bool, error)
	// seen are the fragments already followed.
	seen map[string]bool
}

func (w *Walk) fragment(s *ast.FragmentSpread) *ast.FragmentDefinition {
	if w.Fragments == nil {
		return s.Definition
	}
	return w.Fragments(s)
}

// Fields calls field on each field of set, through inline fragments and
// the fragments set spreads, each fragment once for the whole Walk (a
// fragment spread twice at one level names the same fields, which the
// executor merges); field's false answer leaves out what is below it,
// an error stops the walk. deep walks the fields' own selections too (each
// fragment still once: its fields are the same wherever it lands).
func (w *Walk) Fields(set ast.SelectionSet, deep bool, field func(*ast.Field) (bool, error)) error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			below, err := field(s)
			if err != nil {
				return err
			}
			if deep && below {
				if err := w.Fields(s.SelectionSet, deep, field); err != nil {
					return err
				}
			}
		case *ast.InlineFragment:
			if w.Enter != nil {
				if ok, err := w.Enter(s, nil, nil); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
			}
			if err := w.Fields(s.SelectionSet, deep, field); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if w.seen[s.Name] {
				continue
			}
			def := w.fragment(s)
			if def == nil {
				continue
			}
			if w.seen == nil {
				w.seen = map[string]bool{}
			}
			w.seen[s.Name] = true
			if w.Enter != nil {
				if ok, err := w.Enter(nil, s, def); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
			}
			if err := w.Fields(def.SelectionSet, deep, field); err != nil {
				return err
			}
		}
	}
	return nil
}

// Every calls fn on every field of set and below, each fragment once;
// fragments are found as Bound finds them.
func Every(set ast.SelectionSet, fn func(*ast.Field)) {
	w := Walk{}
	_ = w.Fields(set, true, func(f *ast.Field) (bool, error) { fn(f); return true, nil })
}

// Roots calls fn on the fields of set itself, through its fragments
// (each once), not below them.
func Roots(set ast.SelectionSet, fn func(*ast.Field)) {
	w := Walk{}
	_ = w.Fields(set, false, func(f *ast.Field) (bool, error) { fn(f); return false, nil })
}

// Fold computes a value of a selection set from its fields' values: field
// answers one field's (below folds the field's own selection), add combines
// two. A fragment's value is computed once and reused wherever it is
// spread, so a document of fragments each spreading the next ten times
// costs one visit per fragment, not ten to the power of their number; a
// fragment met again on its own walk (a cycle, which validation refuses)
// adds nothing.
type Fold[T any] struct {
	Fragments Fragments
	Field     func(f *ast.Field, below func(ast.SelectionSet) T) T
	Add       func(a, b T) T
	memo      map[string]*foldFrag[T]
}

type foldFrag[T any] struct {
	v    T
	busy bool
}

// Set is set's value.
func (fo *Fold[T]) Set(set ast.SelectionSet) T {
	var total T
	for _, sel := range set {
		var v T
		switch s := sel.(type) {
		case *ast.Field:
			v = fo.Field(s, fo.Set)
		case *ast.InlineFragment:
			v = fo.Set(s.SelectionSet)
		case *ast.FragmentSpread:
			def := Bound(s)
			if fo.Fragments != nil {
				def = fo.Fragments(s)
			}
			if def == nil {
				continue
			}
			if fo.memo == nil {
				fo.memo = map[string]*foldFrag[T]{}
			}
			f, ok := fo.memo[s.Name]
			if !ok {
				f = &foldFrag[T]{busy: true}
				fo.memo[s.Name] = f
				f.v = fo.Set(def.SelectionSet)
				f.busy = false
			} else if f.busy {
				continue
			}
			v = f.v
		}
		total = fo.Add(total, v)
	}
	return total
}

// Merged calls spot on each spot of the answer, from the operation's root
// down: the fields that land on one object of it, as the executor merges
// them, grouped by response name in order of first appearance. A spot's
// fields are those of sets (the root's selection, or the selections of one
// group above) through their inline fragments and spreads, each fragment
// once per spot; enter, when set, is called on each fragment entered, and
// its error stops the walk. depth is 1 at the root, path the response names
// above. spot's error stops the walk; a false answer leaves out the spots
// below it.
func Merged(sets []ast.SelectionSet, frags Fragments, enter func() error,
	spot func(fields []*ast.Field, groups [][]*ast.Field, depth int, path []string) (bool, error)) error {
	return merged(sets, frags, enter, spot, 1, nil)
}

func merged(sets []ast.SelectionSet, frags Fragments, enter func() error,
	spot func([]*ast.Field, [][]*ast.Field, int, []string) (bool, error), depth int, path []string) error {
	var fields []*ast.Field
	w := Walk{Fragments: frags}
	if enter != nil {
		w.Enter = func(*ast.InlineFragment, *ast.FragmentSpread, *ast.FragmentDefinition) (bool, error) {
			return true, enter()
		}
	}
	for _, set := range sets {
		if err := w.Fields(set, false, func(f *ast.Field) (bool, error) { fields = append(fields, f); return false, nil }); err != nil {
			return err
		}
	}
	if len(fields) == 0 {
		return nil
	}
	index := make(map[string]int, len(fields))
	var groups [][]*ast.Field
	for _, f := range fields {
		name := ResponseName(f)
		i, ok := index[name]
		if !ok {
			i = len(groups)
			index[name] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], f)
	}
	if below, err := spot(fields, groups, depth, path); err != nil || !below {
		return err
	}
	for _, g := range groups {
		var below []ast.SelectionSet
		for _, f := range g {
			if len(f.SelectionSet) > 0 {
				below = append(below, f.SelectionSet)
			}
		}
		if below == nil {
			continue
		}
		if err := merged(below, frags, enter, spot, depth+1, append(path[:len(path):len(path)], ResponseName(g[0]))); err != nil {
			return err
		}
	}
	return nil
}

// ResponseName is the key a field answers under: its alias, else its name.
func ResponseName(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// A Syntax scan visits every selection of a set as written, fields' own
// selections included, without following spreads: a scan of a document's
// syntax (the precheck's count of its nodes and directives). Each callback
// may be nil.
type Syntax struct {
	Field  func(*ast.Field)
	Inline func(directives ast.DirectiveList)
	Spread func(name string, directives ast.DirectiveList)
}

// Scan visits set.
func (v Syntax) Scan(set ast.SelectionSet) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if v.Field != nil {
				v.Field(s)
			}
			v.Scan(s.SelectionSet)
		case *ast.InlineFragment:
			if v.Inline != nil {
				v.Inline(s.Directives)
			}
			v.Scan(s.SelectionSet)
		case *ast.FragmentSpread:
			if v.Spread != nil {
				v.Spread(s.Name, s.Directives)
			}
		}
	}
}

// directives reports whether sel, or a fragment it spreads, carries a
// directive.
func directives(sel ast.SelectionSet) bool {
	found := false
	w := Walk{Enter: func(in *ast.InlineFragment, sp *ast.FragmentSpread, def *ast.FragmentDefinition) (bool, error) {
		if in != nil && len(in.Directives) > 0 || sp != nil && (len(sp.Directives) > 0 || len(def.Directives) > 0) {
			found = true
		}
		return !found, nil
	}}
	_ = w.Fields(sel, true, func(f *ast.Field) (bool, error) {
		if len(f.Directives) > 0 {
			found = true
		}
		return !found, nil
	})
	return found
}
