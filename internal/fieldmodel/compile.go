package fieldmodel

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Config is what a Planner knows of the schema beyond the schema itself.
type Config struct {
	Schema *ast.Schema
	// Registry is the field model whose Plain fields plans follow, and
	// whose planned roots they write, bound to gqlgen's bindings (Declared
	// when nil).
	Registry *Registry
	// Check, when set, has gqlgen marshal every planned answer too, from the
	// same rows, and is called with both: the tests' proof that the two
	// paths answer byte for byte the same. It doubles the writing work.
	Check func(ctx context.Context, root string, planned, gqlgen []byte)
	// CacheBytes bounds the bytes the plan cache holds (CacheBytes when 0).
	CacheBytes int64
}

// A value is how one GraphQL value is written from a Go value.
type value struct {
	nonNull bool
	list    *value   // the element, for a list
	obj     *object  // for an object
	leaf    leafFunc // for a scalar or an enum
}

type leafFunc func(reflect.Value) graphql.Marshaler

// An object is the fields a selection writes of an object type.
type object struct {
	fields []field
}

type field struct {
	prefix   []byte // `"responseKey":`
	typename string // set for __typename
	index    []int  // the struct field, when read from the row
	key      func(parent any) (any, bool)
	load     func(ctx context.Context, key any) (any, error)
	val      *value
}

type compiler struct {
	p      *Planner
	op     *graphql.OperationContext
	fields int // planned so far
}

// compileValue plans the GraphQL type t over Go type gt, or answers false;
// a scalar or an enum is written as its field's binding fb says.
func (c *compiler) compileValue(t *ast.Type, gt reflect.Type, sel ast.SelectionSet, fb FieldBinding) (*value, bool) {
	v := &value{nonNull: t.NonNull}
	ptr := gt.Kind() == reflect.Pointer
	if ptr {
		gt = gt.Elem()
	}
	if t.Elem != nil {
		if ptr || gt.Kind() != reflect.Slice {
			return nil, false
		}
		el, ok := c.compileValue(t.Elem, gt.Elem(), sel, fb)
		if !ok {
			return nil, false
		}
		v.list = el
		return v, true
	}
	def := c.p.cfg.Schema.Types[t.NamedType]
	if def == nil {
		return nil, false
	}
	switch def.Kind {
	case ast.Object:
		if gt.Kind() != reflect.Struct {
			return nil, false
		}
		obj, ok := c.compileObject(def, reflect.PointerTo(gt), sel)
		v.obj = obj
		return v, ok
	case ast.Scalar, ast.Enum:
		v.leaf = leafOf(fb, gt)
		return v, v.leaf != nil
	}
	return nil, false
}

// compileObject plans sel over objects of type def whose rows are gt (a
// pointer to a struct): each field read where gqlgen's binding reads it,
// or from the loader of a Plain field.
func (c *compiler) compileObject(def *ast.Definition, gt reflect.Type, sel ast.SelectionSet) (*object, bool) {
	tb, ok := c.p.b.Types[def.Name]
	if !ok || reflect.PointerTo(tb.Go) != gt {
		return nil, false
	}
	obj := &object{}
	for i, f := range Collect(c.op, sel, def.Name) {
		if len(f.Deferrables) > 0 {
			return nil, false
		}
		c.fields++
		fl := field{prefix: responseKey(f.Alias, i > 0)}
		if f.Name == "__typename" {
			fl.typename = def.Name
			obj.fields = append(obj.fields, fl)
			continue
		}
		fd := def.Fields.ForName(f.Name)
		if fd == nil || len(fd.Arguments) > 0 {
			return nil, false
		}
		fb := tb.Fields[f.Name]
		var rows reflect.Type
		if decl, ok := c.p.reg.follow(def.Name, f.Name); ok {
			fl.key, fl.load, rows = decl.key, decl.load, decl.child
			if fd.Type.Elem != nil {
				rows = reflect.SliceOf(rows)
			}
		} else {
			if fb.Resolver {
				return nil, false
			}
			index, rt, ok := c.p.b.structIndex(def.Name, fb)
			if !ok {
				return nil, false
			}
			fl.index, rows = index, rt
		}
		val, ok := c.compileValue(fd.Type, rows, f.Selections, fb)
		if !ok {
			return nil, false
		}
		fl.val = val
		obj.fields = append(obj.fields, fl)
	}
	return obj, true
}

// responseKey is `"key":`, with the comma before every field but the first.
func responseKey(key string, comma bool) []byte {
	var b strings.Builder
	if comma {
		b.WriteByte(',')
	}
	graphql.MarshalString(key).MarshalGQL(&b)
	b.WriteByte(':')
	return []byte(b.String())
}

var marshalerType = reflect.TypeFor[graphql.Marshaler]()

// leafOf is how a scalar or an enum of Go type gt (a pointer removed) is
// written, as its field's binding says gqlgen writes it: through the
// marshal function the generated code calls, or the value's own MarshalGQL;
// nil when the binding gives no way.
func leafOf(fb FieldBinding, gt reflect.Type) leafFunc {
	switch {
	case fb.Marshaler && gt.Implements(marshalerType) && gt.Kind() == reflect.String:
		return (&enumWriter{}).leaf
	case fb.Marshaler && gt.Implements(marshalerType):
		return func(v reflect.Value) graphql.Marshaler { return v.Interface().(graphql.Marshaler) }
	case fb.Leaf != nil:
		return fb.Leaf
	}
	return nil
}

// enumWriter writes an enum through its own MarshalGQL once per value and
// keeps the bytes: a GPU's health or a node's status is one of a few
// values, written thousands of times a page.
type enumWriter struct {
	written sync.Map // value → raw
	n       atomic.Int32
}

// enumValues bounds what an enumWriter keeps: more distinct values than an
// enum has are not its values, and are written each time.
const enumValues = 64

func (e *enumWriter) leaf(v reflect.Value) graphql.Marshaler {
	s := v.String()
	if b, ok := e.written.Load(s); ok {
		return b.(raw)
	}
	var buf bytes.Buffer
	v.Interface().(graphql.Marshaler).MarshalGQL(&buf)
	if e.n.Add(1) <= enumValues {
		e.written.Store(s, raw(buf.Bytes()))
	}
	return raw(buf.Bytes())
}
