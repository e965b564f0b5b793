package extension

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"gpugraph/graph"
	"gpugraph/internal/lib/apierr"
	"gpugraph/resolvers"
)

// Issue 23, finding 3: the document limits, checked before validation.

// defaultDocLimits are the document limits of a default server
// (httpapi.Config's defaults, docs/decisions/0011-limits.md).
func defaultDocLimits() DocLimits {
	return DocLimits{
		MaxFieldsPerSet: 100, MaxRepeats: 20, MaxFields: 2000,
		MaxDirectives: 50, MaxDepth: 15, MaxAliases: 100,
		MaxRootFields: 20, MaxMutationFields: 10,
	}
}

// defaultDocuments are the documents of a default server.
func defaultDocuments() *Documents {
	return NewDocuments(testSchema, DocumentsConfig{
		Limits: defaultDocLimits(), MaxBytes: 256 << 10, Tokens: 10000,
		QueryCacheBytes: 64 << 20, APQCacheBytes: 16 << 20,
	})
}

var testSchema = graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{}}).Schema()

// repeated is n copies of s, space-separated.
func repeated(s string, n int) string { return strings.TrimSpace(strings.Repeat(" "+s, n)) }

// fragments defines n fragments on Node, each selecting sel.
func fragments(n int, sel string) (spreads, defs string) {
	var s, d strings.Builder
	for i := range n {
		fmt.Fprintf(&s, " ...F%d", i)
		fmt.Fprintf(&d, " fragment F%d on Node { %s }", i, sel)
	}
	return s.String(), d.String()
}

// aliased is n aliases a0…, each of field with selection sel.
func aliased(n int, field, sel string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s { %s }", i, field, sel)
	}
	return b.String()
}

func TestDocLimits(t *testing.T) {
	spreads60, defs60 := fragments(2, repeated("id", 20)+" "+repeated("name", 20)+" "+repeated("status", 20))
	fieldsFrag := " fragment Wide on Node { " + repeated("id", 10) + " " + repeated("name", 10) + " " + repeated("status", 10) + " " + repeated("clusterId", 10) + " " + repeated("nodePool", 10) + " }"
	nested := "{ nodes { " + strings.Repeat("gpus { node { ", 6) + "gpus { id }" + strings.Repeat(" } }", 6) + " } }"
	for _, tc := range []struct{ name, query, want string }{
		{"9,900 __typename at the root", "{ " + repeated("__typename", 9900) + " }",
			"the operation asks 9900 root fields, more than the limit of 20"},
		{"9,000 repeated fields in one selection", "{ nodes { " + repeated("id", 9000) + " } }",
			"the selection set of nodes asks 9000 fields (its fragments' included), more than the limit of 100"},
		{"a field repeated 21 times", "{ nodes { " + repeated("id", 21) + " } }",
			"the query asks nodes.id 21 times (its fragments' included), more than the limit of 20"},
		{"repeats merged from fields of one response name", "{ nodes { gpus { id } gpus { id } " + repeated("gpus { id }", 19) + " } }",
			"the query asks nodes.gpus 21 times"},
		{"a selection set through its fragments", "{ nodes { " + spreads60 + " } }" + defs60,
			"the selection set of nodes asks 120 fields (its fragments' included), more than the limit of 100"},
		{"fields merged from fields of one response name", "{ nodes { gpus { id index failedReason } } nodes { gpus { " + repeated("uuid", 20) + " " + repeated("address", 20) + " " + repeated("health", 20) + " " + repeated("index", 19) + " " + repeated("id", 19) + " } } }",
			"the selection set of nodes.gpus asks 101 fields"},
		{"fields expanded through fragments", "{ nodes {" + aliased(41, "gpus", "node { ...Wide }") + " } }" + fieldsFrag,
			"the query asks more than 2000 fields (a fragment's fields count at each place it is spread)"},
		{"depth", "{ nodes { " + strings.Repeat("gpus { node { ", 7) + "id" + strings.Repeat(" } }", 7) + " } }",
			"query is nested 16 levels deep, more than the limit of 15"},
		{"aliases as written", "{ nodes {" + aliased(101, "gpus", "id") + " } }",
			"the query uses 101 aliases, more than the limit of 100"},
		{"aliases as executed", "{ nodes { ...A ...A gpus { node { ...A gpus { node { ...A gpus { node { ...A } } } } } } } } fragment A on Node { " + aliased(30, "gpus", "id") + " }",
			"the operation uses 120 aliases, more than the limit of 100"},
		{"directives", "{ nodes { " + repeated("id @include(if: true)", 20) + " " + repeated("name @skip(if: false) @include(if: true)", 16) + " } }",
			"the query uses 52 directives, more than the limit of 50"},
		{"a fragment cycle", "{ nodes { ...F } } fragment F on Node { id gpus { node { ...G } } } fragment G on Node { ...F }",
			"fragment F spreads itself (F → G → F)"},
		{"a fragment spreading itself", "{ nodes { ...F } } fragment F on Node { id ...F }",
			"fragment F spreads itself (F → F)"},
		{"mutation root fields", "mutation {" + aliased(11, "restartVm(id: \"x\")", "id") + " }",
			"the operation asks 11 root fields, more than the limit of 10"},
		{"a console query", "{ vms(limit: 50) { total next vms { ...Row node { name gpus { index address health model { name } } } } } }" +
			" fragment Row on VM { id name status statusReason createdAt gpuModel { name } gpus { id } }", ""},
		{"15 levels", nested, ""},
		{"the introspection query", introspectionQuery, ""},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, lerr := defaultDocLimits().check(doc, len(tc.query))
		switch {
		case tc.want == "" && lerr != nil:
			t.Errorf("%s: refused: %v", tc.name, lerr)
		case tc.want != "" && (lerr == nil || !strings.HasPrefix(lerr.Message, tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, lerr, tc.want)
		case lerr != nil && (lerr.Extensions["code"] != "BAD_REQUEST" || lerr.Extensions["status"] != 400):
			t.Errorf("%s: extensions %v, want BAD_REQUEST 400", tc.name, lerr.Extensions)
		}
	}
}

// TestCountFields: the fields counted off a document's tokens are the
// fields its syntax tree holds, whatever the syntax around them (aliases,
// arguments with object and list values, directives, fragments, inline
// fragments, variables, comments, strings with braces).
func TestCountFields(t *testing.T) {
	docs := []string{
		`query Q($a: [VmStatus!] = [RUNNING], $f: PodFilter = {name: {eq: "{ x }"}}) @include(if: true) {
			a: vms(status: $a, limit: 2) @skip(if: false) { total vms { id ...Row ... on VM { name } ... @include(if: true) { status } } }
			pods(where: $f, filterBy: ["name==a"]) { pods { id } }
		}
		# a comment { with braces }
		fragment Row on VM { id node { name on: id gpus { ... on Gpu { on } } } }
		mutation M { restartVm(id: "x") { id } }
		subscription S { vmEvents(ids: ["a", "b"]) { id } }`,
		introspectionQuery,
		"{ " + repeated("__typename", 300) + " }",
		`{ a: b(c: {d: {e: [1, {f: "}"}]}}) { g } }`,
		`{ ... on Query { ... { vms { total } } } }`,
		`"""description""" query { vms { total } }`,
	}
	for _, q := range worstAccepted() {
		docs = append(docs, q)
	}
	for _, q := range docs {
		checkCountFields(t, q)
	}
}

func checkCountFields(t *testing.T, q string) {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		return // the parser refuses it before anything counts
	}
	want := 0
	var count func(ast.SelectionSet)
	count = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				want++
				count(s.SelectionSet)
			case *ast.InlineFragment:
				count(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		count(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		count(f.SelectionSet)
	}
	if got := countFields(&ast.Source{Input: q}, 1<<30, 0); got != want {
		t.Errorf("%d fields counted off the tokens of %.200q, %d in its syntax tree", got, q, want)
	}
}

// FuzzCountFields: for any document that parses, the fields counted off
// its tokens are those of its syntax tree.
func FuzzCountFields(f *testing.F) {
	for _, q := range []string{`{ a: b(c: {d: 1}) @e { ...F ... on T { g } } } fragment F on T { h }`, introspectionQuery, `query($v: I = {a: [1]}) { x }`} {
		f.Add(q)
	}
	f.Fuzz(checkCountFields)
}

// TestFragmentVisitsBounded: fragments spread at many places are walked at
// each (their fields count there), within a budget as large as the
// fields': a document of spreads that select almost nothing stops there.
func TestFragmentVisitsBounded(t *testing.T) {
	q := "{ nodes {" + aliased(40, "gpus", "node { ...A }") + " } } fragment A on Node { ...B ...C } fragment B on Node { ... on Node { id } } fragment C on Node { ...B }"
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatal(err)
	}
	l := defaultDocLimits()
	l.MaxFields = 100
	if _, lerr := l.check(doc, len(q)); lerr == nil || !strings.HasPrefix(lerr.Message, "the query spreads fragments more than 100 times") {
		t.Fatalf("got %v", lerr)
	}
}

// TestDocSizeEstimate: docSize, the bytes the query cache counts for a
// document, is within [1×, 2×] of the heap the parsed (and, when valid,
// validated) document holds, for the shapes that matter: thousands of
// fields, arguments and values, fragments, long strings, long comments.
func TestDocSizeEstimate(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		valid       bool
	}{
		{"9,900 __typename", "{ " + repeated("__typename", 9900) + " }", false},
		{"500 aliases with arguments", "{" + aliased(500, "vms(status: [RUNNING, STOPPED], limit: 10)", "total") + " }", false},
		{"50 fragments", "{ nodes { ...F0 } }" + func() string {
			var b strings.Builder
			for i := range 50 {
				fmt.Fprintf(&b, " fragment F%d on Node { id name gpus { id } ...F%d }", i, i+1)
			}
			return b.String() + " fragment F50 on Node { id }"
		}(), true},
		{"a console query", "{ vms(limit: 50) { total next vms { ...Row node { name gpus { index address health model { name } } } } } }" +
			" fragment Row on VM { id name status statusReason createdAt gpuModel { name } gpus { id } }", true},
		{"the introspection query", introspectionQuery, true},
		{"a 100 KB string", `{ vm(id: "` + strings.Repeat("x", 100000) + `") { id } }`, true},
		{"a 100 KB comment", "{ vms { total } }\n#" + strings.Repeat("c", 100000), true},
	} {
		const copies = 4
		var est int64
		heap := heapDelta(func() any {
			docs := make([]*ast.QueryDocument, copies)
			for i := range docs {
				q := strings.Clone(tc.query)
				doc, err := parser.ParseQuery(&ast.Source{Input: q})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if tc.valid {
					if errs := validator.ValidateWithRules(testSchema, doc, validationRules(true)); len(errs) > 0 {
						t.Fatalf("%s: %v", tc.name, errs)
					}
				}
				est = docSize(len(q), scanDocument(doc).nodes)
				docs[i] = doc
			}
			return docs
		}) / copies
		ratio := float64(est) / float64(heap)
		t.Logf("%s: %d bytes of text, %d of heap, estimated %d (%.2f×)", tc.name, len(tc.query), heap, est, ratio)
		if ratio < 1 || ratio > 2 {
			t.Errorf("%s: estimated %d bytes for %d held (%.2f×), want within [1×, 2×]", tc.name, est, heap, ratio)
		}
	}
}

// heapDelta is the heap that what make answers holds, after collection:
// the least of three tries, as another goroutine of the test process may
// allocate meanwhile.
func heapDelta(make func() any) int64 {
	least := int64(math.MaxInt64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(kept)
		least = min(least, int64(after.HeapAlloc)-int64(before.HeapAlloc))
	}
	return least
}

// TestValidationBoundedByDeadline: a validation still running when the
// request's deadline passes answers 504 TIMEOUT then, not when it ends.
func TestValidationBoundedByDeadline(t *testing.T) {
	d := defaultDocuments()
	release := make(chan struct{})
	defer close(release)
	d.validate = func(*ast.Schema, *ast.QueryDocument, *rules.Rules) gqlerror.List {
		<-release // a validation that would take longer than any deadline
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{})
	start := time.Now()
	err := d.MutateOperationParameters(ctx, &graphql.RawParams{Query: "{ vms { total } }"})
	if err == nil || err.Extensions["code"] != apierr.TimeoutCode || err.Extensions["status"] != 504 {
		t.Fatalf("got %v, want TIMEOUT 504", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("answered after %v: the deadline did not bound validation", waited)
	}
	if d.queries.Len() != 0 {
		t.Fatal("a document that timed out was cached")
	}
}

func TestDistinct(t *testing.T) {
	type status string
	for _, tc := range []struct {
		in, want any
		changed  bool
	}{
		{[]status{"running", "stopped", "running", "running", "failed", "stopped"}, []status{"running", "stopped", "failed"}, true},
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"a"}, []string{"a"}, false},
		{[]int{3, 3}, []int{3}, true},
		{"running", "running", false},
		{[]any{map[string]any{}, map[string]any{}}, []any{map[string]any{}, map[string]any{}}, false},
	} {
		got, changed := distinct(tc.in)
		if changed != tc.changed || fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", tc.want) {
			t.Errorf("distinct(%v) = %v %v, want %v %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}

// TestDistinctListsReachResolvers: the field interceptor hands a resolver
// a list argument without its repeats, the first of each in its place.
func TestDistinctListsReachResolvers(t *testing.T) {
	fc := &graphql.FieldContext{Args: map[string]any{"status": []string{"RUNNING", "STOPPED", "RUNNING"}, "limit": 5}}
	ctx := graphql.WithFieldContext(context.Background(), fc)
	var seen any
	_, _ = DistinctLists{}.InterceptField(ctx, func(ctx context.Context) (any, error) {
		seen = graphql.GetFieldContext(ctx).Args["status"]
		return nil, nil
	})
	if fmt.Sprint(seen) != "[RUNNING STOPPED]" || fc.Args["limit"] != 5 {
		t.Fatalf("resolver saw %v (args %v)", seen, fc.Args)
	}
}

// TestListCapsNameListArguments: every coordinate of listCaps is a list
// argument of the schema, so the table cannot drift from it; and every
// list argument's cap stays far below the engines' parameter limits.
func TestListCapsNameListArguments(t *testing.T) {
	lists := map[string]bool{}
	for _, def := range testSchema.Types {
		for _, f := range def.Fields {
			for _, a := range f.Arguments {
				if a.Type.Elem != nil {
					lists[def.Name+"."+f.Name+"."+a.Name] = true
				}
			}
		}
	}
	for coord, max := range listCaps {
		if !lists[coord] {
			t.Errorf("listCaps names %s, which is not a list argument", coord)
		}
		if max > 10000 {
			t.Errorf("%s: cap %d", coord, max)
		}
	}
	if len(lists) < 12 {
		t.Errorf("found only %d list arguments: %v", len(lists), lists)
	}
}

// worstAccepted are documents at the document limits that pass them, each
// built to cost validation the most in one way.
func worstAccepted() map[string]string {
	at := func(n int) string {
		return repeated("id", n) + " " + repeated("name", n) + " " + repeated("status", n) + " " + repeated("clusterId", n) + " " + repeated("nodePool", n)
	}
	chain := "gpus { " + strings.Repeat("node { gpus { ", 6) + "id" + strings.Repeat(" } }", 6) + " }"
	var wide strings.Builder
	for i := range 19 {
		fmt.Fprintf(&wide, " v%d: vms(limit: 1) { vms { id name status statusReason createdAt cpuCores ramGb diskSizeGb gpuCount node { id name clusterId nodePool status agentVersion cpuCores ramGb diskGb gpus { id index uuid address health model { id name memoryGb } } } } }", i)
	}
	spreads, defs := fragments(20, at(1))
	return map[string]string{
		// 19 spots of 100 fields, 5 names repeated 20 times: the most pairs.
		"repeats": "{" + aliased(19, "nodes", at(20)) + " }",
		// 20 copies of a 13-deep chain under each of 7 roots.
		"chains": "{" + aliased(7, "nodes", repeated(chain, 20)) + " }",
		// 20 fragments selecting the same 5 fields at each of 19 spots.
		"fragments": "{" + aliased(19, "nodes", spreads) + " }" + defs,
		// Distinct fields, three levels, 19 roots.
		"wide":          "{" + wide.String() + " }",
		"introspection": introspectionQuery,
	}
}

// processCPU is the CPU time the test process has used (user and system,
// every goroutine: the garbage collector's too). Benchmarks report it per
// operation (reportCPU) beside the wall time, which a shared machine
// stretches.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time since start per operation, as cpu-ms/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkValidateWorstAccepted: what validation costs for the worst
// documents the document limits accept (docs/decisions/0033-graphql-documents-before-validation.md has the figures).
func BenchmarkValidateWorstAccepted(b *testing.B) {
	r := validationRules(true)
	for name, q := range worstAccepted() {
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := defaultDocLimits().check(doc, len(q)); err != nil {
			b.Fatalf("%s refused: %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				doc, _ := parser.ParseQuery(&ast.Source{Input: q})
				if errs := validator.ValidateWithRules(testSchema, doc, r); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPrecheck: what documents does before validation, alone (the
// fields counted off the tokens, the parse, the walk), for the documents
// of issue 23 it refuses and for the worst it accepts.
func BenchmarkPrecheck(b *testing.B) {
	docs := map[string]string{
		"refused 9,900 __typename": "{ " + repeated("__typename", 9900) + " }",
		"refused 9,000 fields":     "{ nodes { " + repeated("id", 9000) + " } }",
		"refused 1,900 fields":     "{ nodes { " + repeated("id", 1900) + " } }",
		"refused 21 repeats x 90":  "{ nodes {" + strings.Repeat(" gpus { "+repeated("id", 21)+" }", 90) + " } }",
		"refused a fragment cycle": "{ nodes { ...F } } fragment F on Node { id gpus { node { ...F } } }",
	}
	for name, q := range worstAccepted() {
		docs["accepted "+name] = q
	}
	l := defaultDocLimits()
	for name, q := range docs {
		b.Run(name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				src := &ast.Source{Input: q}
				if l.tooManyFields(src, 10000) != nil {
					continue
				}
				doc, err := parser.ParseQueryWithTokenLimit(src, 10000)
				if err != nil {
					b.Fatal(err)
				}
				l.check(doc, len(q))
			}
			reportCPU(b, cpu)
		})
	}
}

// introspectionQuery is GraphiQL's (graphql-js getIntrospectionQuery with
// descriptions, specifiedByURL, isRepeatable and input value deprecation).
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    description
    queryType { name kind }
    mutationType { name kind }
    subscriptionType { name kind }
    types { ...FullType }
    directives { name description isRepeatable locations args(includeDeprecated: true) { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description specifiedByURL
  fields(includeDeprecated: true) { name description args(includeDeprecated: true) { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue isDeprecated deprecationReason }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`
