package fieldmodel

import (
	"fmt"
	"reflect"

	"github.com/99designs/gqlgen/graphql"
)

// Bindings are how gqlgen binds the schema to Go, as its own binder decided
// at make generate: the fieldmodel plugin (internal/fieldmodel/gqlgenplugin) writes
// them into graph/fieldmodel_gen.go beside the executor gqlgen generates
// from the same data, so a plan reads a field where the generated code
// reads it and marshals it with the function the generated code calls.
// make check-generate fails when they drift from the schema or gqlgen.yml.
type Bindings struct {
	// Types are the object types bound to a Go struct, by GraphQL name.
	Types map[string]TypeBinding
	// Roots are the Go types the Query fields' resolvers answer.
	Roots map[string]reflect.Type
}

// A TypeBinding is one object type's Go struct and how each of its fields
// is read.
type TypeBinding struct {
	Go     reflect.Type
	Fields map[string]FieldBinding
}

// A FieldBinding is how gqlgen answers one field.
type FieldBinding struct {
	// Resolver: gqlgen calls a resolver method for it.
	Resolver bool
	// Struct is the Go struct field gqlgen reads it from ("" for a method,
	// a map or a resolver).
	Struct string
	// Leaf is what gqlgen marshals a scalar's value with (the value with
	// lists and pointers taken off: each element of a list), nil for an
	// object, for a value that marshals itself (Marshaler) and for one a
	// plan cannot marshal as gqlgen does (a context marshaler).
	Leaf func(reflect.Value) graphql.Marshaler
	// Marshaler: the value implements graphql.Marshaler itself (an enum, a
	// scalar type of its own); gqlgen writes it as it writes itself.
	Marshaler bool
}

// structIndex is the index of field f of t's struct (ok false: no such
// exported field, or not a struct).
func (b *Bindings) structIndex(typ string, f FieldBinding) ([]int, reflect.Type, bool) {
	tb, ok := b.Types[typ]
	if !ok || f.Struct == "" || tb.Go == nil || tb.Go.Kind() != reflect.Struct {
		return nil, nil, false
	}
	sf, ok := tb.Go.FieldByName(f.Struct)
	if !ok || !sf.IsExported() {
		return nil, nil, false
	}
	return sf.Index, sf.Type, true
}

// Field is how gqlgen answers field name of typ.
func (b *Bindings) Field(typ, name string) (FieldBinding, bool) {
	tb, ok := b.Types[typ]
	if !ok {
		return FieldBinding{}, false
	}
	f, ok := tb.Fields[name]
	return f, ok
}

// GoField is the Go struct field gqlgen reads field name of typ from, or
// "" when it calls a resolver or a method for it.
func (b *Bindings) GoField(typ, name string) string {
	f, _ := b.Field(typ, name)
	if f.Resolver {
		return ""
	}
	return f.Struct
}

// Check reports the first binding whose Go struct has not the field it
// names: generated code out of date with models.
func (b *Bindings) Check() error {
	for typ, tb := range b.Types {
		for name, f := range tb.Fields {
			if f.Struct == "" {
				continue
			}
			if _, _, ok := b.structIndex(typ, f); !ok {
				return fmt.Errorf("fieldmodel: %s.%s is bound to %s.%s, which does not exist: run make generate", typ, name, tb.Go, f.Struct)
			}
		}
	}
	return nil
}
