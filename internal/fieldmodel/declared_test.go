package fieldmodel_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/graph"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/models"
)

// notPrefetched are the resolver fields of an object type that are
// deliberately not declared, each with why.
// A field listed here loads through its batched loader alone, which is one
// statement a level only when the machine keeps up with the batch wait.
var notPrefetched = map[string]string{
	// An Organization is answered by root fields of one (organization,
	// createOrganization, setLowBalanceThreshold, setSpendLimit), never in
	// a list: its usage, its ledger and its billing events are one read
	// each, through package metering, whatever the query.
	"Organization.usage":         "one organization per root field",
	"Organization.ledger":        "one organization per root field",
	"Organization.billingEvents": "one organization per root field",
}

func gpugraphSchema() *ast.Schema {
	return graph.NewExecutableSchema(graph.Config{}).Schema()
}

// resolverFields are "Type.field" of every field gqlgen calls a resolver
// for below the root types (those marked `resolver: true` in gqlgen.yml,
// and any its models lack), read off the generated resolver interfaces.
func resolverFields(t *testing.T, s *ast.Schema) []string {
	t.Helper()
	var out []string
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := range root.NumMethod() {
		m := root.Method(i)
		def := typeNamed(s, m.Name)
		if def == nil {
			t.Fatalf("ResolverRoot.%s: no such type in the schema", m.Name)
		}
		if def == s.Query || def == s.Mutation || def == s.Subscription {
			continue
		}
		iface := m.Type.Out(0)
		for j := range iface.NumMethod() {
			name := iface.Method(j).Name
			fd := fieldNamed(def, name)
			if fd == nil {
				t.Fatalf("%sResolver.%s: no such field of %s", m.Name, name, def.Name)
			}
			out = append(out, def.Name+"."+fd.Name)
		}
	}
	slices.Sort(out)
	return out
}

func typeNamed(s *ast.Schema, goName string) *ast.Definition {
	for name, def := range s.Types {
		if strings.EqualFold(name, goName) {
			return def
		}
	}
	return nil
}

func fieldNamed(def *ast.Definition, goName string) *ast.FieldDefinition {
	for _, f := range def.Fields {
		if strings.EqualFold(f.Name, goName) {
			return f
		}
	}
	return nil
}

// unprefetched are the resolver fields answering an object or a list of
// objects that r does not prefetch and notPrefetched does not excuse.
func unprefetched(t *testing.T, r *fieldmodel.Registry) []string {
	t.Helper()
	s := gpugraphSchema()
	var out []string
	for _, tf := range resolverFields(t, s) {
		typ, field, _ := strings.Cut(tf, ".")
		answers := s.Types[s.Types[typ].Fields.ForName(field).Type.Name()]
		if answers.Kind != ast.Object || r.Has(typ, field) {
			continue
		}
		if _, ok := notPrefetched[tf]; !ok {
			out = append(out, tf)
		}
	}
	return out
}

// Every nested field that answers objects through a resolver is declared,
// so a list's statements stay one a level; a new one fails here until
// fields.go declares it (or notPrefetched excuses it).
func TestEveryNestedObjectFieldIsDeclared(t *testing.T) {
	if err := fieldmodel.Declared.Check(gpugraphSchema()); err != nil {
		t.Fatal(err)
	}
	if missing := unprefetched(t, fieldmodel.Declared); len(missing) > 0 {
		t.Fatalf("resolver fields not declared (internal/fieldmodel/fields.go): %v", missing)
	}
	fields := resolverFields(t, gpugraphSchema())
	for tf := range notPrefetched {
		typ, field, _ := strings.Cut(tf, ".")
		if !slices.Contains(fields, tf) || fieldmodel.Declared.Has(typ, field) {
			t.Errorf("notPrefetched excuses %s, which is no unregistered resolver field", tf)
		}
	}
}

// The check above bites: the declarations without VM.node's, as a field
// added to the schema without one would be, fail it.
func TestAnUndeclaredFieldIsFound(t *testing.T) {
	var fields []fieldmodel.Declaration
	for _, f := range fieldmodel.Declared.Fields() {
		if f.Type+"."+f.Name != "VM.node" {
			fields = append(fields, *f)
		}
	}
	if got := unprefetched(t, fieldmodel.NewRegistry(fields...)); !slices.Equal(got, []string{"VM.node"}) {
		t.Fatalf("unprefetched = %v, want [VM.node]", got)
	}
}

// Every field of the types whose reads are narrowed reads known columns:
// a declared field its Reads, any other the column of the Go field gqlgen
// binds it to (the field registries, package rowfield). A field that did
// not would make every query selecting it read every column.
func TestNarrowedTypesKnowEveryField(t *testing.T) {
	s := gpugraphSchema()
	b := fieldmodel.Declared.Bindings()
	columnOf := map[string]func(string) (string, bool){
		"Node": loaders.ColumnOf[models.Node], "Gpu": loaders.ColumnOf[models.GPU], "VM": loaders.ColumnOf[models.VM],
	}
	for typ, of := range columnOf {
		for _, f := range s.Types[typ].Fields {
			if strings.HasPrefix(f.Name, "__") || fieldmodel.Declared.Has(typ, f.Name) {
				continue
			}
			gf := b.GoField(typ, f.Name)
			if _, ok := of(gf); gf == "" || !ok {
				t.Errorf("%s.%s (Go field %q) has no column: declare what it reads, or register its column (package rowfield)", typ, f.Name, gf)
			}
		}
	}
}
