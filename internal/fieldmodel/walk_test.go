package fieldmodel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

var walkSchema = gqlparser.MustLoadSchema(&ast.Source{Name: "walk.graphqls", Input: `
type Query { a: A b: A }
type A { x: Int y: Int a: A }
`})

func validated(t *testing.T, query string) *ast.QueryDocument {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(walkSchema, query)
	if errs != nil {
		t.Fatal(errs)
	}
	return doc
}

// Every and Roots go through inline fragments and spreads, each fragment
// once; Roots stays at the set's own level.
func TestEveryFieldOnce(t *testing.T) {
	doc := validated(t, `{ a { ...F ...F ... on A { y } } b { ...F } } fragment F on A { x a { x } }`)
	var every, roots []string
	Every(doc.Operations[0].SelectionSet, func(f *ast.Field) { every = append(every, f.Name) })
	Roots(doc.Operations[0].SelectionSet, func(f *ast.Field) { roots = append(roots, f.Name) })
	if want := []string{"a", "x", "a", "x", "y", "b"}; !slices.Equal(every, want) {
		t.Errorf("Every: %v, want %v", every, want)
	}
	if want := []string{"a", "b"}; !slices.Equal(roots, want) {
		t.Errorf("Roots: %v, want %v", roots, want)
	}
}

// Fold computes each fragment once: twenty fragments each spreading the
// next twice is a million fields written out, twenty visits.
func TestFoldVisitsEachFragmentOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("{ a { ...F0 } }\n")
	for i := range 20 {
		if i == 19 {
			fmt.Fprintf(&b, "fragment F%d on A { x }\n", i)
			continue
		}
		fmt.Fprintf(&b, "fragment F%d on A { a { ...F%d } b: a { ...F%d } }\n", i, i+1, i+1)
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	frags := map[string]*ast.FragmentDefinition{}
	for _, f := range doc.Fragments {
		frags[f.Name] = f
	}
	visits := 0
	fold := Fold[float64]{
		Fragments: ByName(frags),
		Field: func(f *ast.Field, below func(ast.SelectionSet) float64) float64 {
			visits++
			return 1 + below(f.SelectionSet)
		},
		Add: func(a, b float64) float64 { return a + b },
	}
	// 1 (a) + 2 + 4 + … + 2^19 (the a and b of each level) + 2^19 x's
	if got, want := fold.Set(doc.Operations[0].SelectionSet), float64(1<<20+1<<19-1); got != want {
		t.Errorf("Set = %v, want %v", got, want)
	}
	if visits != 1+2*19+1 {
		t.Errorf("%d field visits", visits)
	}
}

// Merged hands each spot its fields as the executor merges them, grouped
// by response name, and the spots below each group.
func TestMergedSpots(t *testing.T) {
	doc := validated(t, `{ a { x } ...R } fragment R on Query { a { y a { x } } b: a { x } }`)
	frags := map[string]*ast.FragmentDefinition{}
	for _, f := range doc.Fragments {
		frags[f.Name] = f
	}
	entered := 0
	var spots []string
	err := Merged([]ast.SelectionSet{doc.Operations[0].SelectionSet}, ByName(frags), func() error { entered++; return nil },
		func(fields []*ast.Field, groups [][]*ast.Field, depth int, path []string) (bool, error) {
			var names []string
			for _, g := range groups {
				names = append(names, fmt.Sprintf("%s×%d", ResponseName(g[0]), len(g)))
			}
			spots = append(spots, fmt.Sprintf("%d %s: %s (%d)", depth, strings.Join(path, "."), strings.Join(names, " "), len(fields)))
			return true, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1 : a×2 b×1 (3)", "2 a: x×1 y×1 a×1 (3)", "3 a.a: x×1 (1)", "2 b: x×1 (1)"}
	if !slices.Equal(spots, want) || entered != 1 {
		t.Errorf("spots %q (entered %d), want %q", spots, entered, want)
	}
}

// directives finds a directive anywhere a plan would read: on a field, an
// inline fragment, a spread or its fragment.
func TestDirectives(t *testing.T) {
	for q, want := range map[string]bool{
		`{ a { x } }`:                                                   false,
		`{ a { x @skip(if: true) } }`:                                   true,
		`{ a { ... @include(if: true) { x } } }`:                        true,
		`{ a { ...F @skip(if: false) } } fragment F on A { x }`:         true,
		`{ a { ...F } } fragment F on A { a { y @include(if: true) } }`: true,
		`{ a { ...F } } fragment F on A { y }`:                          false,
	} {
		doc := validated(t, q)
		if got := directives(doc.Operations[0].SelectionSet); got != want {
			t.Errorf("%s: %v", q, got)
		}
	}
}
