package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/paging"
)

// Limits refuses, before any resolver runs, an operation that would do more
// work than one request may: nested deeper than MaxDepth fields, costing more
// than MaxComplexity, with more than MaxAliases aliased fields, more than
// MaxRootFields root fields (MaxMutationFields for a mutation). It replaces
// gqlgen's FixedComplexityLimit, whose cost does not multiply by list sizes
// and whose walker expands every fragment spread anew (ten fragments each
// spreading the next ten times is 10^10 visits); here each fragment is walked
// once and its cost and depth are memoized.
//
// Cost: every field costs 1 plus its children's cost times its list
// multiplier: the `limit` (or `first`) argument of a paginated list (its default when
// absent), listEstimates for the lists that have none, 1 for other fields;
// podMetrics adds the samples it would read (weight, podmetrics_cost.go).
type Limits struct {
	// Schema is where input object types are looked up, to hold the lists
	// inside them to their caps (lists.go).
	Schema            *ast.Schema
	MaxDepth          int
	MaxComplexity     int
	MaxAliases        int
	MaxRootFields     int
	MaxMutationFields int
}

// listEstimates are the multipliers of unpaginated lists: how many elements
// a real answer holds at most in practice (a DGX node has 8 GPUs; the demo
// fleet 12 nodes, the largest fixtures a few hundred).
var listEstimates = map[string]int{
	"Query.nodes":        200,
	"Query.revisionPods": 100,
	"Query.projects":     100,
	"Query.gpuModels":    20,
	"Node.gpus":          8,
	"Node.vms":           20,
	"VM.gpus":            8,
}

// defaultListEstimate is the multiplier of any other list (a pod's
// containers, a series' values): small lists bounded by the data itself.
const defaultListEstimate = 1

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = Limits{}

func (Limits) ExtensionName() string                   { return "Limits" }
func (Limits) Validate(graphql.ExecutableSchema) error { return nil }

func limitError(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": apierr.BadRequestCode, "status": http.StatusBadRequest}
	return err
}

func (l Limits) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	return l.check(oc.Operation, oc.Variables)
}

// check holds op, with variables vars, to the limits. It runs after
// validation on every request (vars coerced), and before validation on a
// document the server has not cached (vars as sent, defaults filled in:
// Documents.MutateOperationParameters), once gqlparser's walker has bound
// the fields to their definitions.
func (l Limits) check(op *ast.OperationDefinition, vars map[string]any) *gqlerror.Error {
	w := &costWalker{vars: vars, schema: l.Schema}
	maxRoots := l.MaxRootFields
	if op.Operation == ast.Mutation && l.MaxMutationFields > 0 {
		maxRoots = l.MaxMutationFields
	}
	// Root fields counted through fragments too ({ ...F } with F holding 300 fields).
	roots := w.rootCount(op.SelectionSet)
	if maxRoots > 0 && roots > maxRoots {
		return limitError("the operation asks %d root fields, more than the limit of %d", roots, maxRoots)
	}
	if err := w.checkArgs(op.SelectionSet); err != nil {
		return err
	}
	c := w.set(op.SelectionSet)
	if l.MaxDepth > 0 && c.depth > l.MaxDepth {
		return limitError("query is nested %d levels deep, more than the limit of %d", c.depth, l.MaxDepth)
	}
	if l.MaxAliases > 0 && c.aliases > float64(l.MaxAliases) {
		return limitError("the operation uses %s aliases, more than the limit of %d", costString(c.aliases), l.MaxAliases)
	}
	if l.MaxComplexity > 0 && c.cost > float64(l.MaxComplexity) {
		return limitError("operation has complexity %s, which exceeds the limit of %d", costString(c.cost), l.MaxComplexity)
	}
	return nil
}

func costString(c float64) string {
	if c >= 1e15 {
		return strconv.FormatFloat(c, 'g', 3, 64)
	}
	return strconv.FormatFloat(c, 'f', 0, 64)
}

// cost is what a selection set costs: work (saturating float), the deepest
// path in fields, and the aliases it uses (each counted as many times as its
// fragment is spread, as written out; not multiplied by the lists above
// it, whose work the cost weighs: { nodes { a: id } } is one alias).
type cost struct {
	cost    float64
	depth   int
	aliases float64
}

type costWalker struct {
	vars   map[string]any
	schema *ast.Schema
	fold   *fieldmodel.Fold[cost]
}

// checkArgs holds every argument of the operation to the input bounds (package bounds),
// as the REST face holds its parameters: strings in length, lists in how
// many values they hold (listCaps).
func (w *costWalker) checkArgs(set ast.SelectionSet) *gqlerror.Error {
	var bad *gqlerror.Error
	w.eachField(set, func(f *ast.Field) {
		for _, a := range f.Arguments {
			if bad != nil || a.Value == nil {
				return
			}
			v, err := a.Value.Value(w.vars)
			if err != nil {
				continue // validation answers it
			}
			max := bounds.MaxParam
			switch {
			case a.Name == "search":
				max = bounds.MaxSearch
			case strings.HasSuffix(a.Name, "id") || strings.HasSuffix(a.Name, "Id"):
				max = bounds.MaxID
			}
			if err := checkStrings(v, func(s string) error { return bounds.Text(fmt.Sprintf("argument %s of %s", a.Name, f.Name), s, max) }); err != nil {
				e, _ := apierr.As(err)
				bad = limitError("%s", e.Message)
				return
			}
			if f.Definition != nil {
				if def := f.Definition.Arguments.ForName(a.Name); def != nil {
					bad = w.checkList(argumentCoordinate(f, a.Name), a.Name, f.Name, def.Type, v)
				}
			}
		}
	})
	return bad
}

func checkStrings(v any, check func(string) error) error {
	switch x := v.(type) {
	case string:
		return check(x)
	case []any:
		for _, e := range x {
			if err := checkStrings(e, check); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := checkStrings(e, check); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachField calls fn on every field of set and below, walking each
// fragment once: a fragment's arguments are the same wherever it is spread.
func (w *costWalker) eachField(set ast.SelectionSet, fn func(*ast.Field)) {
	fieldmodel.Every(set, fn)
}

// rootCount counts the root fields of set, through fragments. A fragment
// spread twice at the root names the same fields: the executor merges
// them, so it counts once.
func (w *costWalker) rootCount(set ast.SelectionSet) int {
	n := 0
	fieldmodel.Roots(set, func(*ast.Field) { n++ })
	return n
}

// set is what set costs, each fragment's cost computed once and reused
// wherever it is spread (fieldmodel.Fold).
func (w *costWalker) set(set ast.SelectionSet) cost {
	if w.fold == nil {
		w.fold = &fieldmodel.Fold[cost]{
			Field: func(f *ast.Field, _ func(ast.SelectionSet) cost) cost { return w.field(f) },
			Add: func(total, c cost) cost {
				total.cost = satAdd(total.cost, c.cost)
				total.aliases = satAdd(total.aliases, c.aliases)
				total.depth = max(total.depth, c.depth)
				return total
			},
		}
	}
	return w.fold.Set(set)
}

func (w *costWalker) field(f *ast.Field) cost {
	children := w.set(f.SelectionSet)
	mult := w.multiplier(f)
	c := cost{
		cost:    satAdd(satAdd(1, children.cost*mult), w.weight(f)),
		depth:   1 + children.depth,
		aliases: children.aliases, // not by the list: complexity weighs that
	}
	if f.Alias != "" && f.Alias != f.Name {
		c.aliases = satAdd(c.aliases, 1)
	}
	return c
}

// multiplier is how many times a field's selection set is resolved.
func (w *costWalker) multiplier(f *ast.Field) float64 {
	if f.Definition == nil || f.Definition.Type == nil || f.Definition.Type.Elem == nil {
		// An object: its sets once. (A list type answering a list object,
		// as vms → VmList, multiplies at its inner list field.)
		if f.Definition != nil && pageArg(f) != "" {
			return float64(w.limitOf(f))
		}
		return 1
	}
	if pageArg(f) != "" {
		return float64(w.limitOf(f))
	}
	if f.ObjectDefinition != nil {
		if n, ok := listEstimates[f.ObjectDefinition.Name+"."+f.Name]; ok {
			return float64(n)
		}
	}
	return defaultListEstimate
}

// pageArg is the argument that sizes a paginated field's page: limit on
// an offset page, first on a cursor page (a connection); "" on others.
func pageArg(f *ast.Field) string {
	for _, name := range []string{"limit", "first"} {
		if f.Definition.Arguments.ForName(name) != nil {
			return name
		}
	}
	return ""
}

// limitOf is the field's page argument (pageArg), its default when absent, and the
// maximum when it is out of range (the resolver then refuses it anyway).
func (w *costWalker) limitOf(f *ast.Field) int {
	arg := f.Arguments.ForName(pageArg(f))
	if arg == nil || arg.Value == nil {
		return paging.DefaultLimit
	}
	v, err := arg.Value.Value(w.vars)
	if err != nil || v == nil {
		return paging.DefaultLimit
	}
	var n int64
	switch x := v.(type) {
	case json.Number: // a variable as sent, before validation coerced it
		var err error
		if n, err = x.Int64(); err != nil {
			return paging.MaxLimit
		}
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		n = int64(x)
	case string:
		n, _ = strconv.ParseInt(x, 10, 64)
	default:
		return paging.MaxLimit
	}
	if n < 1 || n > paging.MaxLimit {
		return paging.MaxLimit
	}
	return int(n)
}

func satAdd(a, b float64) float64 {
	s := a + b
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return math.MaxFloat64
	}
	return s
}
