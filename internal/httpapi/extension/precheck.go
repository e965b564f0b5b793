package extension

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"

	"gpugraph/internal/fieldmodel"
)

// DocLimits bound what a document asks before it is validated
// (docs/decisions/0033-graphql-documents-before-validation.md). gqlparser's validation is not linear: its
// overlapping-fields
// rule compares every pair of fields that land on one spot of the answer,
// so one selection set of 9,000 copies of a field was seconds of CPU.
// These bounds are checked in one linear walk, without the schema, so a
// document they refuse costs its parse and that walk (one of too many
// fields only its lexing); what they let through validates in
// milliseconds (BenchmarkValidateWorstAccepted).
type DocLimits struct {
	// MaxFieldsPerSet bounds the fields that land on one object of the
	// answer: those of a selection set, its inline fragments and the
	// fragments it spreads (each once), merged with those of every field
	// of the same response name beside it, as the executor merges them.
	// (At the root, MaxRootFields is that bound.)
	MaxFieldsPerSet int
	// MaxRepeats bounds how many of those fields share one response name.
	// The overlapping-fields rule compares each pair of them (about 0.4 µs
	// a pair), so a document of F fields costs it at most F × MaxRepeats / 2
	// comparisons.
	MaxRepeats int
	// MaxFields bounds the fields of the document as the executor sees
	// them: every fragment's fields counted at each place it is spread.
	MaxFields int
	// MaxDirectives bounds the directives of the whole document.
	MaxDirectives int
	// The operation limits, which Limits holds again with the schema, the
	// variables and complexity's list multipliers; here counted without.
	MaxDepth          int
	MaxAliases        int
	MaxRootFields     int
	MaxMutationFields int
}

// tooManyFields refuses a document that writes more than MaxFields
// fields, counted off its tokens before it is parsed: the parse of a
// document of 9,000 fields allocates 3 MB and costs ten times the lexing,
// which allocates nothing and stops at the first field past the limit. A
// document that writes that many fields asks at least as many as the
// executor sees (or spreads a fragment nowhere, which validation refuses).
// tokens bounds the lexing as the parser's token limit bounds the parse.
func (l DocLimits) tooManyFields(src *ast.Source, tokens int) *gqlerror.Error {
	if l.MaxFields > 0 && countFields(src, l.MaxFields, tokens) > l.MaxFields {
		return l.fieldsError()
	}
	return nil
}

func (l DocLimits) fieldsError() *gqlerror.Error {
	return limitError("the query asks more than %d fields (a fragment's fields count at each place it is spread)", l.MaxFields)
}

// countFields counts the fields src's selection sets write, as many as its
// syntax tree would hold, from its tokens: a name inside braces and
// outside parentheses (arguments, variable definitions and the values in
// them) is a field, unless it names a fragment (after ...), an inline
// fragment's type (after ... on), a directive (after @), or the field an
// alias stands for (after :, the alias counted). It stops once it has
// counted more than max, at the first token it cannot read (the parser
// names it), and after tokens tokens (0: no bound).
//
// scanFields reads the tokens off the bytes (fieldscan.go), a tenth of
// what gqlparser's lexer costs for them.
func countFields(src *ast.Source, max, tokens int) int {
	n, _ := scanFields(src.Input, max, tokens)
	return n
}

// fieldCounter is countFields' reading of the tokens, one at a time,
// as scanFields reads them off the text (and the tests' lexFields).
type fieldCounter struct {
	max, tokens int

	n, read        int
	parens, braces int
	prev           lexer.Type
	typeNext       bool
}

// stop counts the next token (comments are not tokens here) of kind, on
// whether it is the name "on": whether counting stops there, past the
// token bound or the field bound.
func (c *fieldCounter) stop(kind lexer.Type, on bool) bool {
	if c.read++; c.tokens > 0 && c.read > c.tokens {
		return true
	}
	switch kind {
	case lexer.ParenL:
		c.parens++
	case lexer.ParenR:
		c.parens--
	case lexer.BraceL:
		if c.parens == 0 {
			c.braces++
		}
	case lexer.BraceR:
		if c.parens == 0 {
			c.braces--
		}
	case lexer.Name:
		if c.parens != 0 || c.braces <= 0 {
			break
		}
		switch {
		case c.prev == lexer.Spread:
			c.typeNext = on
		case c.typeNext:
			c.typeNext = false
		case c.prev == lexer.At, c.prev == lexer.Colon:
		default:
			if c.n++; c.n > c.max {
				return true
			}
		}
	}
	c.prev = kind
	return false
}

// check holds doc to l: directives, aliases (as written, each once),
// fragment cycles, then each operation's expansion (root fields, fields
// per selection set, repeated fields, fields, depth, aliases with a
// fragment's counted at each spread). It also answers how many bytes of
// heap the parsed document of source bytes holds (see docSize).
func (l DocLimits) check(doc *ast.QueryDocument, source int) (int64, *gqlerror.Error) {
	s := scanDocument(doc)
	if l.MaxDirectives > 0 && s.directives > l.MaxDirectives {
		return 0, limitError("the query uses %d directives, more than the limit of %d", s.directives, l.MaxDirectives)
	}
	if l.MaxAliases > 0 && s.aliases > l.MaxAliases {
		return 0, limitError("the query uses %d aliases, more than the limit of %d", s.aliases, l.MaxAliases)
	}
	if err := s.cycle(); err != nil {
		return 0, err
	}
	x := &expander{l: l, frags: s.frags}
	for _, op := range doc.Operations {
		if err := x.operation(op); err != nil {
			return 0, err
		}
	}
	return docSize(source, s.nodes), nil
}

// docSize estimates the heap a parsed and validated document holds:
// its source text (an eighth more: the allocator rounds a large text up
// to whole pages), and about 256 bytes for each node of its syntax tree
// (a field is 160 bytes of ast.Field plus its Position and slices; an
// argument or a value about as much). TestDocSizeEstimate holds it within
// [1×, 2×] of the heap measured for the shapes attackers and consoles
// send (many fields, many arguments, many fragments, long strings).
func docSize(source, nodes int) int64 {
	return 1024 + int64(source)*9/8 + 256*int64(nodes)
}

// scanned is what one pass over the whole document finds.
type scanned struct {
	frags      map[string]*ast.FragmentDefinition
	order      []string            // the fragments' names as the document defines them, each once
	spreads    map[string][]string // the fragments each fragment spreads, anywhere inside it
	nodes      int                 // syntax tree nodes (docSize)
	directives int
	aliases    int // aliased fields as written, each once
}

func scanDocument(doc *ast.QueryDocument) *scanned {
	s := &scanned{frags: map[string]*ast.FragmentDefinition{}, spreads: map[string][]string{}}
	for _, op := range doc.Operations {
		s.nodes++
		s.scanDirectives(op.Directives)
		for _, v := range op.VariableDefinitions {
			s.nodes++
			s.scanValue(v.DefaultValue)
			s.scanDirectives(v.Directives)
		}
		s.scanSet(op.SelectionSet, nil)
	}
	for _, f := range doc.Fragments {
		s.nodes++
		// The first of duplicate names is the one spreads reach, as in
		// gqlparser's walker; validation refuses the duplicate.
		if _, dup := s.frags[f.Name]; !dup {
			s.frags[f.Name] = f
			s.order = append(s.order, f.Name)
		}
		s.scanDirectives(f.Directives)
		into := f.Name
		s.scanSet(f.SelectionSet, &into)
	}
	return s
}

func (s *scanned) scanSet(set ast.SelectionSet, frag *string) {
	fieldmodel.Syntax{
		Field: func(x *ast.Field) {
			s.nodes++
			if x.Alias != "" && x.Alias != x.Name {
				s.aliases++
			}
			for _, a := range x.Arguments {
				s.nodes++
				s.scanValue(a.Value)
			}
			s.scanDirectives(x.Directives)
		},
		Inline: func(directives ast.DirectiveList) {
			s.nodes++
			s.scanDirectives(directives)
		},
		Spread: func(name string, directives ast.DirectiveList) {
			s.nodes++
			s.scanDirectives(directives)
			if frag != nil {
				s.spreads[*frag] = append(s.spreads[*frag], name)
			}
		},
	}.Scan(set)
}

func (s *scanned) scanDirectives(ds ast.DirectiveList) {
	for _, d := range ds {
		s.directives++
		s.nodes++
		for _, a := range d.Arguments {
			s.nodes++
			s.scanValue(a.Value)
		}
	}
}

func (s *scanned) scanValue(v *ast.Value) {
	if v == nil {
		return
	}
	s.nodes++
	for _, c := range v.Children {
		s.scanValue(c.Value)
	}
}

// cycle refuses a fragment that spreads itself, directly or through
// others (validation refuses it too, but the expansion below would follow
// it through nested fields forever).
func (s *scanned) cycle() *gqlerror.Error {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(s.frags))
	var path []string
	var visit func(name string) *gqlerror.Error
	visit = func(name string) *gqlerror.Error {
		switch state[name] {
		case onPath:
			i := len(path) - 1
			for path[i] != name {
				i--
			}
			return limitError("fragment %s spreads itself (%s)", name, strings.Join(append(path[i:], name), " → "))
		case done:
			return nil
		}
		if s.frags[name] == nil {
			return nil // unknown: validation names it
		}
		state[name] = onPath
		path = append(path, name)
		for _, next := range s.spreads[name] {
			if err := visit(next); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return nil
	}
	// In the document's order, so a cycle is named from the first of its
	// fragments the document defines, the same on every request.
	for _, name := range s.order {
		if err := visit(name); err != nil {
			return err
		}
	}
	return nil
}

// expander walks each operation as the executor collects its fields: at
// each spot of the answer, the fields of every selection set that lands
// there, through inline fragments and fragments (each fragment once per
// spot), grouped by response name; then the spot below each group. Work
// is bounded by MaxFields (fields visited) and as many fragment visits.
type expander struct {
	l      DocLimits
	frags  map[string]*ast.FragmentDefinition
	fields int // visited, all operations together
	frag   int // fragment spreads and inline fragments visited
	path   []string

	// of the current operation
	depth   int
	aliases int
}

func (x *expander) operation(op *ast.OperationDefinition) *gqlerror.Error {
	x.depth, x.aliases = 0, 0
	if err := x.spot(op.SelectionSet, op.Operation); err != nil {
		return err
	}
	if x.l.MaxDepth > 0 && x.depth > x.l.MaxDepth {
		return limitError("query is nested %d levels deep, more than the limit of %d", x.depth, x.l.MaxDepth)
	}
	if x.l.MaxAliases > 0 && x.aliases > x.l.MaxAliases {
		return limitError("the operation uses %d aliases, more than the limit of %d", x.aliases, x.l.MaxAliases)
	}
	return nil
}

// spot checks each spot of the answer below set, an operation's
// selection: the fields that land on one object of it, as the executor
// merges them (fieldmodel.Merged walks them).
func (x *expander) spot(set ast.SelectionSet, kind ast.Operation) *gqlerror.Error {
	err := fieldmodel.Merged([]ast.SelectionSet{set}, fieldmodel.ByName(x.frags), func() error {
		if err := x.visitFragment(); err != nil {
			return err
		}
		return nil
	}, func(fields []*ast.Field, groups [][]*ast.Field, depth int, path []string) (bool, error) {
		x.path = path
		if depth == 1 {
			limit := x.l.MaxRootFields
			if kind == ast.Mutation && x.l.MaxMutationFields > 0 {
				limit = x.l.MaxMutationFields
			}
			if limit > 0 && len(fields) > limit {
				return false, limitError("the operation asks %d root fields, more than the limit of %d", len(fields), limit)
			}
		} else if x.l.MaxFieldsPerSet > 0 && len(fields) > x.l.MaxFieldsPerSet {
			return false, limitError("the selection set of %s asks %d fields (its fragments' included), more than the limit of %d",
				x.where(), len(fields), x.l.MaxFieldsPerSet)
		}
		x.fields += len(fields)
		if x.l.MaxFields > 0 && x.fields > x.l.MaxFields {
			return false, x.l.fieldsError()
		}
		x.depth = max(x.depth, depth)
		for _, f := range fields {
			if f.Alias != "" && f.Alias != f.Name {
				x.aliases++
			}
		}
		for _, g := range groups {
			if x.l.MaxRepeats > 0 && len(g) > x.l.MaxRepeats {
				x.path = append(x.path, fieldmodel.ResponseName(g[0]))
				return false, limitError("the query asks %s %d times (its fragments' included), more than the limit of %d",
					x.where(), len(g), x.l.MaxRepeats)
			}
		}
		return true, nil
	})
	if err == nil {
		return nil
	}
	return err.(*gqlerror.Error)
}

func (x *expander) visitFragment() *gqlerror.Error {
	x.frag++
	if x.l.MaxFields > 0 && x.frag > x.l.MaxFields {
		return limitError("the query spreads fragments more than %d times (counting each place a fragment lands)", x.l.MaxFields)
	}
	return nil
}

// where names the spot being walked: the operation, or its response path.
func (x *expander) where() string {
	if len(x.path) == 0 {
		return "the operation"
	}
	return strings.Join(x.path, ".")
}
