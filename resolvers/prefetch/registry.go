package prefetch

import (
	"context"
	"fmt"
	"reflect"

	"github.com/vektah/gqlparser/v2/ast"
)

// A Source is a request loader that a prefetch fills (loaders.Source).
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

// A Field declares how to prefetch one nested field: made by Load.
type Field struct {
	Type, Name string

	parent, child reflect.Type // the Go types of the parent and of the rows read
	source        any          // the loader, to share one read per level
	key           func(any) (any, bool)
	prime         func(context.Context, []any) ([]any, error)
	rowKey        func(any) any
	load          func(ctx context.Context, key any) (any, error)
	nextLevel     bool
	plain         bool
	sameKey       any // the source whose row key this field's key is
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

// Plain declares that the field's resolver answers exactly what its loader
// holds for the parent's key, and null for a zero key: nothing derived, no
// arguments. A plan (resolvers/plan) then writes the field from the
// loader's cache without calling the resolver.
func Plain(f *Field) { f.plain = true }

// Load declares that field name of GraphQL object type typ, whose objects
// are *P, loads from src by key(parent); a zero key loads nothing. Fields
// that name one src (compared as an interface value, so a pointer) share
// its read at each level.
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

type fieldKey struct{ typ, name string }

// A Registry is the prefetchable fields of a schema.
type Registry struct {
	fields  map[fieldKey]*Field
	types   map[reflect.Type]string // a parent's Go type → its GraphQL type
	goTypes map[string]reflect.Type // and back
	order   []fieldKey
}

// New makes a registry of fields. It panics on a field declared twice and
// on a Go type declared as two GraphQL types or the reverse: mistakes in
// the table, found by the first test that builds it.
func New(fields ...Field) *Registry {
	r := &Registry{fields: map[fieldKey]*Field{}, types: map[reflect.Type]string{}, goTypes: map[string]reflect.Type{}}
	for i := range fields {
		f := &fields[i]
		k := fieldKey{f.Type, f.Name}
		if r.fields[k] != nil {
			panic(fmt.Sprintf("prefetch: %s.%s declared twice", f.Type, f.Name))
		}
		if t, ok := r.types[f.parent]; ok && t != f.Type {
			panic(fmt.Sprintf("prefetch: %s is both %s and %s", f.parent, t, f.Type))
		}
		if t, ok := r.goTypes[f.Type]; ok && t != f.parent {
			panic(fmt.Sprintf("prefetch: %s is both %s and %s", f.Type, t, f.parent))
		}
		r.fields[k] = f
		r.types[f.parent] = f.Type
		r.goTypes[f.Type] = f.parent
		r.order = append(r.order, k)
	}
	return r
}

// Has reports whether field name of type typ is prefetched.
func (r *Registry) Has(typ, name string) bool { return r.fields[fieldKey{typ, name}] != nil }

// Follow answers how to read field name of type typ as its resolver would,
// when it is declared Plain: key is a parent's key (false: it has none, the
// field is null), load answers the key's rows (a *V, or a []*V for a list)
// from the request's loader, and rows is *V's type.
func (r *Registry) Follow(typ, name string) (key func(parent any) (any, bool), load func(ctx context.Context, key any) (any, error), rows reflect.Type, ok bool) {
	f := r.fields[fieldKey{typ, name}]
	if f == nil || !f.plain {
		return nil, nil, nil, false
	}
	return f.key, f.load, f.child, true
}

// Check reports the first declaration that does not match schema: a field
// the schema lacks, a type that is not an object type, or rows of a Go
// type other than the one the field's type is declared with.
func (r *Registry) Check(schema *ast.Schema) error {
	for _, k := range r.order {
		f := r.fields[k]
		def := schema.Types[f.Type]
		if def == nil || def.Kind != ast.Object {
			return fmt.Errorf("prefetch: %s.%s: %s is not an object type of the schema", f.Type, f.Name, f.Type)
		}
		fd := def.Fields.ForName(f.Name)
		if fd == nil {
			return fmt.Errorf("prefetch: %s.%s: no such field", f.Type, f.Name)
		}
		child := fd.Type.Name()
		if cd := schema.Types[child]; cd != nil && cd.Kind != ast.Object && cd.Kind != ast.Scalar && cd.Kind != ast.Enum {
			return fmt.Errorf("prefetch: %s.%s: %s is not an object type", f.Type, f.Name, child)
		}
		if t, ok := r.goTypes[child]; ok && t != f.child {
			return fmt.Errorf("prefetch: %s.%s reads %s, but %s is declared as %s", f.Type, f.Name, f.child, child, t)
		}
	}
	return nil
}
