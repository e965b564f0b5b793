package resolvers

import (
	"context"
	"slices"
	"testing"

	"gpugraph/graph/model"
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
