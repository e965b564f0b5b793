package fieldmodel

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Column narrowing: a read of a narrowed type's rows (Narrowed) fills only
// the columns the query's fields of that type read. A field's columns are
// the declared type's ColumnsOf the Go fields it reads: its declaration's
// Reads, or the struct field gqlgen binds it to (Bindings); a field that
// has neither (a method, an undeclared resolver), or that the type's
// ColumnsOf does not know, reads every column. __typename reads none. A
// declared field's ReadsRows add to its rows' type.

type narrowed struct {
	typ     string
	columns ColumnsOf
	always  []string
}

func (n narrowed) declare(r *Registry) { r.columns[n.typ] = n }

// Narrowed declares that reads of typ's rows are narrowed to the columns
// its selected fields read, as columns answers them; a page of typ's rows
// (PageColumns) always reads always first (its key).
func Narrowed(typ string, columns ColumnsOf, always ...string) Declaration {
	return narrowed{typ, columns, always}
}

type onQuery func(ctx context.Context, columns func(typ string) []string)

func (o onQuery) declare(r *Registry) { r.onQuery = append(r.onQuery, o) }

// OnQuery declares what the NarrowLoaders extension does before a query
// runs: set is called with the columns the whole operation reads of each
// narrowed type, wherever it selects them (every fragment, whatever @skip
// or @include say: a superset); nil reads every column.
func OnQuery(set func(ctx context.Context, columns func(typ string) []string)) Declaration {
	return onQuery(set)
}

// Bind hands the registry gqlgen's bindings of its schema (the generated
// graph.FieldBindings does, at init). It panics on a declaration that
// reads a Go field its type has not: generated code out of date.
func (r *Registry) Bind(b *Bindings) {
	if err := b.Check(); err != nil {
		panic(err)
	}
	for _, f := range r.Fields() {
		tb, ok := b.Types[f.Type]
		if !ok {
			continue
		}
		for _, name := range f.reads {
			if _, ok := tb.Go.FieldByName(name); !ok {
				panic(fmt.Sprintf("fieldmodel: %s.%s reads %s.%s, which does not exist", f.Type, f.Name, tb.Go, name))
			}
		}
	}
	r.bindings = b
}

// Bindings are what Bind was handed (nil before).
func (r *Registry) Bindings() *Bindings { return r.bindings }

// fieldColumns are the columns of typ's table field name reads (ok false:
// every column).
func (r *Registry) fieldColumns(typ, name string) ([]string, bool) {
	n, ok := r.columns[typ]
	if !ok {
		return nil, false
	}
	var goFields []string
	if d := r.fields[fieldKey{typ, name}]; d != nil {
		goFields = d.reads
	} else if r.bindings != nil {
		if gf := r.bindings.GoField(typ, name); gf != "" {
			goFields = []string{gf}
		}
	}
	return n.columns(name, goFields)
}

// columnSet gathers the columns of each narrowed type; nil for a type
// that reads every column.
type columnSet map[string][]string

func (c columnSet) add(typ string, cols []string, ok bool) {
	cur, narrowed := c[typ]
	if !narrowed || cur == nil {
		return // not narrowed, or every column already
	}
	if !ok {
		c[typ] = nil
		return
	}
	c[typ] = append(cur, cols...)
}

// field adds what field f of typ reads.
func (r *Registry) addField(c columnSet, typ, name string) {
	if name == "__typename" {
		return
	}
	if _, narrowed := c[typ]; narrowed {
		cols, ok := r.fieldColumns(typ, name)
		c.add(typ, cols, ok)
	}
	if d := r.fields[fieldKey{typ, name}]; d != nil && len(d.rowReads) > 0 {
		if rows, ok := r.types[d.child]; ok {
			if n, narrowed := r.columns[rows]; narrowed {
				cols, ok := n.columns("", d.rowReads)
				c.add(rows, cols, ok)
			}
		}
	}
}

// OperationColumns are the columns op reads of each narrowed type,
// anywhere in it (each fragment once, directives aside): what its loaders
// may be narrowed to. nil for a type: every column.
func (r *Registry) OperationColumns(op *ast.OperationDefinition) func(typ string) []string {
	c := columnSet{}
	for typ := range r.columns {
		c[typ] = []string{}
	}
	Every(op.SelectionSet, func(f *ast.Field) {
		if f.ObjectDefinition != nil {
			r.addField(c, f.ObjectDefinition.Name, f.Name)
		}
	})
	return func(typ string) []string { return c[typ] }
}

// PageColumns are the columns a page of rows of typ must read for what
// the GraphQL field being resolved selects of them (as Selection finds
// it): typ's always columns, then what the selected fields read, each
// once. Outside GraphQL (REST writes whole rows), for a type that is not
// narrowed, or when a selected field reads every column, it answers nil:
// every column.
func PageColumns(ctx context.Context, typ string) []string { return Declared.PageColumns(ctx, typ) }

// PageColumns is the package's PageColumns over r.
func (r *Registry) PageColumns(ctx context.Context, typ string) []string {
	n, ok := r.columns[typ]
	if !ok {
		return nil
	}
	sel, ok := Selection(ctx, typ)
	if !ok {
		return nil
	}
	c := columnSet{typ: append([]string{}, n.always...)}
	if sel != nil {
		for _, f := range Collect(graphql.GetOperationContext(ctx), sel, typ) {
			r.addField(c, typ, f.Name)
		}
	}
	cols := c[typ]
	if cols == nil {
		return nil
	}
	out := make([]string, 0, len(cols))
	seen := map[string]bool{}
	for _, col := range cols {
		if !seen[col] {
			seen[col] = true
			out = append(out, col)
		}
	}
	return out
}

// NarrowLoaders is the gqlgen extension that, before a query runs, hands
// the OnQuery declarations of Declared the columns it reads of each
// narrowed type. Mutations and subscriptions read whole rows.
func NarrowLoaders() graphql.HandlerExtension { return narrowLoaders{reg: Declared} }

type narrowLoaders struct{ reg *Registry }

func (narrowLoaders) ExtensionName() string                   { return "NarrowLoaders" }
func (narrowLoaders) Validate(graphql.ExecutableSchema) error { return nil }

func (n narrowLoaders) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	op := graphql.GetOperationContext(ctx)
	if len(n.reg.onQuery) > 0 && op.Operation != nil && op.Operation.Operation == ast.Query {
		cols := n.reg.OperationColumns(op.Operation)
		for _, set := range n.reg.onQuery {
			set(ctx, cols)
		}
	}
	return next(ctx)
}
