package extension

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
)

// scanSeeds are documents whose every token kind, and every way the lexer
// fails, scanFields must read as gqlparser's lexer does.
var scanSeeds = []string{
	"", " , \t\r\n", "{ a }", "{ a b c }", "query Q($v: Int = -1.5e+3) { a(x: $v) @d(if: true) { b: c ...F ... on T { d } ... @i { e } } }",
	"fragment F on T { on: id ... on on { on } }", "{ a(s: \"}{\\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u00e9 \\u{1F600} \\ud83d\\ude00 é\") }",
	"{ a(s: \"\"\"block \\\"\"\" \" \"\" \n\r\n }\"\"\"\"\") { b } }", "# comment { a }\n{ b } # end",
	"\xef\xbb\xbf{ a }", "{ a }\xef\xbb\xbf", "{ a }\xef\xbb", "{ a \xef }", "{ a: [1, 2.5, -0, 0e1, 1E-2] }",
	"{ a(x: 01) }", "{ a(x: -) }", "{ a(x: 1.) }", "{ a(x: 1e) }", "{ a(x: 1e+) }", "{ a(x: .5) }", "{ a .. b }", "{ a ' }",
	"{ a(s: \"unterminated) }", "{ a(s: \"line\nend\") }", "{ a(s: \"tab\tok\") }", "{ a(s: \"ctl\x01\") }",
	"{ a(s: \"\\x\") }", "{ a(s: \"\\u00\") }", "{ a(s: \"\\u00zz\") }", "{ a(s: \"\\u{}\") }", "{ a(s: \"\\u{110000}\") }",
	"{ a(s: \"\\u{000000041}\") }", "{ a(s: \"\\u{00000041}\") }", "{ a(s: \"\\u{FFFFFFFF}\") }", "{ a(s: \"\\u{41\") }",
	"{ a(s: \"\\ud83d\\u0041\") }", "{ a(s: \"\\ud83d\") }", "\"\\u0041\"", "\"\\", "\"\"\"", "\"\"\"\x01\"\"\"", "{ a(s: \"\"\"x\\\"\"\"\"\"\") }",
	"{ a } ! $ & | = [ ] ( ) :", "{ \x80 }", "{ a(s: \"\xff\xfe\") } # \xff\x00", "{ a }#\x01b", "{ é }",
	"{ " + repeated("__typename", 300) + " }",
}

func checkScanFields(t *testing.T, q string, max, tokens int) {
	t.Helper()
	want := lexFields(&ast.Source{Input: q}, max, tokens)
	got, ok := scanFields(q, max, tokens)
	if got != want {
		t.Fatalf("%.200q (max %d, tokens %d): scanFields counted %d, the lexer %d", q, max, tokens, got, want)
	}
	if !ok {
		// Only where the lexer cannot read a token of the document.
		lex := lexer.New(&ast.Source{Input: q})
		for {
			tok, err := lex.ReadToken()
			if err != nil {
				return
			}
			if tok.Kind == lexer.EOF {
				t.Fatalf("%.200q (max %d, tokens %d): scanFields gave up, but the lexer reads every token", q, max, tokens)
			}
		}
	}
}

// lexFields is countFields through gqlparser's lexer: the reference
// scanFields is held to (FuzzScanFields).
func lexFields(src *ast.Source, max, tokens int) int {
	lex := lexer.New(src)
	c := fieldCounter{max: max, tokens: tokens}
	for {
		t, err := lex.ReadToken()
		if err != nil || t.Kind == lexer.EOF {
			return c.n
		}
		if t.Kind == lexer.Comment {
			continue
		}
		if c.stop(t.Kind, t.Kind == lexer.Name && t.Value == "on") {
			return c.n
		}
	}
}

// TestScanFields: scanFields counts what lexFields counts, on every kind
// of token, each way a token fails, and with the field and token bounds;
// a document that lexes is never left to the lexer.
func TestScanFields(t *testing.T) {
	docs := append([]string{introspectionQuery}, scanSeeds...)
	for _, q := range worstAccepted() {
		docs = append(docs, q)
	}
	for _, q := range docs {
		for _, bound := range [][2]int{{1 << 30, 0}, {3, 0}, {1 << 30, 7}, {0, 0}, {2, 2}} {
			checkScanFields(t, q, bound[0], bound[1])
		}
	}
	for _, q := range []string{introspectionQuery, "{ " + repeated("__typename", 9900) + " }", scanSeeds[4], scanSeeds[6], scanSeeds[7]} {
		if _, ok := scanFields(q, 1<<30, 0); !ok {
			t.Errorf("%.80q is left to the lexer", q)
		}
	}
	// Where it stops: the 2,001st field of the hostile-tenants issue's
	// document, the token past the bound.
	bomb := "query Q1 {" + strings.Repeat(" __typename", 9900) + " }"
	if n, ok := scanFields(bomb, 2000, 10000); !ok || n != 2001 {
		t.Errorf("the 9,900 __typename document: %d, %v; want 2001, true", n, ok)
	}
	if n, ok := scanFields(bomb, 1<<30, 100); !ok || n != 97 {
		t.Errorf("100 tokens of it: %d, %v; want 97 fields (query, Q1 and the brace are the first three tokens)", n, ok)
	}
}

// FuzzScanFields: for any text and bounds, scanFields counts what the
// lexer counts, and leaves to it only text it cannot read.
func FuzzScanFields(f *testing.F) {
	for _, q := range scanSeeds {
		f.Add(q, 1<<30, 0)
		f.Add(q, 2, 5)
	}
	f.Fuzz(func(t *testing.T, q string, max, tokens int) {
		checkScanFields(t, q, max, tokens)
	})
}

// BenchmarkCountFields: the count of the hostile-tenants issue's 9,900
// __typename document, refused at its 2,001st field, by the bytes and
// through gqlparser's lexer.
func BenchmarkCountFields(b *testing.B) {
	src := &ast.Source{Input: "query Q1 {" + strings.Repeat(" __typename", 9900) + " }"}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if countFields(src, 2000, 10000) != 2001 {
				b.Fatal("not refused")
			}
		}
	})
	b.Run("lexer", func(b *testing.B) {
		for b.Loop() {
			if lexFields(src, 2000, 10000) != 2001 {
				b.Fatal("not refused")
			}
		}
	})
}

// TestCachedTextOwnsItsBytes: the POST transport hands over an unescaped
// query where it lies in the request's body; the document the query cache
// keeps (its key is the document's source text) holds a copy of its own, so a cached query never
// keeps its whole body alive (the cache counts the query's bytes only).
func TestCachedTextOwnsItsBytes(t *testing.T) {
	d := defaultDocuments()
	body := []byte(`{"query": "{ vms { total } }", "variables": {"pad": "` + strings.Repeat("x", 4096) + `"}}`)
	q := unsafe.String(&body[11], len("{ vms { total } }"))
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{})
	if err := d.MutateOperationParameters(ctx, &graphql.RawParams{Query: q}); err != nil {
		t.Fatal(err)
	}
	if err := d.Admit().(admitDocuments).MutateOperationContext(ctx, nil); err != nil {
		t.Fatal(err)
	}
	doc, ok := d.queries.Get(q)
	if !ok {
		t.Fatal("the document was not cached")
	}
	inBody := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(&body[0]))
		return p >= start && p < start+uintptr(len(body))
	}
	if inBody(doc.Operations[0].SelectionSet[0].(*ast.Field).Name) || inBody(doc.Operations[0].Position.Src.Input) {
		t.Error("the cached document's text lies in the request's body")
	}
}
