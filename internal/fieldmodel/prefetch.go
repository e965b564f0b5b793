package fieldmodel

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Prefetch is Below over the declared fields of gpugraph's schema
// (Declared): what a list resolver calls on the rows it answers.
func Prefetch[T any](ctx context.Context, objects []*T) error {
	return Below(ctx, Declared, objects)
}

// Below prefetches what the GraphQL field being resolved selects below
// objects, the rows it answers: the field's own selection when it answers
// objects' type (a list of nodes), or the selection of its fields of that
// type when it answers a wrapper (a page whose field vms lists them); then
// it fills the objects' Filled fields the selection asks for. It does
// nothing outside a GraphQL request (a REST face calling the same resolver
// encodes no nested objects) and answers the first read that fails.
func Below[T any](ctx context.Context, r *Registry, objects []*T) error {
	if len(objects) == 0 || !graphql.HasOperationContext(ctx) {
		return nil
	}
	fc := graphql.GetFieldContext(ctx)
	typ, ok := r.types[reflect.TypeFor[*T]()]
	if fc == nil || !ok {
		return nil // no field of the objects' type is declared
	}
	op := graphql.GetOperationContext(ctx)
	sel := selectionOf(op, fc.Field, typ)
	parents := make([]any, len(objects))
	for i, o := range objects {
		parents[i] = o
	}
	w := walker{reg: r, op: op}
	if err := w.run(ctx, level{typ: typ, objects: parents, sel: sel}); err != nil {
		return err
	}
	return r.fillSelected(ctx, op, typ, sel, objects)
}

// fillSelected fills the Filled fields of typ that sel selects on rows.
func (r *Registry) fillSelected(ctx context.Context, op *graphql.OperationContext, typ string, sel ast.SelectionSet, rows any) error {
	fills := r.fills[typ]
	if len(fills) == 0 || len(sel) == 0 {
		return nil
	}
	for _, f := range Collect(op, sel, typ) {
		for _, fl := range fills {
			if fl.Name == f.Name {
				if err := fl.fill(ctx, rows); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// A level is objects of one GraphQL type and what the query selects of
// them.
type level struct {
	typ     string
	objects []any
	sel     ast.SelectionSet
	// early are rows already read for fields of these objects (SameKeyAs):
	// read with the objects themselves, by the keys the objects were read by.
	early map[*Field][]any
}

// A want is one selected registered field over one level's parents: the
// keys it reads, and the selection to walk in the rows they answer.
type want struct {
	field *Field
	keys  []any
	typ   string // the rows' GraphQL type
	sel   ast.SelectionSet
}

// A read is every want of one loader at one level: one statement.
type read struct {
	field *Field // the first; every want of the read shares its loader
	keys  []any
	seen  map[any]bool
	wants []*want
	rows  []any
	// early are the reads of the rows' own fields declared SameKeyAs this
	// read's loader: their keys are this read's, so they run beside it.
	early []*read
}

type walker struct {
	reg *Registry
	op  *graphql.OperationContext
}

// run reads level by level, breadth first, until no level selects a
// registered field.
func (w *walker) run(ctx context.Context, first level) error {
	levels := []level{first}
	var carried []*want // NextLevel fields of the previous level
	for len(levels) > 0 || len(carried) > 0 {
		var reads []*read
		var next []level // levels whose rows were read early
		bySource := map[any]*read{}
		add := func(wt *want) {
			rd := bySource[wt.field.source]
			if rd == nil {
				rd = &read{field: wt.field, seen: map[any]bool{}}
				bySource[wt.field.source] = rd
				reads = append(reads, rd)
			}
			for _, k := range wt.keys {
				if !rd.seen[k] {
					rd.seen[k] = true
					rd.keys = append(rd.keys, k)
				}
			}
			rd.wants = append(rd.wants, wt)
		}
		for _, wt := range carried {
			add(wt)
		}
		carried = nil
		for _, lv := range levels {
			for _, wt := range w.wants(lv) {
				switch rows, early := lv.early[wt.field]; {
				case early:
					next = append(next, (&read{field: wt.field, wants: []*want{wt}}).next(rows)...)
				case wt.field.nextLevel:
					carried = append(carried, wt)
				default:
					add(wt)
				}
			}
		}
		for _, rd := range reads {
			rd.early = w.early(rd)
		}
		levels = next
		if err := readAll(ctx, reads); err != nil {
			return err
		}
		for _, rd := range reads {
			levels = append(levels, rd.next(rd.rows)...)
		}
	}
	return nil
}

// early are the reads that can run beside rd: fields its rows' selections
// select that are declared SameKeyAs rd's loader, read by rd's keys.
func (w *walker) early(rd *read) []*read {
	var out []*read
	seen := map[*Field]bool{}
	for _, wt := range rd.wants {
		if len(wt.sel) == 0 {
			continue
		}
		for _, f := range Collect(w.op, wt.sel, wt.typ) {
			field := w.reg.fields[fieldKey{wt.typ, f.Name}]
			if field == nil || field.sameKey == nil || field.sameKey != rd.field.source || field.nextLevel || seen[field] {
				continue
			}
			seen[field] = true
			out = append(out, &read{field: field, keys: rd.keys})
		}
	}
	return out
}

// readAll runs a level's reads, each its own statement, and the reads that
// run beside them (early), all at once: they do not depend on one another,
// so a level waits for its slowest read, not for the sum of them. Each
// read keeps its rows; the first error, in the reads' order, is answered.
func readAll(ctx context.Context, reads []*read) error {
	var all []*read
	for _, rd := range reads {
		all = append(all, rd)
		all = append(all, rd.early...)
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, rd := range all {
		if len(rd.keys) == 0 {
			continue
		}
		run := func() {
			rd.rows, errs[i] = rd.field.prime(ctx, rd.keys)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("prefetch %s.%s: %w", rd.field.Type, rd.field.Name, errs[i])
			}
		}
		if i == len(all)-1 {
			run() // the last one on this goroutine
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// wants are the registered fields lv selects, aliases and fragments merged.
func (w *walker) wants(lv level) []*want {
	var out []*want
	byName := map[string]*want{}
	for _, f := range Collect(w.op, lv.sel, lv.typ) {
		if wt := byName[f.Name]; wt != nil {
			wt.sel = append(wt.sel, f.Selections...)
			continue
		}
		field := w.reg.fields[fieldKey{lv.typ, f.Name}]
		if field == nil || field.source == nil || strings.HasPrefix(f.Name, "__") {
			continue
		}
		wt := &want{field: field, typ: typeName(f.Field), sel: append(ast.SelectionSet(nil), f.Selections...)}
		seen := map[any]bool{}
		for _, o := range lv.objects {
			if k, ok := field.key(o); ok && !seen[k] {
				seen[k] = true
				wt.keys = append(wt.keys, k)
			}
		}
		byName[f.Name] = wt
		out = append(out, wt)
	}
	return out
}

// next hands each want of the read the rows of its own keys, as the level
// to walk next.
func (rd *read) next(rows []any) []level {
	var byKey map[any][]any
	var out []level
	for _, wt := range rd.wants {
		if len(wt.sel) == 0 {
			continue // a scalar, or nothing selected below
		}
		if byKey == nil {
			byKey = make(map[any][]any, len(rows))
			for _, row := range rows {
				k := rd.field.rowKey(row)
				byKey[k] = append(byKey[k], row)
			}
		}
		var objects []any
		for _, k := range wt.keys {
			objects = append(objects, byKey[k]...)
		}
		if len(objects) > 0 {
			lv := level{typ: wt.typ, objects: objects, sel: wt.sel}
			for _, e := range rd.early {
				if lv.early == nil {
					lv.early = map[*Field][]any{}
				}
				lv.early[e.field] = e.rows
			}
			out = append(out, lv)
		}
	}
	return out
}
