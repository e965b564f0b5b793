package fieldmodel_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/fieldmodel"
)

// A small schema of its own, so the walker is tested apart from gpugraph's.
var schema = gqlparser.MustLoadSchema(&ast.Source{Name: "library.graphqls", Input: `
type Query { page: ShelfPage!  shelves: [Shelf!]! }
type ShelfPage { shelves: [Shelf!]! total: Int! }
type Shelf { id: ID! books: [Book!]! curator: Author }
type Book { id: ID! author: Author }
type Author { id: ID! name: String! publisher: Publisher books: [Book!]! }
type Publisher { id: ID! name: String! }
`})

type (
	Shelf     struct{ ID, Curator string }
	Book      struct{ ID, Shelf, Author string }
	Author    struct{ ID, Publisher string }
	Publisher struct{ ID string }
)

// source is a loader over rows in memory that logs each read.
type source[K comparable, V any] struct {
	name string
	rows []*V
	key  func(*V) K
	log  *[]string
	fail error
	// meet, when set, holds each read until as many reads as it counts
	// have started: they must run at once.
	meet *sync.WaitGroup
}

// logMu guards the sources' log: one level's reads run at once.
var logMu sync.Mutex

func (s *source[K, V]) Prime(_ context.Context, keys []K) ([]*V, error) {
	logMu.Lock()
	*s.log = append(*s.log, fmt.Sprintf("%s %v", s.name, keys))
	logMu.Unlock()
	if s.meet != nil {
		s.meet.Done()
		met := make(chan struct{})
		go func() { s.meet.Wait(); close(met) }()
		select {
		case <-met:
		case <-time.After(5 * time.Second):
			return nil, fmt.Errorf("%s read alone: the reads of its level did not run at once", s.name)
		}
	}
	if s.fail != nil {
		return nil, s.fail
	}
	want := map[K]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []*V
	for _, r := range s.rows {
		if want[s.key(r)] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *source[K, V]) Key(r *V) K { return s.key(r) }

// Load is not walked: the walk primes, a plan loads.
func (s *source[K, V]) Load(context.Context, K) (any, error) { return nil, nil }

type library struct {
	log        []string
	shelves    []*Shelf
	books      *source[string, Book]
	authors    *source[string, Author]
	publishers *source[string, Publisher]
}

func newLibrary() *library {
	l := &library{}
	for i := 1; i <= 3; i++ {
		l.shelves = append(l.shelves, &Shelf{ID: fmt.Sprint("s", i), Curator: "a3"})
	}
	l.books = &source[string, Book]{name: "books", log: &l.log, key: func(b *Book) string { return b.Shelf }, rows: []*Book{
		{"b1", "s1", "a1"}, {"b2", "s1", "a2"}, {"b3", "s2", "a1"}, {"b4", "s3", ""},
	}}
	l.authors = &source[string, Author]{name: "authors", log: &l.log, key: func(a *Author) string { return a.ID }, rows: []*Author{
		{"a1", "p1"}, {"a2", "p1"}, {"a3", "p2"},
	}}
	l.publishers = &source[string, Publisher]{name: "publishers", log: &l.log, key: func(p *Publisher) string { return p.ID }, rows: []*Publisher{
		{"p1"}, {"p2"},
	}}
	return l
}

// fields is the registry's table; the options apply to Shelf.curator.
func (l *library) fields(curator ...fieldmodel.Option) []fieldmodel.Declaration {
	return []fieldmodel.Declaration{
		fieldmodel.Load("Shelf", "books", l.books, func(s *Shelf) string { return s.ID }),
		fieldmodel.Load("Shelf", "curator", l.authors, func(s *Shelf) string { return s.Curator }, curator...),
		fieldmodel.Load("Book", "author", l.authors, func(b *Book) string { return b.Author }),
	}
}

// resolving is ctx as gqlgen hands it to the resolver of query's root field.
func resolving(t *testing.T, query string) context.Context {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		t.Fatal(errs)
	}
	op := &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
	ctx := graphql.WithOperationContext(context.Background(), op)
	root := graphql.CollectFields(op, op.Operation.SelectionSet, []string{"Query"})
	return graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query", Field: root[0]})
}

func (l *library) below(t *testing.T, r *fieldmodel.Registry, query string) error {
	t.Helper()
	if err := r.Check(schema); err != nil {
		t.Fatal(err)
	}
	l.log = nil
	return fieldmodel.Below(resolving(t, query), r, l.shelves)
}

// expect compares the reads made with reads, in any order: a level's reads
// run at once (the levels' order is the data's: a level reads the keys of
// the rows before it).
func (l *library) expect(t *testing.T, reads ...string) {
	t.Helper()
	got, want := slices.Sorted(slices.Values(l.log)), slices.Sorted(slices.Values(reads))
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("reads\n%q\nwant\n%q", l.log, reads)
	}
}

// Each level reads each loader once, for every parent of the level; aliases
// and fragments of one field merge, and @skip leaves a field out.
func TestOneReadPerLevelAndLoader(t *testing.T) {
	l := newLibrary()
	r := fieldmodel.NewRegistry(l.fields()...)
	for _, c := range []struct {
		query string
		reads []string
	}{
		{`{ shelves { id } }`, nil},
		{`{ shelves { books { id } } }`, []string{"books [s1 s2 s3]"}},
		// a page: the walk starts at the page's field of the objects' type
		{`{ page { total shelves { books { author { name } } } } }`, []string{"books [s1 s2 s3]", "authors [a1 a2]"}},
		{`{ shelves { books { id } more: books { ... on Book { author { id } } } } }`, []string{"books [s1 s2 s3]", "authors [a1 a2]"}},
		{`{ shelves { books { author @skip(if: true) { id } } } }`, []string{"books [s1 s2 s3]"}},
		// two fields that fill one loader at one level share its read
		{`{ shelves { curator { id } books { id } } }`, []string{"authors [a3]", "books [s1 s2 s3]"}},
		// a deeper level reads again
		{`{ shelves { curator { id } books { author { id } } } }`, []string{"authors [a3]", "books [s1 s2 s3]", "authors [a1 a2]"}},
	} {
		if err := l.below(t, r, c.query); err != nil {
			t.Fatal(err)
		}
		l.expect(t, c.reads...)
	}
}

// NextLevel moves a field's read one level down, into the read of the
// same loader there.
func TestNextLevelSharesTheDeeperRead(t *testing.T) {
	l := newLibrary()
	r := fieldmodel.NewRegistry(l.fields(fieldmodel.NextLevel)...)
	if err := l.below(t, r, `{ shelves { curator { id } books { author { id } } } }`); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "books [s1 s2 s3]", "authors [a3 a1 a2]")
	if err := l.below(t, r, `{ shelves { curator { id } } }`); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "authors [a3]")
}

// The reads of one level run at once: a level waits for its slowest read,
// not for their sum.
func TestALevelsReadsRunAtOnce(t *testing.T) {
	l := newLibrary()
	var meet sync.WaitGroup
	meet.Add(2)
	l.books.meet, l.authors.meet = &meet, &meet
	if err := l.below(t, fieldmodel.NewRegistry(l.fields()...), `{ shelves { curator { id } books { id } } }`); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "authors [a3]", "books [s1 s2 s3]")
}

// A field keyed by its parents' own key (SameKeyAs the loader they are
// read from) is read beside them, by the keys they are read by: the same
// reads, a round trip fewer.
func TestSameKeyReadsBesideItsParents(t *testing.T) {
	l := newLibrary()
	byAuthor := &source[string, Book]{name: "booksByAuthor", log: &l.log, key: func(b *Book) string { return b.Author }, rows: l.books.rows}
	var meet sync.WaitGroup
	meet.Add(2)
	l.authors.meet, byAuthor.meet = &meet, &meet
	books := fieldmodel.Load("Author", "books", byAuthor, func(a *Author) string { return a.ID }, fieldmodel.SameKeyAs(l.authors))
	if err := l.below(t, fieldmodel.NewRegistry(append(l.fields(), books)...), `{ shelves { books { author { books { id } } } } }`); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "books [s1 s2 s3]", "authors [a1 a2]", "booksByAuthor [a1 a2]")

	// Below the rows read early the walk goes on as before.
	l.authors.meet, byAuthor.meet = nil, nil
	if err := l.below(t, fieldmodel.NewRegistry(append(l.fields(), books)...), `{ shelves { books { author { books { author { id } } } } } }`); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "books [s1 s2 s3]", "authors [a1 a2]", "booksByAuthor [a1 a2]", "authors [a1 a2]")
}

// A read that fails stops the walk and answers its error.
func TestAFailedReadIsAnswered(t *testing.T) {
	l := newLibrary()
	boom := errors.New("boom")
	l.authors.fail = boom
	err := l.below(t, fieldmodel.NewRegistry(l.fields()...), `{ shelves { books { author { publisher { id } } } } }`)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	l.expect(t, "books [s1 s2 s3]", "authors [a1 a2]")
}

// Outside a GraphQL request (a REST face calling the same resolver) there
// is no selection and nothing is read.
func TestNothingOutsideGraphQL(t *testing.T) {
	l := newLibrary()
	if err := fieldmodel.Below(context.Background(), fieldmodel.NewRegistry(l.fields()...), l.shelves); err != nil {
		t.Fatal(err)
	}
	l.expect(t)
}

// The recipe of the package doc, followed: Author.publisher is in the
// schema; until the registry declares it, a query that selects it reads no
// publishers ahead (its resolver would load them one batch at a time), and
// the one entry is all it takes to read them in one statement.
func TestRecipeAddingANestedField(t *testing.T) {
	l := newLibrary()
	q := `{ shelves { curator { publisher { name } } books { author { publisher { name } } } } }`
	if err := l.below(t, fieldmodel.NewRegistry(l.fields()...), q); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "authors [a3]", "books [s1 s2 s3]", "authors [a1 a2]")

	fields := append(l.fields(), fieldmodel.Load("Author", "publisher", l.publishers, func(a *Author) string { return a.Publisher }))
	r := fieldmodel.NewRegistry(fields...)
	if !r.Has("Author", "publisher") {
		t.Fatal("not registered")
	}
	if err := l.below(t, r, q); err != nil {
		t.Fatal(err)
	}
	// the curator's publisher and the authors' are on different levels
	l.expect(t, "authors [a3]", "books [s1 s2 s3]", "publishers [p2]", "authors [a1 a2]", "publishers [p1]")
}

// Check finds declarations the schema does not match.
func TestCheck(t *testing.T) {
	l := newLibrary()
	for _, f := range []fieldmodel.Field{
		fieldmodel.Load("Shelf", "nope", l.books, func(s *Shelf) string { return s.ID }),
		fieldmodel.Load("Nope", "books", l.books, func(s *struct{ ID string }) string { return s.ID }),
		// Book.author answers Author, declared below as *Author, not *Book
		fieldmodel.Load("Book", "author", l.books, func(b *Book) string { return b.ID }),
	} {
		fields := append(l.fields()[:2:2], f, fieldmodel.Load("Author", "publisher", l.publishers, func(a *Author) string { return a.Publisher }))
		err := fieldmodel.NewRegistry(fields...).Check(schema)
		if err == nil {
			t.Errorf("%s.%s passes", f.Type, f.Name)
		}
		t.Log(err)
	}
}
