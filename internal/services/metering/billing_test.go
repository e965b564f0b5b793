package metering_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// moneyKeys adds acme-billing and globex-billing, keys holding
// billing.read only, money-operator, the platform operator's (nodes.admin)
// of org-globex, and acme-keys-admin, org-acme's administrator of keys
// (admin only).
const moneyKeys = `{"apiKeys": [
 {"token": "acme-billing", "organizationId": "org-acme", "permissions": ["billing.read"]},
 {"token": "globex-billing", "organizationId": "org-globex", "permissions": ["billing.read"]},
 {"token": "money-operator", "organizationId": "org-globex", "permissions": ["nodes.admin"]},
 {"token": "acme-keys-admin", "organizationId": "org-acme", "permissions": ["admin"]}]}`

// moneyCaller loads moneyKeys and answers acme-billing's caller, the one
// that reads org-acme's money with billing.read.
func moneyCaller(t *testing.T, st *store.Store) *auth.Caller {
	t.Helper()
	datasettest.Load(t, st, moneyKeys)
	return datasettest.Caller(t, st, "acme-billing")
}

// refused fails t unless err is the apierr of status whose message
// contains field.
func refused(t *testing.T, err error, status int, field string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Status != status || !strings.Contains(e.Message, field) {
		t.Errorf("got %v; want a %d naming %q", err, status, field)
	}
}

// A credit is a positive whole number of cents with a reason, to an
// organization that exists, by an operator; anything else writes nothing.
// The same idempotency key answers the first entry, or a 409 for another.
func TestGrantIsValidatedAndIdempotent(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := metering.New(st, func() time.Time { return t0 })
		op := auth.SystemCaller()
		_, err := m.Grant(ctx, op, "org-acme", 0, "launch", "k")
		refused(t, err, http.StatusBadRequest, "amountCents")
		_, err = m.Grant(ctx, op, "org-acme", -5, "launch", "k")
		refused(t, err, http.StatusBadRequest, "amountCents")
		_, err = m.Grant(ctx, op, "org-acme", 2500, "  ", "k")
		refused(t, err, http.StatusBadRequest, "reason")
		_, err = m.Grant(ctx, op, "org-nowhere", 2500, "launch", "k")
		refused(t, err, http.StatusNotFound, "org-nowhere")
		_, err = m.Grant(ctx, datasettest.Caller(t, st, "acme-operator"), "org-acme", 2500, "launch", "k")
		refused(t, err, http.StatusForbidden, "nodes.admin")
		var n int64
		st.DB.Table("ledger_entries").Count(&n)
		if n != 0 {
			t.Fatalf("refused grants wrote %d entries", n)
		}
		e, err := m.Grant(ctx, op, "org-acme", 2500, "launch", "k")
		if err != nil || e.AmountMicroCents != 2_500_000_000 || e.Kind != models.LedgerCredit || e.ID == 0 {
			t.Fatalf("grant: %+v %v", e, err)
		}
		again, err := m.Grant(ctx, op, "org-acme", 2500, "launch", "k")
		if err != nil || again.ID != e.ID {
			t.Errorf("the same grant again: %+v %v; want entry %d", again, err, e.ID)
		}
		_, err = m.Grant(ctx, op, "org-acme", 100, "launch", "k")
		refused(t, err, http.StatusConflict, "idempotency key")
		b, err := m.Balance(ctx, op, "org-acme")
		if err != nil || !b.Prepaid || b.BalanceMicroCents != 2_500_000_000 {
			t.Errorf("balance: %+v %v", b, err)
		}
		if _, err := m.Adjust(ctx, op, "org-acme", -500, "goodwill reversed", ""); err != nil {
			t.Errorf("a negative adjustment: %v", err)
		}
	})
}

// A prepaid organization's usage is debited from its ledger by the pass
// that closes it, once; a postpaid one's is recorded and nothing is
// debited. A caller reads its own organization's money only.
func TestThePassDebitsPrepaidOrganizationsOnce(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		m := metering.New(st, nil)
		op := auth.SystemCaller()
		datasettest.Load(t, st, moneyKeys)
		if _, err := m.CloseThrough(ctx, t0); err != nil { // the fixture's rows start here
			t.Fatal(err)
		}
		if _, err := m.Grant(ctx, op, "org-acme", 10_000, "prepaid", "first"); err != nil {
			t.Fatal(err)
		}
		for _, h := range []time.Duration{30 * time.Minute, time.Hour, time.Hour} {
			if _, err := m.CloseThrough(ctx, t0.Add(h)); err != nil {
				t.Fatal(err)
			}
		}
		// org-acme: vm-acme-1 running at 450 ¢/h, pod-acme-1 running at 0,
		// vm-acme-2 stopped keeping 200 GB: one hour.
		want := int64(450*1_000_000 + 200*27_400)
		bal, err := m.Balance(ctx, datasettest.Caller(t, st, "acme-billing"), "org-acme")
		if err != nil || bal.BalanceMicroCents != 10_000*1_000_000-want {
			t.Errorf("acme's balance: %+v %v; want %d µ¢", bal, err, 10_000*1_000_000-want)
		}
		if bal.BurnMicroCentsPerHour != want || bal.RunwayHours == nil ||
			*bal.RunwayHours != float64(10_000*1_000_000-want)/float64(want) {
			t.Errorf("acme's burn and runway: %+v", bal)
		}
		var globex int64
		st.DB.Table("ledger_entries").Where("organization_id = ?", "org-globex").Count(&globex)
		u, err := m.Usage(ctx, op, "org-globex", t0, t0.Add(time.Hour), "gpuModel")
		if err != nil || globex != 0 || len(u.Lines) != 1 || u.Lines[0].Key != "h100-80gb" || u.Lines[0].Milliseconds != 3_600_000 ||
			u.Lines[0].GPUMilliseconds != 2*3_600_000 {
			t.Errorf("globex (postpaid): %d entries, usage %+v %v", globex, u, err)
		}
		days, err := m.Usage(ctx, op, "org-acme", t0.Add(-24*time.Hour), t0.Add(24*time.Hour), "day")
		if err != nil || len(days.Lines) != 1 || days.Lines[0].Key != "2026-12-03" || days.TotalCostMicroCents != want {
			t.Errorf("acme by day: %+v %v", days, err)
		}
		_, err = m.Balance(ctx, datasettest.Caller(t, st, "acme-billing"), "org-globex")
		refused(t, err, http.StatusNotFound, "org-globex")
		_, err = m.Usage(ctx, datasettest.Caller(t, st, "acme-reader"), "org-acme", t0, t0.Add(time.Hour), "day")
		refused(t, err, http.StatusForbidden, "billing.read")
		_, err = m.Usage(ctx, op, "org-acme", t0, t0.Add(time.Hour), "week")
		refused(t, err, http.StatusBadRequest, "groupBy")
		_, err = m.Usage(ctx, op, "org-acme", t0.Add(time.Hour), t0, "day")
		refused(t, err, http.StatusBadRequest, "from")
		_, err = m.Usage(ctx, op, "org-acme", t0, t0.Add(400*24*time.Hour), "day")
		refused(t, err, http.StatusBadRequest, "366 days")
	})
}
