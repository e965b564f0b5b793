package plan

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/models"
)

// Follow answers how a nested field is read as its resolver reads it: key
// is a parent's key (false: none, the field is null), load the key's rows
// (a *V or a []*V), rows *V's type; ok is false for a field that is not
// read that way (prefetch.Registry.Follow).
type Follow func(typ, field string) (key func(parent any) (any, bool), load func(ctx context.Context, key any) (any, error), rows reflect.Type, ok bool)

// Config is what a Planner knows of the schema beyond the schema itself.
type Config struct {
	Schema *ast.Schema
	// Roots are the Query fields planned, with the Go type their resolver
	// answers. Each must answer a list, or a page whose empty value gqlgen
	// marshals without running a resolver or reporting an error: the
	// Planner hands gqlgen an empty answer.
	Roots map[string]reflect.Type
	// Resolved are the fields, per GraphQL type, that gqlgen answers through
	// a resolver method; one of them is planned only when Follow reads it.
	Resolved map[string][]string
	Follow   Follow
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

// compileValue plans the GraphQL type t over Go type gt, or answers false.
func (c *compiler) compileValue(t *ast.Type, gt reflect.Type, sel ast.SelectionSet) (*value, bool) {
	v := &value{nonNull: t.NonNull}
	ptr := gt.Kind() == reflect.Pointer
	if ptr {
		gt = gt.Elem()
	}
	if t.Elem != nil {
		if ptr || gt.Kind() != reflect.Slice {
			return nil, false
		}
		el, ok := c.compileValue(t.Elem, gt.Elem(), sel)
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
		v.leaf = leafOf(def, gt)
		return v, v.leaf != nil
	}
	return nil, false
}

// compileObject plans sel over objects of type def whose rows are gt (a
// pointer to a struct).
func (c *compiler) compileObject(def *ast.Definition, gt reflect.Type, sel ast.SelectionSet) (*object, bool) {
	obj := &object{}
	resolved := c.p.resolved[def.Name]
	for i, f := range graphql.CollectFields(c.op, sel, []string{def.Name}) {
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
		var rows reflect.Type
		if key, load, rt, ok := c.p.cfg.Follow(def.Name, f.Name); ok {
			fl.key, fl.load, rows = key, load, rt
			if fd.Type.Elem != nil {
				rows = reflect.SliceOf(rt)
			}
		} else {
			if resolved[strings.ToLower(f.Name)] {
				return nil, false
			}
			sf, ok := structField(gt, f.Name)
			if !ok {
				return nil, false
			}
			fl.index, rows = sf.Index, sf.Type
		}
		val, ok := c.compileValue(fd.Type, rows, f.Selections)
		if !ok {
			return nil, false
		}
		fl.val = val
		obj.fields = append(obj.fields, fl)
	}
	return obj, true
}

// structField finds the struct field gqlgen binds GraphQL field name to:
// the exported field whose name matches it case-insensitively (gqlgen's
// Go name of the field, K8sPhase for k8sPhase, GPUModelID for gpuModelId),
// as long as no method of the type could bind it instead.
func structField(ptr reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < ptr.NumMethod(); i++ {
		if strings.EqualFold(ptr.Method(i).Name, name) {
			return reflect.StructField{}, false
		}
	}
	sf, ok := ptr.Elem().FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
	if !ok || !sf.IsExported() {
		return reflect.StructField{}, false
	}
	return sf, true
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

var (
	marshalerType = reflect.TypeFor[graphql.Marshaler]()
	stringType    = reflect.TypeFor[string]()
	intType       = reflect.TypeFor[int]()
	int64Type     = reflect.TypeFor[int64]()
	int32Type     = reflect.TypeFor[int32]()
	boolType      = reflect.TypeFor[bool]()
	float64Type   = reflect.TypeFor[float64]()
	timeType      = reflect.TypeFor[time.Time]()
	stringMapType = reflect.TypeFor[map[string]string]()
)

// leafOf is the marshaler the generated code uses for scalar or enum def
// over Go type gt (a pointer removed), or nil when there is none to match.
func leafOf(def *ast.Definition, gt reflect.Type) leafFunc {
	if def.Kind == ast.Enum {
		if gt.Implements(marshalerType) && gt.Kind() == reflect.String {
			return (&enumWriter{}).leaf
		}
		return nil
	}
	switch {
	case def.Name == "String" && gt == stringType:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalString(v.String()) }
	case def.Name == "ID" && gt == stringType:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalID(v.String()) }
	case def.Name == "Int" && gt == intType:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalInt(int(v.Int())) }
	case def.Name == "Int" && gt == int64Type:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalInt64(v.Int()) }
	case def.Name == "Int" && gt == int32Type:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalInt32(int32(v.Int())) }
	case def.Name == "Boolean" && gt == boolType:
		return func(v reflect.Value) graphql.Marshaler { return graphql.MarshalBoolean(v.Bool()) }
	case def.Name == "Float" && gt == float64Type:
		return func(v reflect.Value) graphql.Marshaler { return models.MarshalFloat(v.Float()) }
	case def.Name == "Time" && gt == timeType:
		return func(v reflect.Value) graphql.Marshaler { return models.MarshalTime(v.Interface().(time.Time)) }
	case def.Name == "StringMap" && gt == stringMapType:
		return func(v reflect.Value) graphql.Marshaler {
			return models.MarshalStringMap(v.Interface().(map[string]string))
		}
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
