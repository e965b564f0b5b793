package compute_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// spendRefused fails t unless err is the 402 SPEND_LIMIT_EXCEEDED with
// exactly message.
func spendRefused(t *testing.T, err error, message string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Status != http.StatusPaymentRequired || e.Code != compute.CodeSpendLimitExceeded || e.Message != message {
		t.Errorf("got %v; want 402 %s %q", err, compute.CodeSpendLimitExceeded, message)
	}
}

// A create or restart that would take the organization's spend an hour
// past its limit (the platform's default, or its own) answers 402 naming
// the limit, what it spends now (its running, deploying and pending
// workloads' prices and its stopped ones' kept storage) and what was
// asked, and writes nothing; a reboot of a running row is never refused.
func TestTheSpendLimitRefusesWhatWouldPassIt(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		a, err := cs.Create(ctx, op, vmReq("a", 1))
		if err != nil {
			t.Fatal(err)
		}
		p := a.VM.PricePerHourCents
		if p <= 0 {
			t.Fatalf("the fleet's H100 is free: %d", p)
		}
		limit := int64(p + p/2)
		cs.SpendLimitCentsPerHour = limit
		// The platform's default holds a prepaid organization only.
		pp, err := cs.Create(ctx, op, vmReq("postpaid", 1))
		if err != nil {
			t.Fatalf("a postpaid organization's create past the default: %v", err)
		}
		if _, err := cs.Terminate(ctx, op, pp.VM.ID); err != nil {
			t.Fatal(err)
		}
		credit := &models.LedgerEntry{OrganizationID: "org-a", Kind: models.LedgerCredit, AmountMicroCents: 1,
			Reason: "prepaid", IdempotencyKey: "credit:1", CreatedAt: time.Now()}
		if err := st.InTx(ctx, func(tx *store.Txn) error { _, err := st.AppendLedger(tx, []*models.LedgerEntry{credit}); return err }); err != nil {
			t.Fatal(err)
		}
		before := storetest.Count(t, st, "vms", "")
		_, err = cs.Create(ctx, op, vmReq("b", 1))
		spendRefused(t, err, fmt.Sprintf(
			"organization org-a's spend limit is %d cents per hour: it spends %d cents per hour now and this asks %d more", limit, p, p))
		if n := storetest.Count(t, st, "vms", ""); n != before {
			t.Errorf("a refused create wrote a row: %d → %d", before, n)
		}
		// Another organization has its own spend.
		if _, err := cs.Create(ctx, datasettest.Caller(t, st, "b-op"), vmReq("b", 1)); err != nil {
			t.Errorf("org-b's create: %v", err)
		}
		// Stopped, a keeps its 100 GB disk: 2,740,000 µ¢ an hour.
		if _, err := cs.Stop(ctx, op, a.VM.ID); err != nil {
			t.Fatal(err)
		}
		// (Placed on another node, it may be priced apart.)
		b, err := cs.Create(ctx, op, vmReq("b", 1))
		if err != nil {
			t.Fatalf("a create within the limit: %v", err)
		}
		_, err = cs.Restart(ctx, op, a.VM.ID)
		spendRefused(t, err, fmt.Sprintf(
			"organization org-a's spend limit is %d cents per hour: it spends %d.74 cents per hour now and this asks %d more", limit, b.VM.PricePerHourCents+2, p))
		// Its own limit replaces the platform's: 0 is none.
		none := int64(0)
		if err := st.SetSpendLimit(ctx, "org-a", &none); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Restart(ctx, op, a.VM.ID); err != nil {
			t.Errorf("a restart with no limit: %v", err)
		}
		own := int64(1)
		if err := st.SetSpendLimit(ctx, "org-a", &own); err != nil {
			t.Fatal(err)
		}
		_, err = cs.Create(ctx, op, vmReq("c", 1))
		spendRefused(t, err, fmt.Sprintf(
			"organization org-a's spend limit is 1 cents per hour: it spends %d cents per hour now and this asks %d more", p+b.VM.PricePerHourCents, p))
		// A reboot starts nothing it did not run already.
		st.DB.Model(&models.VM{}).Where("id = ?", b.VM.ID).Update("status", models.VMRunning)
		if _, err := cs.Restart(ctx, op, b.VM.ID); err != nil {
			t.Errorf("a reboot over the limit: %v", err)
		}
	})
}

// What decides whether a spend limit holds an organization (its own
// limit, whether it is prepaid) is read with its row, which a create
// reads already: a create in a postpaid organization with no limit of its
// own reads nothing more for the limit, and one its own limit holds reads
// its spend (what it runs and keeps, the storage price) and is refused
// past it, postpaid or not.
func TestTheSpendCheckReadsTheSpendOnlyWhereALimitHolds(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		cs.SpendLimitCentsPerHour = compute.DefaultSpendLimitCentsPerHour
		count := storetest.CountStatements(t, st)
		var a, b *compute.Result
		var err error
		free := count.During(func() { a, err = cs.Create(ctx, op, vmReq("a", 1)) })
		if err != nil {
			t.Fatal(err)
		}
		p := a.VM.PricePerHourCents
		own := int64(100 * p)
		if err := st.SetSpendLimit(ctx, "org-a", &own); err != nil {
			t.Fatal(err)
		}
		held := count.During(func() { b, err = cs.Create(ctx, op, vmReq("b", 1)) })
		if err != nil {
			t.Fatalf("a create within its own limit: %v", err)
		}
		// The limit's part was 2 statements with no limit (its settings,
		// whether it is prepaid), 3 within its own (its settings, its
		// spend, the storage price): 30 and 31 on SQLite, 32 and 33 on
		// PostgreSQL (its row locks) before; the event log's lock and its
		// separate NOTIFY took 2 off PostgreSQL's (decision 0047), and a
		// create locking its candidates as it reads them 9 off both
		// (decision 0048).
		want := map[store.Dialect][2]int64{store.SQLite: {19, 21}, store.Postgres: {19, 21}}[st.Dialect]
		t.Logf("statements per create: %d with no limit, %d within its own", free, held)
		if [2]int64{free, held} != want {
			t.Errorf("statements per create: %d with no limit, %d within its own limit; want %v", free, held, want)
		}
		// Its own limit holds a postpaid organization.
		own = 1
		if err := st.SetSpendLimit(ctx, "org-a", &own); err != nil {
			t.Fatal(err)
		}
		_, err = cs.Create(ctx, op, vmReq("c", 1))
		spendRefused(t, err, fmt.Sprintf(
			"organization org-a's spend limit is 1 cents per hour: it spends %d cents per hour now and this asks %d more", p+b.VM.PricePerHourCents, p))
	})
}
