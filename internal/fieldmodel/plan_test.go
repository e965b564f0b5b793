package fieldmodel

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/models"
)

// The plans over a small schema of their own, apart from gqlgen's
// executor: bindings written as the plugin writes them, rows in memory.
var planSchema = gqlparser.MustLoadSchema(&ast.Source{Name: "shelves.graphqls", Input: `
scalar Time
enum Kind { OPEN CLOSED }
type Query { shelves: [Shelf!]! page: ShelfPage! }
type ShelfPage { shelves: [Shelf!]! total: Int! }
type Shelf {
  id: ID!
  name: String!
  kind: Kind!
  opened: Time
  tags: [String!]
  books: [Book!]!
  curator: Author
  label: String!
  count(min: Int): Int!
}
type Book { id: ID! title: String! author: Author }
type Author { id: ID! name: String! }
`})

type kind string

func (k kind) MarshalGQL(w io.Writer) { io.WriteString(w, strconv.Quote(string(k))) }

type (
	shelf struct {
		ID, Name, Curator string
		Kind              kind
		Opened            *time.Time
		Tags              []string
	}
	shelfPage struct {
		Shelves []*shelf
		Total   int
	}
	book   struct{ ID, Title, Shelf, Author string }
	author struct{ ID, Name string }
)

// memory is a loader over rows in memory: Load answers a key's rows, one
// row (one) or a list.
type memory[K comparable, V any] struct {
	rows  []*V
	key   func(*V) K
	one   bool
	loads int
}

func (m *memory[K, V]) Prime(_ context.Context, keys []K) ([]*V, error) { return nil, nil }
func (m *memory[K, V]) Key(r *V) K                                      { return m.key(r) }
func (m *memory[K, V]) Load(_ context.Context, k K) (any, error) {
	m.loads++
	var out []*V
	for _, r := range m.rows {
		if m.key(r) == k {
			if m.one {
				return r, nil
			}
			out = append(out, r)
		}
	}
	if m.one {
		return (*V)(nil), nil
	}
	if out == nil {
		out = []*V{}
	}
	return out, nil
}

func str(v reflect.Value) graphql.Marshaler { return graphql.MarshalString(v.String()) }
func id(v reflect.Value) graphql.Marshaler  { return graphql.MarshalID(v.String()) }

var planBindings = &Bindings{
	Types: map[string]TypeBinding{
		"Shelf": {Go: reflect.TypeFor[shelf](), Fields: map[string]FieldBinding{
			"id": {Struct: "ID", Leaf: id}, "name": {Struct: "Name", Leaf: str}, "kind": {Struct: "Kind", Marshaler: true},
			"opened": {Struct: "Opened", Leaf: func(v reflect.Value) graphql.Marshaler {
				return models.MarshalTime(v.Interface().(time.Time))
			}},
			"tags": {Struct: "Tags", Leaf: str}, "books": {Resolver: true}, "curator": {Resolver: true},
			"label": {Resolver: true, Leaf: str}, "count": {Resolver: true},
		}},
		"ShelfPage": {Go: reflect.TypeFor[shelfPage](), Fields: map[string]FieldBinding{
			"shelves": {Struct: "Shelves"},
			"total":   {Struct: "Total", Leaf: func(v reflect.Value) graphql.Marshaler { return graphql.MarshalInt(int(v.Int())) }},
		}},
		"Book": {Go: reflect.TypeFor[book](), Fields: map[string]FieldBinding{
			"id": {Struct: "ID", Leaf: id}, "title": {Struct: "Title", Leaf: str}, "author": {Resolver: true},
		}},
		"Author": {Go: reflect.TypeFor[author](), Fields: map[string]FieldBinding{
			"id": {Struct: "ID", Leaf: id}, "name": {Struct: "Name", Leaf: str},
		}},
	},
	Roots: map[string]reflect.Type{"shelves": reflect.TypeFor[[]*shelf](), "page": reflect.TypeFor[*shelfPage]()},
}

type shelves struct {
	rows    []*shelf
	books   *memory[string, book]
	authors *memory[string, author]
	planner *Planner
}

func newShelves(t *testing.T) *shelves {
	t.Helper()
	opened := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &shelves{
		rows: []*shelf{
			{ID: "s1", Name: "Poetry", Kind: "OPEN", Opened: &opened, Tags: []string{"a", "b"}, Curator: "a1"},
			{ID: "s2", Name: "Prose \"new\"", Kind: "CLOSED", Tags: []string{}},
		},
		books: &memory[string, book]{key: func(b *book) string { return b.Shelf }, rows: []*book{
			{"b1", "Odes", "s1", "a1"}, {"b2", "Sonnets", "s1", ""},
		}},
		authors: &memory[string, author]{one: true, key: func(a *author) string { return a.ID }, rows: []*author{{"a1", "Keats"}}},
	}
	reg := NewRegistry(
		Load("Shelf", "books", s.books, func(x *shelf) string { return x.ID }, Plain),
		Load("Shelf", "curator", s.authors, func(x *shelf) string { return x.Curator }, Plain),
		Load("Book", "author", s.authors, func(b *book) string { return b.Author }, Plain),
		Derived[shelf]("Shelf", "label", "Name"),
		Planned("shelves", "page"),
	)
	if err := reg.Check(planSchema); err != nil {
		t.Fatal(err)
	}
	reg.Bind(planBindings)
	s.planner = NewPlanner(Config{Schema: planSchema, Registry: reg})
	return s
}

// operation is query parsed and validated, with vars.
func operation(t *testing.T, query string, vars map[string]any) *graphql.OperationContext {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(planSchema, query)
	if errs != nil {
		t.Fatal(errs)
	}
	return &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars}
}

// write plans query's first root field and writes answer with it; ok is
// false when the plan leaves the field to gqlgen, err is the writer's.
func (s *shelves) write(t *testing.T, query string, vars map[string]any, answer any) (out string, ok bool, err error) {
	t.Helper()
	op := operation(t, query, vars)
	root := Collect(op, op.Operation.SelectionSet, "Query")[0]
	pl := s.planner.plan(op, root)
	if pl.root == nil {
		return "", false, nil
	}
	w := &writer{ctx: context.Background()}
	err = w.value(pl.root, reflect.ValueOf(answer))
	return w.buf.String(), true, err
}

// A plan writes what gqlgen writes: fields in the selection's order under
// their response keys (aliases, fragments merged), __typename, scalars
// through the bindings' marshalers, enums through their own, null for a
// nil pointer or a nil nullable list, [] for an empty one, and the Plain
// fields from their loaders (null for a zero key).
func TestAPlanWritesAsTheBindingsSay(t *testing.T) {
	s := newShelves(t)
	got, ok, err := s.write(t, `{ shelves { __typename id n: name ... on Shelf { kind opened } tags ...B } }
		fragment B on Shelf { books { title author { name } } curator { id } name }`, nil, s.rows)
	if !ok || err != nil {
		t.Fatalf("planned %v, %v", ok, err)
	}
	want := `[{"__typename":"Shelf","id":"s1","n":"Poetry","kind":"OPEN","opened":"2026-01-02T03:04:05.000Z","tags":["a","b"],` +
		`"books":[{"title":"Odes","author":{"name":"Keats"}},{"title":"Sonnets","author":null}],"curator":{"id":"a1"},"name":"Poetry"},` +
		`{"__typename":"Shelf","id":"s2","n":"Prose \"new\"","kind":"CLOSED","opened":null,"tags":[],"books":[],"curator":null,"name":"Prose \"new\""}]`
	if got != want {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
	// A key read twice on one answer is loaded once.
	if s.authors.loads != 2 { // a1 for the books, a1 for the curator: one field each
		t.Errorf("%d author loads, want 2", s.authors.loads)
	}

	nilTags := []*shelf{{ID: "s3", Kind: "OPEN"}}
	if got, _, _ := s.write(t, `{ shelves { tags } }`, nil, nilTags); got != `[{"tags":null}]` {
		t.Errorf("nil tags: %s", got)
	}
	page := &shelfPage{Shelves: s.rows[:1], Total: 7}
	if got, _, _ := s.write(t, `{ page { total shelves { id } } }`, nil, page); got != `{"total":7,"shelves":[{"id":"s1"}]}` {
		t.Errorf("page: %s", got)
	}
}

// Whatever the plan cannot read as gqlgen does is gqlgen's, the whole root
// field: a resolver that derives its value, a field with arguments, a
// deferred fragment.
func TestAPlanLeavesToGqlgenWhatItCannotRead(t *testing.T) {
	s := newShelves(t)
	for _, q := range []string{
		`{ shelves { id label } }`,
		`{ shelves { id count(min: 2) } }`,
		`{ shelves { id ... @defer { name } } }`,
	} {
		if _, ok, _ := s.write(t, q, nil, s.rows); ok {
			t.Errorf("%s: planned", q)
		}
	}
	// A non-null field without a value is an error gqlgen reports.
	if _, ok, err := s.write(t, `{ page { shelves { id } } }`, nil, &shelfPage{Shelves: []*shelf{nil}}); !ok || err != errGqlgen {
		t.Errorf("a null in [Shelf!]!: planned %v, err %v", ok, err)
	}
}

// A plan is kept per document and field, unless a directive in its
// selection reads the request's variables.
func TestPlansAreCachedUnlessDirectivesReadVariables(t *testing.T) {
	s := newShelves(t)
	q := `{ shelves { id } }`
	op1, op2 := operation(t, q, nil), operation(t, q, nil)
	p1 := s.planner.plan(op1, Collect(op1, op1.Operation.SelectionSet, "Query")[0])
	if !p1.cached || s.planner.plans.Len() != 1 {
		t.Fatalf("not cached: %d plans", s.planner.plans.Len())
	}
	// The same text parsed again is another document: its own plan.
	if p2 := s.planner.plan(op2, Collect(op2, op2.Operation.SelectionSet, "Query")[0]); p2 == p1 {
		t.Error("two documents share a plan")
	}
	if again := s.planner.plan(op1, Collect(op1, op1.Operation.SelectionSet, "Query")[0]); again != p1 {
		t.Error("one document, two plans")
	}
	for _, vars := range []map[string]any{{"x": true}, {"x": false}} {
		op := operation(t, `query($x: Boolean!) { shelves { id name @include(if: $x) } }`, vars)
		pl := s.planner.plan(op, Collect(op, op.Operation.SelectionSet, "Query")[0])
		if pl.cached || pl.root == nil {
			t.Errorf("vars %v: cached %v, root %v", vars, pl.cached, pl.root != nil)
		}
		w := &writer{ctx: context.Background()}
		if err := w.value(pl.root, reflect.ValueOf(s.rows[:1])); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: `[{"id":"s1","name":"Poetry"}]`, false: `[{"id":"s1"}]`}[vars["x"].(bool)]
		if w.buf.String() != want {
			t.Errorf("vars %v: %s", vars, w.buf.String())
		}
	}
	if s.planner.plans.Len() != 2 {
		t.Errorf("%d plans cached, want 2", s.planner.plans.Len())
	}
}

// The self-check counts a first answer that is gqlgen's as the same; one
// that is not is answered with gqlgen's bytes, counted, and its plan is
// not used again.
func TestTheSelfCheck(t *testing.T) {
	s := newShelves(t)
	pl := &compiled{cached: true}
	if answer, same := s.planner.selfCheck(context.Background(), pl, "shelves", []byte(`[1]`), []byte(`[1]`)); !same || string(answer) != `[1]` {
		t.Fatalf("same answers: %s, %v", answer, same)
	}
	answer, same := s.planner.selfCheck(context.Background(), pl, "shelves", []byte(`[{"a":1.0}]`), []byte(`[{"a":1}]`))
	if same || string(answer) != `[{"a":1}]` || !pl.diverged.Load() {
		t.Fatalf("different answers: %s, same %v, diverged %v", answer, same, pl.diverged.Load())
	}
	if same, diverged := s.planner.Checks(); same != 1 || diverged != 1 {
		t.Fatalf("Checks = %d, %d", same, diverged)
	}
}

// An enum's bytes are written once per value and kept (at most enumValues
// of them); past that each is written anew, and still right.
func TestEnumsAreWrittenOnce(t *testing.T) {
	e := &enumWriter{}
	for i := range enumValues + 10 {
		v := reflect.ValueOf(kind("K" + strconv.Itoa(i)))
		for range 2 {
			var b bytes.Buffer
			e.leaf(v).MarshalGQL(&b)
			if b.String() != strconv.Quote("K"+strconv.Itoa(i)) {
				t.Fatalf("%d: %s", i, b.String())
			}
		}
	}
	n := 0
	e.written.Range(func(any, any) bool { n++; return true })
	if n != enumValues {
		t.Fatalf("%d values kept, want %d", n, enumValues)
	}
}

// Bindings out of date with the Go types are found: at Bind, a
// declaration reading a Go field that is gone; at Check, a binding naming
// one.
func TestStaleBindingsAreFound(t *testing.T) {
	b := &Bindings{Types: map[string]TypeBinding{"Shelf": {Go: reflect.TypeFor[shelf](), Fields: map[string]FieldBinding{"id": {Struct: "Identifier"}}}}}
	if err := b.Check(); err == nil {
		t.Error("Check passes a binding to a missing field")
	}
	defer func() {
		if recover() == nil {
			t.Error("Bind takes a declaration reading a missing field")
		}
	}()
	NewRegistry(Derived[shelf]("Shelf", "label", "Title")).Bind(planBindings)
}

// The recipe of the package doc, on the plan and narrowing side: until
// Shelf.curator is declared, a selection of it is gqlgen's and reads every
// column of shelves; its one declaration (Plain, Reads) plans it and
// narrows the read to its key's column.
func TestRecipeAddingANestedFieldPlansAndNarrows(t *testing.T) {
	s := newShelves(t)
	columns := func(_ string, goFields []string) ([]string, bool) {
		if goFields == nil {
			return nil, false
		}
		var out []string
		for _, f := range goFields {
			out = append(out, strings.ToLower(f))
		}
		return out, true
	}
	registry := func(decls ...Declaration) *Registry {
		r := NewRegistry(append(decls, Narrowed("Shelf", columns), Planned("shelves"))...)
		r.Bind(planBindings)
		return r
	}
	curator := Load("Shelf", "curator", s.authors, func(x *shelf) string { return x.Curator }, Plain, Reads("Curator"))
	q := `{ shelves { name curator { name } } }`
	for _, c := range []struct {
		reg     *Registry
		planned string
		columns []string
	}{
		{registry(), "", nil},
		{registry(curator), `[{"name":"Poetry","curator":{"name":"Keats"}}]`, []string{"name", "curator"}},
	} {
		p := NewPlanner(Config{Schema: planSchema, Registry: c.reg})
		op := operation(t, q, nil)
		pl := p.plan(op, Collect(op, op.Operation.SelectionSet, "Query")[0])
		got := ""
		if pl.root != nil {
			w := &writer{ctx: context.Background()}
			if err := w.value(pl.root, reflect.ValueOf(s.rows[:1])); err != nil {
				t.Fatal(err)
			}
			got = w.buf.String()
		}
		if got != c.planned {
			t.Errorf("planned %q, want %q", got, c.planned)
		}
		if cols := c.reg.OperationColumns(op.Operation)("Shelf"); !slices.Equal(cols, c.columns) {
			t.Errorf("columns %q, want %q", cols, c.columns)
		}
	}
}
