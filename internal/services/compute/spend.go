package compute

import (
	"net/http"
	"strconv"
	"strings"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// CodeSpendLimitExceeded answers a create or restart that would take its
// organization's spend past its limit (402).
const CodeSpendLimitExceeded = "SPEND_LIMIT_EXCEEDED"

// DefaultSpendLimitCentsPerHour is the platform's default spend limit of
// an organization (--spend-limit-cents-per-hour): RunPod's $80 an hour.
const DefaultSpendLimitCentsPerHour = 8000

// checkSpend refuses, with a 402 that names the limit, the current spend
// and what was asked, starting a workload of asked cents per hour in
// organization org when its spend an hour would pass its limit: its own,
// else, for a prepaid organization, def (a postpaid one, the default of
// an organization never granted a credit, has no limit but its own, so
// every deployment from before balances keeps working); 0 is none. What
// decides that came with the organization's row (OrganizationToStart), so
// where no limit holds nothing more is read. Its spend is what it runs and
// is starting (the prices of its running, deploying and pending
// workloads) and what its stopped ones keep (their storage at the
// catalog's price), read in tx. A workload that asks nothing is never
// refused.
func checkSpend(st *store.Store, tx *store.Txn, org *store.StartingOrganization, asked int, def int64) error {
	if asked <= 0 {
		return nil
	}
	var limit int64
	switch {
	case org.SpendLimitCentsPerHour != nil:
		limit = *org.SpendLimitCentsPerHour
	case org.Prepaid:
		limit = def
	}
	if limit <= 0 {
		return nil
	}
	orgID := org.ID
	b, err := st.SpendNow(tx, orgID)
	if err != nil {
		return err
	}
	price, err := st.StoragePrice(tx)
	if err != nil {
		return err
	}
	now := b.RunningCentsPerHour*models.MicroCentsPerCent + b.StoppedGb*price
	if now+int64(asked)*models.MicroCentsPerCent <= limit*models.MicroCentsPerCent {
		return nil
	}
	return apierr.New(http.StatusPaymentRequired, CodeSpendLimitExceeded,
		"organization %s's spend limit is %d cents per hour: it spends %s cents per hour now and this asks %d more",
		orgID, limit, cents(now), asked)
}

// cents writes an amount of micro-cents as cents, exactly, with no
// trailing zeros: 7900000000 is 7900, 5480000 is 5.48.
func cents(micro int64) string {
	neg := micro < 0
	if neg {
		micro = -micro
	}
	s := strconv.FormatInt(micro/models.MicroCentsPerCent, 10)
	if f := micro % models.MicroCentsPerCent; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(f+models.MicroCentsPerCent, 10)[1:], "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}
