package resolvers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"gpugraph/graph"
	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/metering"
	"gpugraph/models"
)

// An organization's money (docs/contract.md#billing): package metering
// checks billing.read (own organization) or an operator's permission and
// decides; these translate. Amounts are cents as GraphQL Floats: the
// micro-cents over a million, the nearest float to the exact decimal,
// which the Float scalar writes in its shortest form (6.225).

func (r *Resolver) Organization() graph.OrganizationResolver { return &organizationResolver{r} }
func (r *Resolver) LedgerEntry() graph.LedgerEntryResolver   { return &ledgerEntryResolver{} }
func (r *Resolver) BillingEvent() graph.BillingEventResolver { return &billingEventResolver{} }

type organizationResolver struct{ *Resolver }
type ledgerEntryResolver struct{}
type billingEventResolver struct{}

// centsOf is an amount of micro-cents in cents.
func centsOf(micro int64) float64 { return float64(micro) / models.MicroCentsPerCent }

// Organization answers the caller's organization (id absent or its own),
// or, for an operator, any: the money read's gate first, so that another
// organization answers as a missing one.
func (r *queryResolver) Organization(ctx context.Context, id *string) (*models.Organization, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return r.Services.Metering.Organization(ctx, c, orgOrOwn(c, id))
}

func (r *mutationResolver) GrantCredits(ctx context.Context, organizationID string, amountCents int, reason string) (*models.LedgerEntry, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	// The operation's idempotency key, when it has one, is the extension's
	// (a replay never reaches here); the ledger's own key is fresh.
	return r.Services.Metering.Grant(ctx, c, organizationID, int64(amountCents), reason, "")
}

// SetLowBalanceThreshold sets (hours) or clears (null) the threshold of
// the organization (default the caller's own) and answers it.
func (r *mutationResolver) SetLowBalanceThreshold(ctx context.Context, organizationID *string, hours *int) (*models.Organization, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	org := orgOrOwn(c, organizationID)
	if _, err := r.Services.Metering.SetLowBalanceThreshold(ctx, c, org, hours); err != nil {
		return nil, err
	}
	return r.Services.Metering.Organization(ctx, c, org)
}

// SetSpendLimit sets (cents an hour) or clears (null: the platform's
// default) the organization's own spend limit and answers it.
func (r *mutationResolver) SetSpendLimit(ctx context.Context, organizationID *string, centsPerHour *int) (*models.Organization, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	org := orgOrOwn(c, organizationID)
	var limit *int64
	if centsPerHour != nil {
		limit = new(int64(*centsPerHour))
	}
	if _, err := r.Services.Metering.SetSpendLimit(ctx, c, org, limit); err != nil {
		return nil, err
	}
	return r.Services.Metering.Organization(ctx, c, org)
}

// orgOrOwn is the organization an argument names, the caller's own when
// it names none.
func orgOrOwn(c *auth.Caller, id *string) string {
	if id != nil && *id != "" {
		return *id
	}
	return c.OrganizationID
}

// balance reads the organization's balance for one of its fields, once a
// request (loaders.BalanceByOrg): a query of every money field of N
// organizations computes N balances, not one a field.
func (r *organizationResolver) balance(ctx context.Context, o *models.Organization) (*metering.Balance, error) {
	if _, err := auth.Authenticate(ctx); err != nil {
		return nil, err
	}
	l, err := requestLoaders(ctx)
	if err != nil {
		return nil, err
	}
	return l.BalanceByOrg.Load(ctx, o.ID)()
}

func (r *organizationResolver) Prepaid(ctx context.Context, o *models.Organization) (bool, error) {
	b, err := r.balance(ctx, o)
	if err != nil {
		return false, err
	}
	return b.Prepaid, nil
}

func (r *organizationResolver) Balance(ctx context.Context, o *models.Organization) (float64, error) {
	b, err := r.balance(ctx, o)
	if err != nil {
		return 0, err
	}
	return centsOf(b.BalanceMicroCents), nil
}

func (r *organizationResolver) BurnRatePerHour(ctx context.Context, o *models.Organization) (float64, error) {
	b, err := r.balance(ctx, o)
	if err != nil {
		return 0, err
	}
	return centsOf(b.BurnMicroCentsPerHour), nil
}

func (r *organizationResolver) RunwayHours(ctx context.Context, o *models.Organization) (*float64, error) {
	b, err := r.balance(ctx, o)
	if err != nil {
		return nil, err
	}
	return b.RunwayHours, nil
}

// SpendLimitPerHour is null when the organization has no spend limit.
func (r *organizationResolver) SpendLimitPerHour(ctx context.Context, o *models.Organization) (*float64, error) {
	b, err := r.balance(ctx, o)
	if err != nil || b.SpendLimitCentsPerHour == nil {
		return nil, err
	}
	return new(centsOf(*b.SpendLimitCentsPerHour * models.MicroCentsPerCent)), nil
}

// LowBalanceThresholdHours is null when the organization has none.
func (r *organizationResolver) LowBalanceThresholdHours(ctx context.Context, o *models.Organization) (*int, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	set, err := r.Services.Metering.Settings(ctx, c, o.ID)
	if err != nil {
		return nil, err
	}
	return set.LowBalanceThresholdHours, nil
}

// usageGroups are the schema's groups as the service names them.
var usageGroups = map[model.UsageGroup]string{
	model.UsageGroupWorkload: "workload", model.UsageGroupGPUModel: "gpuModel",
	model.UsageGroupProject: "project", model.UsageGroupDay: "day",
}

func (r *organizationResolver) Usage(ctx context.Context, o *models.Organization, from, to time.Time, groupBy *model.UsageGroup) (*model.Usage, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	g := "day"
	if groupBy != nil {
		g = usageGroups[*groupBy]
	}
	u, err := r.Services.Metering.Usage(ctx, c, o.ID, from, to, g)
	if err != nil {
		return nil, err
	}
	out := &model.Usage{From: u.From, To: u.To, Lines: make([]*model.UsageLine, len(u.Lines)), Total: centsOf(u.TotalCostMicroCents)}
	for i, l := range u.Lines {
		out.Lines[i] = &model.UsageLine{Key: l.Key, Seconds: float64(l.Milliseconds) / 1000,
			GPUSeconds: float64(l.GPUMilliseconds) / 1000, Cost: centsOf(l.CostMicroCents)}
	}
	return out, nil
}

// ledgerList names the ledger's cursors (paging.EncodeCursor): entry ids,
// oldest first.
const ledgerList = "ledger"

func (r *organizationResolver) Ledger(ctx context.Context, o *models.Organization, first *int, after *string) (*model.LedgerEntryConnection, error) {
	conn, err := idPage(ctx, r, o, ledgerList, first, after, r.Services.Metering.Ledger, func(e *models.LedgerEntry) int64 { return e.ID })
	if err != nil {
		return nil, err
	}
	out := &model.LedgerEntryConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), Edges: make([]*model.LedgerEntryEdge, len(conn.Rows))}
	for i, e := range conn.Rows {
		out.Edges[i] = &model.LedgerEntryEdge{Cursor: conn.Cursors[i], Node: e}
	}
	return out, nil
}

// billingEventList names the billing events' cursors: their
// organization's own ids, oldest first.
const billingEventList = "billingEvents"

func (r *organizationResolver) BillingEvents(ctx context.Context, o *models.Organization, first *int, after *string) (*model.BillingEventConnection, error) {
	conn, err := idPage(ctx, r, o, billingEventList, first, after, r.Services.Metering.BillingEvents, func(e *models.BillingEvent) int64 { return e.Seq })
	if err != nil {
		return nil, err
	}
	out := &model.BillingEventConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), Edges: make([]*model.BillingEventEdge, len(conn.Rows))}
	for i, e := range conn.Rows {
		out.Edges[i] = &model.BillingEventEdge{Cursor: conn.Cursors[i], Node: e}
	}
	return out, nil
}

// idPage reads one page of an organization's money list whose rows count
// up by an id of their own (the ledger, the billing events): the caller
// may read the organization's money, the cursor is this list's, and the
// page is read after the cursor's id.
func idPage[T any](ctx context.Context, r *organizationResolver, o *models.Organization, list string, first *int, after *string,
	read func(context.Context, *auth.Caller, string, int64, int) ([]T, bool, error), id func(*T) int64) (*paging.Connection[T], error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Services.Metering.MayRead(c, o.ID); err != nil {
		return nil, err
	}
	page, err := paging.ParseCursor(list, 0, first, after)
	if err != nil {
		return nil, err
	}
	var from int64
	if page.After != nil {
		if from, err = strconv.ParseInt(page.After.ID, 10, 64); err != nil {
			return nil, apierr.BadRequest("after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
		}
	}
	got, more, err := read(ctx, c, o.ID, from, page.First)
	if err != nil {
		return nil, err
	}
	rows := make([]*T, len(got))
	for i := range got {
		rows[i] = &got[i]
	}
	return paging.NewConnection(list, page, rows, more, 0, func(e *T) paging.Key {
		return paging.Key{Sort: []*string{}, ID: strconv.FormatInt(id(e), 10)}
	}), nil
}

// A billing event's id is its organization's own count.
func (billingEventResolver) ID(_ context.Context, e *models.BillingEvent) (string, error) {
	return strconv.FormatInt(e.Seq, 10), nil
}

// Kind is the schema's spelling of the stored kind (low_balance:
// LOW_BALANCE), which gqlgen writes as it is.
func (billingEventResolver) Kind(_ context.Context, e *models.BillingEvent) (models.BillingEventKind, error) {
	return models.BillingEventKind(strings.ToUpper(string(e.Kind))), nil
}

func (billingEventResolver) Balance(_ context.Context, e *models.BillingEvent) (float64, error) {
	return centsOf(e.BalanceMicroCents), nil
}

func (billingEventResolver) BurnRatePerHour(_ context.Context, e *models.BillingEvent) (float64, error) {
	return centsOf(e.BurnMicroCentsPerHour), nil
}

func (ledgerEntryResolver) ID(_ context.Context, e *models.LedgerEntry) (string, error) {
	return strconv.FormatInt(e.ID, 10), nil
}

func (ledgerEntryResolver) Kind(_ context.Context, e *models.LedgerEntry) (model.LedgerEntryKind, error) {
	return model.LedgerEntryKind(strings.ToUpper(string(e.Kind))), nil
}

func (ledgerEntryResolver) Amount(_ context.Context, e *models.LedgerEntry) (float64, error) {
	return centsOf(e.AmountMicroCents), nil
}

// CostSoFar is the VM's closed usage cost, read for every VM of a level
// in one statement (loaders.CostByVM, scoped to the caller's
// organization). A caller without billing.read (or an operator's
// permission) reads null, as a GPU's holder reads null where it is not
// the caller's: a page of VMs answers one row each, not an error each. A
// request without loaders is an error (requestLoaders), not that null.
func (r *vmResolver) CostSoFar(ctx context.Context, v *models.VM) (*float64, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if r.svc.Metering.MayReadMoney(c) != nil {
		return nil, nil
	}
	l, err := requestLoaders(ctx)
	if err != nil {
		return nil, err
	}
	cost, err := l.CostByVM.Load(ctx, v.ID)()
	if err != nil || cost == nil {
		return nil, err
	}
	f := centsOf(cost.MicroCents)
	return &f, nil
}

// requestLoaders answers the request's loaders, which the GraphQL
// handler gives every request: none is a programming error, answered as
// one, never as a field the caller may not read (null).
func requestLoaders(ctx context.Context) (*loaders.Loaders, error) {
	l := loaders.For(ctx)
	if l == nil {
		return nil, errors.New("resolvers: the request has no loaders (loaders.Factory.Middleware)")
	}
	return l, nil
}
