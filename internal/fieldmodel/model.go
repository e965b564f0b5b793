package fieldmodel

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// A Source is a request loader that a field loads from and a prefetch
// fills (loaders.Source).
type Source[K comparable, V any] interface {
	// Prime reads keys in one statement and primes the request's loader;
	// it answers the rows read.
	Prime(ctx context.Context, keys []K) ([]*V, error)
	// Key is the loader key a row answers to.
	Key(row *V) K
	// Load answers the request loader's value for key: a *V, or a []*V for
	// a loader of lists.
	Load(ctx context.Context, key K) (any, error)
}

// A Field is the declaration of one field of a GraphQL object type that
// gqlgen does not read off a struct field alone: made by Load (a field
// answered from a loader) or Derived (a resolver that computes its value
// from the row).
type Field struct {
	Type, Name string

	reg           *Registry
	parent, child reflect.Type // the Go types of the parent and of the rows read (nil: no loader)
	source        any          // the loader, to share one read per level
	key           func(any) (any, bool)
	prime         func(context.Context, []any) ([]any, error)
	rowKey        func(any) any
	load          func(ctx context.Context, key any) (any, error)
	nextLevel     bool
	plain         bool
	sameKey       any // the source whose row key this field's key is
	// reads are the parent's Go fields the field reads (its key's), and
	// rowReads the Go fields of the rows it loads that it reads itself
	// (VM.gpuIds answers its GPUs' ids): what a narrowed read must fill.
	reads    []string
	rowReads []string
	// fill, when set, fills the struct field gqlgen binds the field to on
	// every list of the parents a declared field or a prefetched list
	// answers (Filled).
	fill func(ctx context.Context, rows any) error
}

// An Option changes how a Field is read.
type Option func(*Field)

// NextLevel reads the field's keys one level later, together with the next
// level's reads of the same loader: one statement where a deeper field
// fills the loader too. The field's own nested levels follow one level
// later as well.
func NextLevel(f *Field) { f.nextLevel = true }

// SameKeyAs declares that the field's key of a parent row is the key the
// row answers to in src (Node.gpus is keyed by the node's id, the key of
// NodeByID's rows). Where the parents are read from src, the field is then
// read beside them, by the same keys, instead of one level later: a
// round trip less, the same statement.
func SameKeyAs(src any) Option { return func(f *Field) { f.sameKey = src } }

// Plain declares that the field answers exactly what its loader holds for
// the parent's key, and null for a zero key: nothing derived, no
// arguments. Its resolver is then generated (Resolve, at make generate),
// and a plan writes the field from the loader's cache without calling it.
func Plain(f *Field) { f.plain = true }

// Reads names the Go fields of the parent the field reads (its key's): a
// read narrowed to the query's fields fills them.
func Reads(goFields ...string) Option {
	return func(f *Field) { f.reads = append(f.reads, goFields...) }
}

// ReadsRows names the Go fields of the rows the field loads that it reads
// itself, beyond what the query selects of them (VM.gpuIds reads its GPUs'
// ids).
func ReadsRows(goFields ...string) Option {
	return func(f *Field) { f.rowReads = append(f.rowReads, goFields...) }
}

// Filled declares that gqlgen reads the field off a struct field of the
// parent (Gpu.model off models.GPU.Model), which fill sets on a list of
// parents from the loader: every list of them that a declared field or a
// prefetched root answers is filled when its selection asks for the field.
// No resolver is generated; a plan still reads the loader.
func Filled[P any](fill func(ctx context.Context, rows []*P) error) Option {
	return func(f *Field) {
		f.fill = func(ctx context.Context, rows any) error {
			switch r := rows.(type) {
			case []*P:
				return fill(ctx, r)
			case *P:
				if r != nil {
					return fill(ctx, []*P{r})
				}
			}
			return nil
		}
	}
}

// Load declares that field name of GraphQL object type typ, whose objects
// are *P, loads from src by key(parent); a zero key loads nothing (null).
// Fields that name one src (compared as an interface value, so a pointer)
// share its read at each level.
func Load[P any, K comparable, V any](typ, name string, src Source[K, V], key func(*P) K, opts ...Option) Field {
	f := Field{
		Type:   typ,
		Name:   name,
		parent: reflect.TypeFor[*P](),
		child:  reflect.TypeFor[*V](),
		source: src,
		key: func(parent any) (any, bool) {
			var zero K
			k := key(parent.(*P))
			return k, k != zero
		},
		prime: func(ctx context.Context, keys []any) ([]any, error) {
			ks := make([]K, len(keys))
			for i, k := range keys {
				ks[i] = k.(K)
			}
			rows, err := src.Prime(ctx, ks)
			out := make([]any, len(rows))
			for i, r := range rows {
				out[i] = r
			}
			return out, err
		},
		rowKey: func(row any) any { return src.Key(row.(*V)) },
		load:   func(ctx context.Context, k any) (any, error) { return src.Load(ctx, k.(K)) },
	}
	for _, o := range opts {
		o(&f)
	}
	return f
}

// Derived declares a resolver field of typ, whose objects are *P, that
// loads nothing: it computes its value from the Go fields reads names
// (Gpu.memoryUsedBytes from MemoryUsedBytes). Only narrowing reads it.
func Derived[P any](typ, name string, reads ...string) Field {
	return Field{Type: typ, Name: name, parent: reflect.TypeFor[*P](), reads: reads}
}

// Loads reports whether the field is answered from a loader.
func (f *Field) Loads() bool { return f.source != nil }

// IsPlain reports whether the field is declared Plain: its resolver is
// generated, and plans follow it.
func (f *Field) IsPlain() bool { return f.plain }

// IsFilled reports whether the field is read off a struct field that the
// declaration fills (Filled): gqlgen binds it, no resolver answers it.
func (f *Field) IsFilled() bool { return f.fill != nil }

type fieldKey struct{ typ, name string }

// A Registry is the declared fields of a schema, and how the rows of its
// narrowed types are read (Columns).
type Registry struct {
	fields  map[fieldKey]*Field
	types   map[reflect.Type]string // a parent's Go type → its GraphQL type
	goTypes map[string]reflect.Type // and back
	fills   map[string][]*Field     // a GraphQL type's Filled fields
	order   []fieldKey
	columns map[string]narrowed
	onQuery []onQuery
	roots   []string
	// bindings are gqlgen's (Bind).
	bindings *Bindings
}

// ColumnsOf answers the columns of a narrowed type's table a field reads,
// by its GraphQL name and the Go fields it reads (Field.Reads, or the one
// gqlgen binds it to); ok is false for a field it does not know, which
// then reads every column.
type ColumnsOf func(field string, goFields []string) (columns []string, ok bool)

// A Declaration is what a Registry is made of: Fields (Load, Derived),
// narrowed types (Narrowed, OnQuery) and planned roots (Planned).
type Declaration interface{ declare(*Registry) }

func (f Field) declare(r *Registry) {
	k := fieldKey{f.Type, f.Name}
	if r.fields[k] != nil {
		panic(fmt.Sprintf("fieldmodel: %s.%s declared twice", f.Type, f.Name))
	}
	if t, ok := r.types[f.parent]; ok && t != f.Type {
		panic(fmt.Sprintf("fieldmodel: %s is both %s and %s", f.parent, t, f.Type))
	}
	if t, ok := r.goTypes[f.Type]; ok && t != f.parent {
		panic(fmt.Sprintf("fieldmodel: %s is both %s and %s", f.Type, t, f.parent))
	}
	f.reg = r
	r.fields[k] = &f
	r.types[f.parent] = f.Type
	r.goTypes[f.Type] = f.parent
	if f.fill != nil {
		r.fills[f.Type] = append(r.fills[f.Type], &f)
	}
	r.order = append(r.order, k)
}

type planned []string

func (p planned) declare(r *Registry) { r.roots = append(r.roots, p...) }

// Planned declares root Query fields whose answers a plan writes. Each
// answers a list, or a page whose empty value gqlgen marshals without a
// resolver or an error (the Planner hands gqlgen an empty answer).
func Planned(roots ...string) Declaration { return planned(roots) }

// NewRegistry makes a registry of declarations. It panics on a field
// declared twice and on a Go type declared as two GraphQL types or the
// reverse: mistakes in the table, found by the first test that builds it.
func NewRegistry(decls ...Declaration) *Registry {
	r := &Registry{fields: map[fieldKey]*Field{}, types: map[reflect.Type]string{}, goTypes: map[string]reflect.Type{},
		fills: map[string][]*Field{}, columns: map[string]narrowed{}}
	for _, d := range decls {
		d.declare(r)
	}
	return r
}

// Has reports whether field name of type typ is declared.
func (r *Registry) Has(typ, name string) bool { return r.fields[fieldKey{typ, name}] != nil }

// Field is the declaration of field name of typ; it panics when there is
// none (the generated resolvers name only declared fields).
func (r *Registry) Field(typ, name string) *Field {
	f := r.fields[fieldKey{typ, name}]
	if f == nil {
		panic(fmt.Sprintf("fieldmodel: %s.%s is not declared", typ, name))
	}
	return f
}

// Fields answers every declared field, in the order declared.
func (r *Registry) Fields() []*Field {
	out := make([]*Field, len(r.order))
	for i, k := range r.order {
		out[i] = r.fields[k]
	}
	return out
}

// Roots are the planned root fields.
func (r *Registry) Roots() []string { return slices.Clone(r.roots) }

// follow answers how to read field name of type typ as its resolver would,
// when it is declared Plain: key is a parent's key (false: it has none, the
// field is null), load answers the key's rows (a *V, or a []*V for a list)
// from the request's loader, and rows is *V's type.
func (r *Registry) follow(typ, name string) (*Field, bool) {
	f := r.fields[fieldKey{typ, name}]
	if f == nil || !f.plain || f.source == nil {
		return nil, false
	}
	return f, true
}

// Check reports the first declaration that does not match schema: a field
// the schema lacks, a type that is not an object type, rows of a Go type
// other than the one the field's type is declared with, a Plain field with
// arguments, or a planned root the Query type lacks.
func (r *Registry) Check(schema *ast.Schema) error {
	for _, k := range r.order {
		f := r.fields[k]
		def := schema.Types[f.Type]
		if def == nil || def.Kind != ast.Object {
			return fmt.Errorf("fieldmodel: %s.%s: %s is not an object type of the schema", f.Type, f.Name, f.Type)
		}
		fd := def.Fields.ForName(f.Name)
		if fd == nil {
			return fmt.Errorf("fieldmodel: %s.%s: no such field", f.Type, f.Name)
		}
		if f.plain && len(fd.Arguments) > 0 {
			return fmt.Errorf("fieldmodel: %s.%s takes arguments: it cannot be Plain", f.Type, f.Name)
		}
		if f.source == nil {
			continue
		}
		child := fd.Type.Name()
		if cd := schema.Types[child]; cd != nil && cd.Kind != ast.Object && cd.Kind != ast.Scalar && cd.Kind != ast.Enum {
			return fmt.Errorf("fieldmodel: %s.%s: %s is not an object type", f.Type, f.Name, child)
		}
		if t, ok := r.goTypes[child]; ok && t != f.child {
			return fmt.Errorf("fieldmodel: %s.%s reads %s, but %s is declared as %s", f.Type, f.Name, f.child, child, t)
		}
	}
	for _, root := range r.roots {
		if schema.Query == nil || schema.Query.Fields.ForName(root) == nil {
			return fmt.Errorf("fieldmodel: planned root %s is no field of Query", root)
		}
	}
	for typ := range r.columns {
		if def := schema.Types[typ]; def == nil || def.Kind != ast.Object {
			return fmt.Errorf("fieldmodel: narrowed type %s is not an object type of the schema", typ)
		}
	}
	return nil
}
