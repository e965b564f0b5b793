package resolvers

import (
	"context"
	"slices"
	"testing"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/services"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Every group of the schema is one the service sums by, and every kind of
// ledger entry is one of the schema's.
func TestBillingTranslations(t *testing.T) {
	for _, g := range model.AllUsageGroup {
		if !slices.Contains([]store.UsageGroup{store.ByWorkload, store.ByGPUModel, store.ByProject, store.ByDay}, store.UsageGroup(usageGroups[g])) {
			t.Errorf("groupBy %s reads as %q, no group of the service", g, usageGroups[g])
		}
	}
	for _, k := range []models.LedgerKind{models.LedgerCredit, models.LedgerUsage, models.LedgerAdjustment} {
		got, _ := ledgerEntryResolver{}.Kind(context.Background(), &models.LedgerEntry{Kind: k})
		if !got.IsValid() {
			t.Errorf("kind %s writes %q, no LedgerEntryKind", k, got)
		}
	}
	e := &models.LedgerEntry{ID: 42, AmountMicroCents: -6_362_000}
	if id, _ := (ledgerEntryResolver{}).ID(context.Background(), e); id != "42" {
		t.Errorf("id %q", id)
	}
	if a, _ := (ledgerEntryResolver{}).Amount(context.Background(), e); a != -6.362 {
		t.Errorf("amount %v, want -6.362", a)
	}
}

// A request without loaders is a programming error (the GraphQL handler
// gives every request its own): the money fields that read through them
// answer it as an error, never as the null of a field the caller may not
// read.
func TestMoneyWithoutLoadersIsAnError(t *testing.T) {
	ctx := auth.WithCaller(context.Background(), auth.SystemCaller())
	r := &Resolver{Services: &services.Services{Metering: metering.New(nil, nil)}}
	cost, err := r.VM().CostSoFar(ctx, &models.VM{ID: "vm-1"})
	if err == nil || cost != nil || err.Error() != "resolvers: the request has no loaders (loaders.Factory.Middleware)" {
		t.Errorf("costSoFar without loaders: %v, %v; want no value and the error", cost, err)
	}
	if b, err := r.Organization().Balance(ctx, &models.Organization{ID: "org-1"}); err == nil || b != 0 {
		t.Errorf("balance without loaders: %v, %v; want no value and the error", b, err)
	}
}
