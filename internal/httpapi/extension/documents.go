package extension

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/sizedlru"
)

// Documents is the front of the GraphQL pipeline, in gqlgen's
// CreateOperationContext, where every document the server has not cached
// has its fields counted off its tokens, is parsed (within the token
// limit), and is held to the document limits (precheck.go) and to the
// operation limits (Limits, and the introspection switch) before it is
// validated; validation then runs against the request's deadline. gqlgen parses and validates in its own step, which
// no limit runs before and nothing bounds: documents hands it the document
// it has validated through the query cache, so gqlgen's own parse and
// validation never run.
//
// A document enters the query cache, and a persisted query's text the APQ
// cache, only once its operation has passed every limit (Documents.Admit):
// a refused document leaves nothing behind. Both caches are bounded in
// entries and in bytes (docSize estimates a document's heap).
type Documents struct {
	schema   *ast.Schema
	maxBytes int // of a document's text
	tokens   int
	limits   DocLimits
	// opChecks are the operation limits, run here on the requested
	// operation with its variables as sent (defaults filled in).
	opChecks []func(*ast.OperationDefinition, map[string]any) *gqlerror.Error
	rules    *rules.Rules
	// validate is gqlparser's validation (a test's stand-in blocks).
	validate func(*ast.Schema, *ast.QueryDocument, *rules.Rules) gqlerror.List

	queries   *sizedlru.Cache[string, *ast.QueryDocument]
	persisted *sizedlru.Cache[string, string] // APQ: hash → text
}

// How many entries the query and APQ caches keep (their bytes: DocumentsConfig).
const (
	queryCacheEntries = 1000
	apqCacheEntries   = 1000
)

// maxValidationErrors is how many validation errors one answer lists (as
// graphql-js stops at 100): a document of 2,000 unknown fields would
// otherwise answer 2,000 errors.
const maxValidationErrors = 100

// DocumentsConfig is what NewDocuments holds documents to.
type DocumentsConfig struct {
	// Limits are the document limits, Operation the operation limits (run
	// here too, before validation, on the requested operation).
	Limits    DocLimits
	Operation Limits
	// MaxBytes bounds a document's text, Tokens its tokens (the parser's
	// token limit).
	MaxBytes, Tokens int
	// NoIntrospection refuses __schema and __type before validation too,
	// and drops validation's "Did you mean" suggestions (they would spell
	// out the schema introspection hides).
	NoIntrospection bool
	// The bytes the query and APQ caches may hold.
	QueryCacheBytes, APQCacheBytes int64
}

// NewDocuments builds the front of the pipeline over schema.
func NewDocuments(schema *ast.Schema, cfg DocumentsConfig) *Documents {
	opChecks := []func(*ast.OperationDefinition, map[string]any) *gqlerror.Error{cfg.Operation.check}
	if cfg.NoIntrospection {
		opChecks = append(opChecks, NoIntrospection{}.check)
	}
	return &Documents{
		schema: schema, maxBytes: cfg.MaxBytes, tokens: cfg.Tokens, limits: cfg.Limits, opChecks: opChecks,
		rules:     validationRules(!cfg.NoIntrospection),
		validate:  validator.ValidateWithRules,
		queries:   sizedlru.New[string, *ast.QueryDocument](queryCacheEntries, cfg.QueryCacheBytes),
		persisted: sizedlru.New[string, string](apqCacheEntries, cfg.APQCacheBytes),
	}
}

// validationRules are gqlgen's: the default rules, with or without the
// "Did you mean" suggestions of unknown fields (off when introspection
// is: they would spell out the schema introspection hides).
func validationRules(suggestions bool) *rules.Rules {
	r := rules.NewDefaultRules()
	fields, leafs := rules.FieldsOnCorrectTypeRule, rules.ScalarLeafsRule
	if !suggestions {
		fields, leafs = rules.FieldsOnCorrectTypeRuleWithoutSuggestions, rules.ScalarLeafsRuleWithoutSuggestions
	}
	for _, name := range []string{"FieldsOnCorrectType", "FieldsOnCorrectTypeWithoutSuggestions", "ScalarLeafs", "ScalarLeafsWithoutSuggestions"} {
		r.RemoveRule(name)
	}
	r.AddRule(fields.Name, fields.RuleFunc)
	r.AddRule(leafs.Name, leafs.RuleFunc)
	return r
}

// pending is what one operation would add to the caches once it has
// passed every limit, and the validation errors its answer lists after
// the first (an OperationParameterMutator answers one error).
type pending struct {
	query  string
	doc    *ast.QueryDocument // validated here, not cached yet (or cached already)
	cached bool
	size   int64

	apqHash, apqQuery string

	moreErrors gqlerror.List
}

const pendingKey = "gpugraph.documents"

// pendingOf is the operation's pending state (made when create is set).
func pendingOf(ctx context.Context, create bool) *pending {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	oc := graphql.GetOperationContext(ctx)
	p, _ := oc.Stats.GetExtension(pendingKey).(*pending)
	if p == nil && create {
		p = &pending{}
		oc.Stats.SetExtension(pendingKey, p)
	}
	return p
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.ResponseInterceptor
} = (*Documents)(nil)

func (*Documents) ExtensionName() string                   { return "Documents" }
func (*Documents) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters parses, checks and validates params.Query
// unless the query cache holds it (it passed all of this before).
func (d *Documents) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	q := params.Query
	if q == "" {
		return nil // gqlgen answers "no operation provided"
	}
	if doc, ok := d.queries.Get(q); ok {
		// Held here for gqlgen's lookup, which could miss if the cache
		// let it go in between.
		p := pendingOf(ctx, true)
		p.query, p.doc, p.cached = q, doc, true
		return nil
	}
	if d.maxBytes > 0 && len(q) > d.maxBytes {
		return limitError("the query is %d bytes, more than the limit of %d", len(q), d.maxBytes)
	}
	if err := d.limits.tooManyFields(&ast.Source{Input: q}, d.tokens); err != nil {
		return err
	}
	// The text may lie in the request's body (the POST transport takes an
	// unescaped query where it is): the document parsed from it, which the
	// query cache may keep, holds a copy of its own rather than the body.
	q = strings.Clone(q)
	src := &ast.Source{Input: q}
	doc, err := parser.ParseQueryWithTokenLimit(src, d.tokens)
	if err != nil {
		var gqlErr *gqlerror.Error
		if !errors.As(err, &gqlErr) {
			gqlErr = gqlerror.Errorf("%s", err)
		}
		errcode.Set(gqlErr, errcode.ParseFailed)
		return gqlErr
	}
	if len(doc.Operations) == 0 {
		err := gqlerror.Errorf("no operation provided")
		errcode.Set(err, errcode.ValidationFailed)
		return err
	}
	size, lerr := d.limits.check(doc, len(q))
	if lerr != nil {
		return lerr
	}
	// The operation limits read fields' definitions: gqlparser's walker
	// binds them (one linear pass, no rule run).
	validator.Walk(d.schema, doc, &validator.Events{})
	if op := doc.Operations.ForName(params.OperationName); op != nil {
		vars := sentVariables(op, params.Variables)
		for _, check := range d.opChecks {
			if err := check(op, vars); err != nil {
				return err
			}
		}
	}
	errs, verr := d.validateBy(ctx, doc)
	if verr != nil {
		return verr
	}
	p := pendingOf(ctx, true)
	if len(errs) > 0 {
		if len(errs) > maxValidationErrors {
			errs = append(errs[:maxValidationErrors], gqlerror.Errorf("too many validation errors: the first %d are listed", maxValidationErrors))
		}
		for _, e := range errs {
			errcode.Set(e, errcode.ValidationFailed)
		}
		p.moreErrors = errs[1:]
		return errs[0]
	}
	p.query, p.doc, p.size = q, doc, size
	return nil
}

// validateBy runs gqlparser's validation on its own goroutine and waits for
// it until ctx ends (the request's deadline, or its client leaving). What
// the document limits let through validates in milliseconds, so an
// abandoned validation does not run on for long; the request answers 504
// either way.
func (d *Documents) validateBy(ctx context.Context, doc *ast.QueryDocument) (gqlerror.List, *gqlerror.Error) {
	done := make(chan gqlerror.List, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				slog.ErrorContext(ctx, "graphql: validation panicked", "panic", r)
				err := gqlerror.Errorf("internal error")
				err.Extensions = map[string]any{"code": apierr.Internal, "status": http.StatusInternalServerError}
				done <- gqlerror.List{err}
			}
		}()
		done <- d.validate(d.schema, doc, d.rules)
	}()
	select {
	case errs := <-done:
		return errs, nil
	case <-ctx.Done():
		slog.WarnContext(ctx, "graphql: request ran out of time while its query was validated")
		err := gqlerror.Errorf("the request ran out of time")
		err.Extensions = map[string]any{"code": apierr.TimeoutCode, "status": http.StatusGatewayTimeout}
		return nil, err
	}
}

// sentVariables are an operation's variables as the request sent them,
// with the defaults its definitions give the ones it left out: what the
// operation limits read before validation has coerced them.
func sentVariables(op *ast.OperationDefinition, sent map[string]any) map[string]any {
	vars, copied := sent, false
	for _, v := range op.VariableDefinitions {
		if v.DefaultValue == nil {
			continue
		}
		if _, ok := sent[v.Variable]; ok {
			continue
		}
		def, err := v.DefaultValue.Value(nil)
		if err != nil {
			continue
		}
		if !copied {
			// The request's own map is gqlgen's to coerce: left as sent.
			vars, copied = make(map[string]any, len(sent)+1), true
			for k, x := range sent {
				vars[k] = x
			}
		}
		vars[v.Variable] = def
	}
	return vars
}

// InterceptResponse lists the validation errors after the first in the
// answer that refuses the operation (gqlgen's DispatchError adds the first).
func (d *Documents) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if p := pendingOf(ctx, false); p != nil && len(p.moreErrors) > 0 {
		more := p.moreErrors
		p.moreErrors = nil
		for _, e := range more {
			graphql.AddError(ctx, e)
		}
	}
	return next(ctx)
}

// QueryCache is gqlgen's query cache (handler.Server.SetQueryCache): the
// document validated for this operation, else the documents that passed
// every limit.
func (d *Documents) QueryCache() graphql.Cache[*ast.QueryDocument] { return queryCache{d} }

// APQCache is the cache of gqlgen's AutomaticPersistedQuery extension: a
// query's text waits, like a document, for its operation to pass every
// limit before it is kept.
func (d *Documents) APQCache() graphql.Cache[string] { return apqCache{d} }

// Admit is the extension that keeps, once an operation has passed every
// limit, what its request would add to the caches: it goes after the
// limits.
func (d *Documents) Admit() graphql.HandlerExtension { return admitDocuments{d} }

type queryCache struct{ d *Documents }

func (c queryCache) Get(ctx context.Context, q string) (*ast.QueryDocument, bool) {
	if p := pendingOf(ctx, false); p != nil && p.doc != nil && p.query == q {
		return p.doc, true
	}
	return c.d.queries.Get(q)
}

// Add is gqlgen's, after a validation of its own, which never runs (Get
// hands it every document validated here); nothing enters the cache but
// through Documents.Admit.
func (queryCache) Add(context.Context, string, *ast.QueryDocument) {}

type apqCache struct{ d *Documents }

func (c apqCache) Get(_ context.Context, hash string) (string, bool) { return c.d.persisted.Get(hash) }

func (apqCache) Add(ctx context.Context, hash, query string) {
	if p := pendingOf(ctx, true); p != nil {
		p.apqHash, p.apqQuery = hash, query
	}
}

type admitDocuments struct{ d *Documents }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = admitDocuments{}

func (admitDocuments) ExtensionName() string                   { return "AdmitDocuments" }
func (admitDocuments) Validate(graphql.ExecutableSchema) error { return nil }

func (a admitDocuments) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	p := pendingOf(ctx, false)
	if p == nil {
		return nil
	}
	if p.doc != nil && !p.cached {
		a.d.queries.Add(p.query, p.doc, p.size)
	}
	if p.apqHash != "" {
		// The text (shared with the document's source when the document
		// was parsed here: a copy of its own, not the request's body) and
		// the hash.
		text := p.apqQuery
		if p.doc != nil && !p.cached && text == p.query {
			text = p.query
		} else {
			text = strings.Clone(text)
		}
		a.d.persisted.Add(p.apqHash, text, int64(64+len(p.apqHash)+len(text)))
	}
	return nil
}

// CacheStats are the caches' entries and bytes, for /metrics.
func (d *Documents) CacheStats() map[string][2]int64 {
	return map[string][2]int64{
		"query": {int64(d.queries.Len()), d.queries.Bytes()},
		"apq":   {int64(d.persisted.Len()), d.persisted.Bytes()},
	}
}
