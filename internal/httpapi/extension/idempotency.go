package extension

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/idempotency"
)

// Idempotency gives GraphQL's mutations REST's Idempotency-Key (package
// idempotency, whose rules and keys they share): a mutation operation of
// one root field, keyed by the Idempotency-Key header of a plain POST or
// by @idempotent(key:) on the field (which serves WebSockets too, whose
// operations carry no header of their own), acts once. The first operation
// with the key acts and its whole answer is kept; the same request again
// answers that answer byte for byte without running, over HTTP with
// Idempotent-Replayed: true and the first answer's status; another request
// with the key answers IDEMPOTENCY_KEY_REUSED (422), and one while the
// first is in flight IDEMPOTENCY_KEY_IN_USE (409, retryAfter 1).
//
// "The same request" is the answer's shape, each field with its arguments'
// values (variables substituted, defaults filled in; canonical): neither
// the document's spacing, its operation name, its variables' names nor its
// fragments count, while another argument value, another field asked or
// another alias does. A mutation is never
// the same request as a REST one: a key of one face sent on the other is
// reused.
//
// The header is ignored on a query or subscription (reads need no key). A
// key on an operation of several mutation fields, the header on a stream's
// operation, the header and the directive together, @idempotent anywhere
// but on a mutation's root field, and a key on a mutation whose answer
// holds a secret are refused (400 INVALID_IDEMPOTENCY_KEY) before
// anything runs. As REST checks the permission before it reads the key, a
// caller who lacks the mutation's permission (Gates) is answered as without
// a key: the resolver refuses it, and no kept answer is handed to it.
//
// The answer is kept by Idempotency's InterceptResponse, which must come
// before ResponseCap (it keeps what is sent); Replay, the last extension,
// answers a kept answer or a refusal in place of running the operation.
type Idempotency struct {
	Keys *idempotency.Service
	// Gate tells a stream's operations from a plain request's.
	Gate Gate
	// Gates are the permission checks the service behind each mutation
	// field makes first, nil for a mutation that takes no key (its answer
	// holds a secret, which a kept answer would hold in the database for
	// 24 hours). Every mutation of the schema must be listed.
	Gates map[string]func(*auth.Caller) error
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = Idempotency{}

func (Idempotency) ExtensionName() string { return "Idempotency" }

// Validate refuses a schema with a mutation Gates does not list: its key
// would be refused as if its answer held a secret.
func (i Idempotency) Validate(es graphql.ExecutableSchema) error {
	if m := es.Schema().Mutation; m != nil {
		for _, f := range m.Fields {
			if _, ok := i.Gates[f.Name]; !ok && !strings.HasPrefix(f.Name, "__") {
				return fmt.Errorf("idempotency: mutation %s has no entry in Gates", f.Name)
			}
		}
	}
	return nil
}

// The names the refusals give a key, and what tells mutations apart.
const (
	directiveName = "idempotent"
	directiveKey  = "@idempotent key"
	mutationsDiff = "another mutation field, other arguments or other fields asked, or a REST request"
)

// keyed is one keyed operation's key, and what its halves hand each other.
type keyed struct {
	naming          idempotency.Naming
	org, key, print string
	begun           bool
	answer          *graphql.Response // a kept answer or a refusal, answered instead of running
	served          bool
}

type keyedKey struct{}

func keyedOf(ctx context.Context) *keyed {
	k, _ := ctx.Value(keyedKey{}).(*keyed)
	return k
}

// MutateOperationContext refuses a key the operation may not carry,
// before anything runs.
func (i Idempotency) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if _, e := i.keyOf(ctx, oc); e != nil {
		return operationError(ctx, e)
	}
	return nil
}

// InterceptOperation hands a keyed operation's key to both halves.
func (i Idempotency) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if k, e := i.keyOf(ctx, graphql.GetOperationContext(ctx)); k != nil && e == nil {
		ctx = context.WithValue(ctx, keyedKey{}, k)
	}
	return next(ctx)
}

// InterceptResponse reserves the key as the operation's answer is asked
// for, then keeps that answer (or releases the key when it is a server
// error, as REST does); a kept answer or a refusal is handed to Replay.
func (i Idempotency) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	k := keyedOf(ctx)
	if k == nil || k.begun {
		return next(ctx)
	}
	k.begun = true
	kept, res, err := i.Keys.BeginNamed(ctx, k.naming, k.org, k.key, k.print)
	switch {
	case err != nil:
		k.answer = refused(ctx, err)
		return next(ctx)
	case kept != nil:
		var resp graphql.Response
		if err := json.Unmarshal(kept.Body, &resp); err != nil {
			k.answer = refused(ctx, fmt.Errorf("kept answer of %s %q: %w", k.naming.Key, k.key, err))
			return next(ctx)
		}
		k.answer = &resp
		if st := outcomeOf(ctx); st != nil {
			st.replayed.Store(true)
			if kept.Status != http.StatusOK {
				st.refused.CompareAndSwap(0, int32(kept.Status))
			}
		}
		return next(ctx)
	}
	resp := next(ctx)
	// The operation ran: keep its answer even if the client has gone.
	keep := context.WithoutCancel(ctx)
	if resp == nil {
		err = res.Release(keep)
	} else if body, merr := json.Marshal(resp); merr != nil {
		err = merr
		_ = res.Release(keep)
	} else {
		err = res.Finish(keep, answerStatus(ctx, resp), nil, body)
	}
	if err != nil {
		slog.ErrorContext(ctx, "keep idempotent answer", "err", err, "key", k.key)
	}
	return resp
}

// answerStatus is the HTTP status the answer resp is sent with, or the
// highest status of its server errors when higher (a mutation field's 503
// keeps HTTP 200, as field errors do, but is not kept: its retry should act
// again).
func answerStatus(ctx context.Context, resp *graphql.Response) int {
	status := http.StatusOK
	if st := outcomeOf(ctx); st != nil {
		status, _ = st.Status(http.StatusOK)
	}
	for _, e := range resp.Errors {
		if s, ok := e.Extensions["status"].(int); ok && s >= http.StatusInternalServerError && status < s {
			status = s
		}
	}
	return status
}

// refused is the answer of an operation err refused: its one error.
func refused(ctx context.Context, err error) *graphql.Response {
	return &graphql.Response{Errors: gqlerror.List{operationError(ctx, err)}}
}

// Replay answers, in place of running the operation, the kept answer or
// the refusal Idempotency found for it. It is the last extension, so the
// others (metrics, the response cap) see the answer as they see one that
// ran.
type Replay struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = Replay{}

func (Replay) ExtensionName() string                   { return "IdempotentReplay" }
func (Replay) Validate(graphql.ExecutableSchema) error { return nil }

func (Replay) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	k := keyedOf(ctx)
	if k == nil || k.answer == nil {
		return next(ctx)
	}
	// A transport asks until it gets nil (a WebSocket does): the
	// operation, which never ran, must not run on the second ask.
	if k.served {
		return nil
	}
	k.served = true
	return k.answer
}

// keyOf reads oc's key: nil when it has none (no key, a query's or a
// subscription's header, a caller the mutation's gate refuses), or the
// refusal of a key the operation may not carry.
func (i Idempotency) keyOf(ctx context.Context, oc *graphql.OperationContext) (*keyed, *apierr.Error) {
	if oc == nil || oc.Operation == nil {
		return nil, nil
	}
	op := oc.Operation
	mutation := op.Operation == ast.Mutation
	var header []string
	if mutation && oc.Headers != nil {
		header = oc.Headers.Values(idempotency.Header)
	}
	// Most operations carry no key: a document that never spells the
	// directive's name is not walked.
	if len(header) == 0 && oc.RawQuery != "" && !strings.Contains(oc.RawQuery, directiveName) {
		return nil, nil
	}
	var roots []*ast.Field
	fieldmodel.Roots(op.SelectionSet, func(f *ast.Field) { roots = append(roots, f) })
	// @idempotent, where it is.
	var marked *ast.Field
	var e *apierr.Error
	fieldmodel.Every(op.SelectionSet, func(f *ast.Field) {
		if e != nil || f.Directives.ForName(directiveName) == nil {
			return
		}
		switch {
		case !mutation || !slices.Contains(roots, f):
			e = badKey("@idempotent marks a mutation's root field; %s is not one", f.Alias)
		case marked != nil:
			e = badKey("@idempotent marks the one root field of a mutation operation; it is on %s and %s: send each as its own operation", marked.Alias, f.Alias)
		default:
			marked = f
		}
	})
	if e != nil || !mutation {
		return nil, e
	}
	if len(header) == 0 && marked == nil {
		return nil, nil
	}
	name := idempotency.Header
	if marked != nil {
		name = "@idempotent"
	}
	// One mutation field, as named in the answer.
	var fields []string
	for _, f := range roots {
		if !strings.HasPrefix(f.Name, "__") && !slices.Contains(fields, f.Alias) {
			fields = append(fields, f.Alias)
		}
	}
	if len(fields) != 1 {
		return nil, badKey("%s keys a mutation operation of one field; this one has %d (%s): send each as its own operation",
			name, len(fields), strings.Join(fields, ", "))
	}
	var field *ast.Field
	for _, f := range roots {
		if f.Alias == fields[0] {
			field = f
			break
		}
	}
	var key string
	naming := idempotency.Naming{Key: idempotency.Header, Differs: mutationsDiff}
	switch {
	case len(header) > 0 && marked != nil:
		return nil, badKey("send the key once: the %s header or @idempotent(key:) on %s, not both", idempotency.Header, marked.Alias)
	case len(header) > 0 && i.Gate != nil && i.Gate.OnStream(ctx):
		return nil, badKey("the %s header keys a plain POST /graphql, not the operations of a WebSocket or an event stream: mark the mutation field @idempotent(key:)", idempotency.Header)
	case len(header) > 0:
		k, err := idempotency.CheckKey(header)
		if e, ok := apierr.As(err); ok {
			return nil, e
		}
		key = k
	default:
		d := marked.Directives.ForName(directiveName)
		var defs ast.ArgumentDefinitionList
		if d.Definition != nil {
			defs = d.Definition.Arguments
		}
		v, _ := argMap(defs, d.Arguments, oc.Variables)["key"].(string)
		k, err := idempotency.CheckNamed(directiveKey, v)
		if e, ok := apierr.As(err); ok {
			return nil, e
		}
		key, naming.Key = k, directiveKey
	}
	gate, listed := i.Gates[field.Name]
	if gate == nil {
		why := "its answer holds a secret, which is never kept"
		if !listed {
			why = "it is not one of the mutations keys serve"
		}
		return nil, badKey("%s takes no idempotency key: %s; send it without one", field.Name, why)
	}
	c := auth.FromContext(ctx)
	if gate(c) != nil {
		return nil, nil // refused by its resolver, as without a key
	}
	canon, err := canonical(oc)
	if err != nil {
		return nil, apierr.BadRequest("%s: the mutation's arguments: %v", name, err)
	}
	return &keyed{naming: naming, org: c.OrganizationID, key: key,
		print: idempotency.Fingerprint("GRAPHQL", "mutation", canon)}, nil
}

func badKey(format string, args ...any) *apierr.Error {
	return apierr.New(http.StatusBadRequest, idempotency.CodeBadKey, format, args...)
}

// canonical is what makes two mutation operations the same request: the
// answer's shape as the executor collects it (package fieldmodel's Collect:
// @skip and @include applied, fragments and repeated fields merged), each
// field by response name with its name and its arguments' values
// (variables substituted, defaults filled in), so spacing, the operation's
// name, variables' names and how fragments spell a selection do not count.
// @idempotent holds the key, not the request: it is no argument. The
// schema has no interfaces or unions, so a selection is collected for its
// field's type. encoding/json writes maps in key order.
func canonical(oc *graphql.OperationContext) ([]byte, error) {
	var set func(sel ast.SelectionSet, typ []string) []any
	set = func(sel ast.SelectionSet, typ []string) []any {
		fields := fieldmodel.Collect(oc, sel, typ...)
		out := make([]any, 0, len(fields))
		for _, f := range fields {
			var defs ast.ArgumentDefinitionList
			var below []string
			if f.Definition != nil {
				defs, below = f.Definition.Arguments, []string{f.Definition.Type.Name()}
			}
			e := map[string]any{"alias": f.Alias, "field": f.Name, "args": argMap(defs, f.Arguments, oc.Variables)}
			if len(f.Selections) > 0 {
				e["select"] = set(f.Selections, below)
			}
			out = append(out, e)
		}
		return out
	}
	return json.Marshal(map[string]any{"operation": string(oc.Operation.Operation), "select": set(oc.Operation.SelectionSet, nil)})
}

// argMap is the arguments' values as gqlparser's ArgumentMap reads them
// (variables substituted, defaults of arguments not given filled in), also
// for a field or directive validation gave no definition (__typename).
func argMap(defs ast.ArgumentDefinitionList, args ast.ArgumentList, vars map[string]any) map[string]any {
	out := map[string]any{}
	for _, a := range args {
		if a.Value.Kind == ast.Variable {
			if v, ok := vars[a.Value.Raw]; ok { // a variable not sent is an argument not given
				out[a.Name] = v
			}
			continue
		}
		v, err := a.Value.Value(vars)
		if err != nil {
			v = a.Value.String()
		}
		out[a.Name] = v
	}
	for _, d := range defs {
		if _, given := out[d.Name]; !given && d.DefaultValue != nil {
			if v, err := d.DefaultValue.Value(vars); err == nil {
				out[d.Name] = v
			}
		}
	}
	return out
}
