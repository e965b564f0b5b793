package fieldmodel

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/lib/sizedlru"
)

// CacheSize is how many root fields' plans a Planner keeps, and CacheBytes
// how many bytes they may hold by default (a plan is about fieldBytes a
// field, and it keeps its document's text: see planKey).
const (
	CacheSize  = 1000
	CacheBytes = 16 << 20
	fieldBytes = 256
)

// A Planner is the gqlgen extension that writes planned root fields.
type Planner struct {
	cfg   Config
	reg   *Registry
	b     *Bindings
	roots map[string]reflect.Type // planned root → the Go type its resolver answers
	plans *sizedlru.Cache[planKey, *compiled]
	// same and diverged count the self-check's outcomes.
	same, diverged atomic.Int64
}

// planKey names a root field of one parsed document: its source and where
// the field starts in it. Keyed so, a plan keeps its document's text alive
// but not its syntax tree (ten to thirty times larger), which the query
// cache may have let go.
type planKey struct {
	src    *ast.Source
	offset int
}

// compiled is one root field's plan (nil: gqlgen answers it) and the size
// of its last answer, which the next one's buffer starts at.
type compiled struct {
	root   *value
	size   atomic.Int64
	fields int // planned, for the cache's estimate
	// cached: kept in the plan cache (a plan made for one request, its
	// directives reading variables, is not self-checked: the same code
	// writes the cached ones). checked is set once its first answer was
	// compared with gqlgen's, diverged when it differed (selfCheck).
	cached            bool
	checked, diverged atomic.Bool
}

// maxPresize bounds the buffer a plan starts with.
const maxPresize = 8 << 20

var _ interface {
	graphql.HandlerExtension
	graphql.RootFieldInterceptor
	graphql.FieldInterceptor
} = (*Planner)(nil)

// NewPlanner makes a Planner of cfg's registry's planned roots. It panics
// on a root the bindings do not know (generated code out of date).
func NewPlanner(cfg Config) *Planner {
	p := &Planner{cfg: cfg, reg: cfg.Registry, roots: map[string]reflect.Type{}}
	if p.reg == nil {
		p.reg = Declared
	}
	if p.b = p.reg.bindings; p.b == nil {
		panic("fieldmodel: the registry has no bindings (Registry.Bind)")
	}
	for _, root := range p.reg.Roots() {
		t, ok := p.b.Roots[root]
		if !ok {
			panic(fmt.Sprintf("fieldmodel: planned root %s has no binding: run make generate", root))
		}
		p.roots[root] = t
	}
	maxBytes := cfg.CacheBytes
	if maxBytes == 0 {
		maxBytes = CacheBytes
	}
	p.plans = sizedlru.New[planKey, *compiled](CacheSize, maxBytes)
	return p
}

func (*Planner) ExtensionName() string                   { return "Planner" }
func (*Planner) Validate(graphql.ExecutableSchema) error { return nil }

// capture is where the field interceptor leaves a planned root field's
// answer.
type capture struct {
	field  *ast.Field
	answer any
	ok     bool
	replay bool // answer is given, not taken: gqlgen marshals it
}

type captureKey struct{}

// InterceptRootField writes a planned root field, or lets gqlgen.
func (p *Planner) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rc := graphql.GetRootFieldContext(ctx)
	if rc == nil || p.roots[rc.Field.Name] == nil {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx)
	if op.Operation == nil || op.Operation.Operation != ast.Query {
		return next(ctx)
	}
	pl := p.plan(op, rc.Field)
	if pl.root == nil || pl.diverged.Load() {
		return next(ctx)
	}
	c := &capture{field: rc.Field.Field}
	m := next(context.WithValue(ctx, captureKey{}, c))
	if !c.ok {
		return m // an error or null: gqlgen's answer
	}
	w := &writer{ctx: ctx}
	w.buf.Grow(int(pl.size.Load()))
	if err := w.value(pl.root, reflect.ValueOf(c.answer)); err != nil {
		// Run it again through gqlgen, which reports what the plan cannot.
		return next(ctx)
	}
	gqlgen := func() []byte {
		var b bytes.Buffer
		next(context.WithValue(ctx, captureKey{}, &capture{field: c.field, answer: c.answer, replay: true})).MarshalGQL(&b)
		return b.Bytes()
	}
	switch {
	case p.cfg.Check != nil:
		p.cfg.Check(ctx, rc.Field.Name, w.buf.Bytes(), gqlgen())
	case pl.cached && !pl.checked.Swap(true):
		if answer, same := p.selfCheck(ctx, pl, rc.Field.Name, w.buf.Bytes(), gqlgen()); !same {
			return raw(answer)
		}
	}
	pl.size.Store(int64(min(w.buf.Len(), maxPresize)))
	return raw(w.buf.Bytes())
}

// selfCheck is the production's check of a plan against gqlgen: the first
// answer of each compiled plan is marshaled by gqlgen too, from the same
// rows, and compared byte for byte (Checks counts the outcomes, /metrics
// shows them). A plan that answers otherwise than gqlgen (a gqlgen upgrade
// that changed how it writes a value, a binding out of date) is logged and
// never used again: this answer and every later one of its root field are
// gqlgen's. It doubles the writing work of one answer per plan.
func (p *Planner) selfCheck(ctx context.Context, pl *compiled, root string, planned, gqlgen []byte) ([]byte, bool) {
	if bytes.Equal(planned, gqlgen) {
		p.same.Add(1)
		return planned, true
	}
	p.diverged.Add(1)
	pl.diverged.Store(true)
	at := min(len(planned), len(gqlgen))
	for i := 0; i < min(len(planned), len(gqlgen)); i++ {
		if planned[i] != gqlgen[i] {
			at = i
			break
		}
	}
	slog.ErrorContext(ctx, "graphql: a plan answered otherwise than gqlgen; its root field is gqlgen's from now on",
		"root", root, "at", at, "planned", clip(planned, at), "gqlgen", clip(gqlgen, at))
	return gqlgen, false
}

// clip is up to 80 bytes of b around at, for the log.
func clip(b []byte, at int) string {
	from, to := max(0, at-40), min(len(b), max(0, at)+40)
	return string(b[from:to])
}

// Checks are how many plans' first answers the self-check found the same
// as gqlgen's, and how many it found different (their plans no longer
// used).
func (p *Planner) Checks() (same, diverged int64) { return p.same.Load(), p.diverged.Load() }

// InterceptField takes a planned root field's answer from its resolver and
// gives gqlgen an empty one to marshal.
func (p *Planner) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	c, _ := ctx.Value(captureKey{}).(*capture)
	if c == nil || c.ok {
		return next(ctx)
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field != c.field {
		return next(ctx)
	}
	if c.replay {
		return c.answer, nil
	}
	res, err := next(ctx)
	if err != nil {
		return res, err
	}
	empty, ok := emptyLike(res)
	if !ok {
		return res, err
	}
	c.answer, c.ok = res, true
	return empty, nil
}

// emptyLike is an empty answer of res's type: an empty slice, or a pointer
// to a zero struct whose struct pointers point to zero structs; false for
// nil and anything else.
func emptyLike(res any) (any, bool) {
	v := reflect.ValueOf(res)
	switch {
	case !v.IsValid():
		return nil, false
	case v.Kind() == reflect.Slice && !v.IsNil():
		return reflect.MakeSlice(v.Type(), 0, 0).Interface(), true
	case v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct:
		empty := reflect.New(v.Type().Elem())
		// A connection's pageInfo is non-null: a zero one, not nil.
		for i := 0; i < empty.Elem().NumField(); i++ {
			if f := empty.Elem().Field(i); f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct && f.CanSet() {
				f.Set(reflect.New(f.Type().Elem()))
			}
		}
		return empty.Interface(), true
	}
	return nil, false
}

// plan is root field f's plan, or nil when gqlgen answers it. A plan
// depends on the document only, unless a directive (@skip, @include) in
// the selection reads variables: such a plan is made for each request.
func (p *Planner) plan(op *graphql.OperationContext, f graphql.CollectedField) *compiled {
	var key planKey
	if pos := f.Field.Position; pos != nil && pos.Src != nil {
		key = planKey{src: pos.Src, offset: pos.Start}
		if pl, ok := p.plans.Get(key); ok {
			return pl
		}
	}
	pl := p.compile(op, f)
	if key.src != nil && !directives(f.Selections) {
		pl.cached = true
		p.plans.Add(key, pl, int64(len(key.src.Input)+fieldBytes*(1+pl.fields)))
	}
	return pl
}

// CacheStats is how many plans the planner keeps and the bytes they hold.
func (p *Planner) CacheStats() (entries int, bytes int64) {
	return p.plans.Len(), p.plans.Bytes()
}

// compile plans root field f (a nil root: gqlgen answers it).
func (p *Planner) compile(op *graphql.OperationContext, f graphql.CollectedField) *compiled {
	if f.Definition == nil || len(f.Directives) > 0 {
		return &compiled{}
	}
	c := compiler{p: p, op: op}
	v, ok := c.compileValue(f.Definition.Type, p.roots[f.Name], f.Selections, FieldBinding{})
	if !ok {
		return &compiled{fields: c.fields}
	}
	return &compiled{root: v, fields: c.fields}
}

// raw is JSON already written.
type raw []byte

func (r raw) MarshalGQL(w io.Writer) { _, _ = w.Write(r) }
