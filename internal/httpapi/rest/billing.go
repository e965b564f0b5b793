package rest

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/idempotency"
	"gpugraph/internal/services/metering"
	"gpugraph/models"
)

// The billing paths (docs/contract.md#billing), in OpenRelay's error
// shape: an operator's credit, and an organization's balance, usage and
// ledger. Package metering decides; these parse and render amounts in
// cents, written exactly from the stored micro-cents (models.FormatCents).
func (api *API) billingRoutes() []endpoint {
	m := api.Services.Metering
	return []endpoint{
		{"POST /v1/admin/organizations/{id}/credits", openRelay(m.MayGrant, api.idempotent(api.grantCredits))},
		{"GET /v1/billing/balance", openRelay(m.MayReadMoney, api.balance)},
		{"GET /v1/billing/usage", openRelay(m.MayReadMoney, api.usage)},
		{"GET /v1/billing/ledger", openRelay(m.MayReadMoney, api.ledger)},
		{"GET /v1/billing/settings", openRelay(m.MayReadMoney, api.settings)},
		{"PATCH /v1/billing/settings", openRelay(m.MayConfigure, api.patchSettings)},
		{"GET /v1/billing/events", openRelay(m.MayReadMoney, api.billingEvents)},
	}
}

// cents is an amount of micro-cents written as a JSON number of cents,
// exactly (up to six decimals, never a float's rounding).
type cents int64

func (c cents) MarshalJSON() ([]byte, error) { return []byte(models.FormatCents(int64(c))), nil }

// seconds is a duration of milliseconds written as a JSON number of
// seconds, exactly.
type seconds int64

func (s seconds) MarshalJSON() ([]byte, error) { return []byte(models.FormatMillis(int64(s))), nil }

// ledgerEntryJSON is one line of a ledger.
type ledgerEntryJSON struct {
	ID             string            `json:"id"`
	OrganizationID string            `json:"organizationId"`
	Kind           models.LedgerKind `json:"kind"`
	AmountCents    cents             `json:"amountCents"`
	Reason         string            `json:"reason"`
	CreatedAt      string            `json:"createdAt"`
}

func encodeLedgerEntry(e *models.LedgerEntry) ledgerEntryJSON {
	return ledgerEntryJSON{ID: strconv.FormatInt(e.ID, 10), OrganizationID: e.OrganizationID, Kind: e.Kind,
		AmountCents: cents(e.AmountMicroCents), Reason: e.Reason, CreatedAt: models.FormatTime(e.CreatedAt)}
}

// grantCredits reads {"amountCents": 2500, "reason": "…"} and answers the
// new credit, 201. The Idempotency-Key header, when sent, is also the
// ledger entry's key, so the same credit is never appended twice.
func (api *API) grantCredits(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		AmountCents json.RawMessage `json:"amountCents"`
		Reason      *string         `json:"reason"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	amount, err := wholeCents(body.AmountCents)
	if err != nil {
		return err
	}
	if body.Reason == nil {
		return apierr.BadRequest("reason is missing: say why the credit is granted")
	}
	e, err := api.Services.Metering.Grant(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"), amount,
		*body.Reason, r.Header.Get(idempotency.Header))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, encodeLedgerEntry(e))
	return nil
}

// wholeCents reads a credit's amountCents: a JSON integer, written as one
// (2500, not "2500", 2500.0 or 2.5e3).
func wholeCents(raw json.RawMessage) (int64, error) {
	s := string(raw)
	if s == "" || s == "null" {
		return 0, apierr.BadRequest("amountCents is required: a whole number of cents, 1 or more")
	}
	n, ok := bounds.ParseInt(s)
	if !ok {
		return 0, apierr.BadRequest("amountCents %s is not a whole number of cents", s)
	}
	return n, nil
}

// moneyOrganization is the organization a billing read is of: the
// caller's own, or organizationId (an operator's any; anyone else's
// another organization's answers as missing).
func moneyOrganization(r *http.Request) string {
	if id := r.URL.Query().Get("organizationId"); id != "" {
		return id
	}
	return auth.FromContext(r.Context()).OrganizationID
}

// balanceJSON is an organization's money now. runwayHours is null when it
// is postpaid or nothing burns; spendLimitCentsPerHour null when none is
// set.
type balanceJSON struct {
	OrganizationID         string   `json:"organizationId"`
	Prepaid                bool     `json:"prepaid"`
	BalanceCents           cents    `json:"balanceCents"`
	BurnRateCentsPerHour   cents    `json:"burnRateCentsPerHour"`
	RunwayHours            *float64 `json:"runwayHours"`
	SpendLimitCentsPerHour *cents   `json:"spendLimitCentsPerHour"`
}

func (api *API) balance(w http.ResponseWriter, r *http.Request) error {
	b, err := api.Services.Metering.Balance(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r))
	if err != nil {
		return err
	}
	out := balanceJSON{OrganizationID: b.OrganizationID, Prepaid: b.Prepaid,
		BalanceCents: cents(b.BalanceMicroCents), BurnRateCentsPerHour: cents(b.BurnMicroCentsPerHour), RunwayHours: b.RunwayHours}
	if l := b.SpendLimitCentsPerHour; l != nil {
		out.SpendLimitCentsPerHour = new(cents(*l * models.MicroCentsPerCent))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// usageLineJSON is one group's usage.
type usageLineJSON struct {
	Key        string  `json:"key"`
	Seconds    seconds `json:"seconds"`
	GPUSeconds seconds `json:"gpuSeconds"`
	CostCents  cents   `json:"costCents"`
}

type usageJSON struct {
	From       string          `json:"from"`
	To         string          `json:"to"`
	Usage      []usageLineJSON `json:"usage"`
	TotalCents cents           `json:"totalCents"`
}

// instantParam reads a required RFC 3339 instant.
func instantParam(r *http.Request, name string) (time.Time, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return time.Time{}, apierr.BadRequest("%s is required: an RFC 3339 instant such as 2026-12-01T00:00:00Z", name)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, apierr.BadRequest("%s %q is not an RFC 3339 instant with a zone (2026-12-01T00:00:00Z)", name, s)
	}
	return t, nil
}

// usage answers the organization's usage in [from, to) by groupBy (day
// when absent), as JSON or, for Accept: text/csv, as CSV.
func (api *API) usage(w http.ResponseWriter, r *http.Request) error {
	from, err := instantParam(r, "from")
	if err != nil {
		return err
	}
	to, err := instantParam(r, "to")
	if err != nil {
		return err
	}
	groupBy := r.URL.Query().Get("groupBy")
	if groupBy == "" {
		groupBy = "day"
	}
	u, err := api.Services.Metering.Usage(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r), from, to, groupBy)
	if err != nil {
		return err
	}
	if prefersCSV(r.Header.Get("Accept")) {
		writeUsageCSV(w, u)
		return nil
	}
	out := usageJSON{From: models.FormatTime(u.From), To: models.FormatTime(u.To), Usage: make([]usageLineJSON, len(u.Lines)),
		TotalCents: cents(u.TotalCostMicroCents)}
	for i, l := range u.Lines {
		out.Usage[i] = usageLineJSON{Key: l.Key, Seconds: seconds(l.Milliseconds), GPUSeconds: seconds(l.GPUMilliseconds),
			CostCents: cents(l.CostMicroCents)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// writeUsageCSV writes RFC 4180 CSV (CRLF line ends, fields quoted where
// needed): the header key,seconds,gpuSeconds,costCents and one row per
// group, the numbers as the JSON answer writes them.
func writeUsageCSV(w http.ResponseWriter, u *metering.Usage) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	_ = cw.Write([]string{"key", "seconds", "gpuSeconds", "costCents"})
	for _, l := range u.Lines {
		_ = cw.Write([]string{l.Key, models.FormatMillis(l.Milliseconds), models.FormatMillis(l.GPUMilliseconds),
			models.FormatCents(l.CostMicroCents)})
	}
	cw.Flush()
}

// ledgerJSON is a page of a ledger, oldest first; next, the after of the
// following page, is absent when there is nothing more (yet).
type ledgerJSON struct {
	Entries []ledgerEntryJSON `json:"entries"`
	Next    string            `json:"next,omitempty"`
}

// ledger pages the organization's ledger: after (an entry id) and limit
// (1–500, default 50), as the event log pages.
func (api *API) ledger(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := afterLimit(r, "a ledger entry id")
	if err != nil {
		return err
	}
	es, more, err := api.Services.Metering.Ledger(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r), after, limit)
	if err != nil {
		return err
	}
	out := ledgerJSON{Entries: make([]ledgerEntryJSON, len(es))}
	for i := range es {
		out.Entries[i] = encodeLedgerEntry(&es[i])
	}
	if more {
		out.Next = out.Entries[len(out.Entries)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// settingsJSON is an organization's billing settings: its low-balance
// threshold (null: none) and its own spend limit (null: the platform's
// default applies; 0: none).
type settingsJSON struct {
	OrganizationID           string `json:"organizationId"`
	LowBalanceThresholdHours *int   `json:"lowBalanceThresholdHours"`
	SpendLimitCentsPerHour   *int64 `json:"spendLimitCentsPerHour"`
}

func writeSettings(w http.ResponseWriter, s *metering.Settings) {
	writeJSON(w, http.StatusOK, settingsJSON{OrganizationID: s.OrganizationID,
		LowBalanceThresholdHours: s.LowBalanceThresholdHours, SpendLimitCentsPerHour: s.SpendLimitCentsPerHour})
}

func (api *API) settings(w http.ResponseWriter, r *http.Request) error {
	s, err := api.Services.Metering.Settings(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r))
	if err != nil {
		return err
	}
	writeSettings(w, s)
	return nil
}

// patchSettings changes the settings a JSON merge patch (RFC 7396) names:
// a member absent is left as it is, null clears it, a number sets it.
func (api *API) patchSettings(w http.ResponseWriter, r *http.Request) error {
	ch, err := settingsChange(w, r)
	if err != nil {
		return err
	}
	s, err := api.Services.Metering.ChangeSettings(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r), ch)
	if err != nil {
		return err
	}
	writeSettings(w, s)
	return nil
}

// settingsChange reads PATCH /v1/billing/settings' body: at least one of
// lowBalanceThresholdHours and spendLimitCentsPerHour, each a JSON
// integer or null; the service checks their ranges.
func settingsChange(w http.ResponseWriter, r *http.Request) (metering.SettingsChange, error) {
	var body struct {
		LowBalanceThresholdHours json.RawMessage `json:"lowBalanceThresholdHours"`
		SpendLimitCentsPerHour   json.RawMessage `json:"spendLimitCentsPerHour"`
	}
	var ch metering.SettingsChange
	if err := decodeAdminBody(w, r, &body); err != nil {
		return ch, err
	}
	hours, err := mergeInt(body.LowBalanceThresholdHours, "lowBalanceThresholdHours", "hours")
	if err != nil {
		return ch, err
	}
	limit, err := mergeInt(body.SpendLimitCentsPerHour, "spendLimitCentsPerHour", "cents")
	if err != nil {
		return ch, err
	}
	if hours == nil && limit == nil {
		return ch, apierr.BadRequest("the request body changes nothing: send lowBalanceThresholdHours, spendLimitCentsPerHour or both (null clears one)")
	}
	if ch.SetLowBalance = hours != nil; hours != nil && *hours != nil {
		ch.LowBalanceHours = new(int(**hours))
	}
	if ch.SetSpendLimit = limit != nil; limit != nil {
		ch.SpendLimitCentsPerHour = *limit
	}
	return ch, nil
}

// mergeInt reads one member of a merge patch: nil when absent, a nil
// value for null, else its whole number (a JSON integer written as one:
// 24, not 24.0, "24" or 2.4e1).
func mergeInt(raw json.RawMessage, field, unit string) (**int64, error) {
	switch s := string(raw); s {
	case "":
		return nil, nil
	case "null":
		return new((*int64)(nil)), nil
	default:
		n, ok := bounds.ParseInt(s)
		if !ok {
			return nil, apierr.BadRequest("%s %s is not a whole number of %s (or null to clear it)", field, s, unit)
		}
		return new(&n), nil
	}
}

// billingEventJSON is one billing event: id is its organization's own
// count; thresholdHours is low_balance's (null on the others),
// workloadsStopped balance_exhausted's (0 on the others).
type billingEventJSON struct {
	ID                   string                  `json:"id"`
	OrganizationID       string                  `json:"organizationId"`
	Kind                 models.BillingEventKind `json:"kind"`
	BalanceCents         cents                   `json:"balanceCents"`
	BurnRateCentsPerHour cents                   `json:"burnRateCentsPerHour"`
	ThresholdHours       *int                    `json:"thresholdHours"`
	WorkloadsStopped     int                     `json:"workloadsStopped"`
	At                   string                  `json:"at"`
}

type billingEventsJSON struct {
	Events []billingEventJSON `json:"events"`
	Next   string             `json:"next,omitempty"`
}

// billingEvents pages the organization's billing events: after (an event
// id) and limit (1–500, default 50), as the ledger pages.
func (api *API) billingEvents(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := afterLimit(r, "a billing event id")
	if err != nil {
		return err
	}
	evs, more, err := api.Services.Metering.BillingEvents(r.Context(), auth.FromContext(r.Context()), moneyOrganization(r), after, limit)
	if err != nil {
		return err
	}
	out := billingEventsJSON{Events: make([]billingEventJSON, len(evs))}
	for i, e := range evs {
		out.Events[i] = billingEventJSON{ID: strconv.FormatInt(e.Seq, 10), OrganizationID: e.OrganizationID, Kind: e.Kind,
			BalanceCents: cents(e.BalanceMicroCents), BurnRateCentsPerHour: cents(e.BurnMicroCentsPerHour),
			ThresholdHours: e.ThresholdHours, WorkloadsStopped: e.Stopped, At: models.FormatTime(e.At)}
	}
	if more {
		out.Next = out.Events[len(out.Events)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// afterLimit reads a page's after (what, a whole number; 0 when absent)
// and limit (paging.DefaultLimit when absent); the service checks their
// ranges.
func afterLimit(r *http.Request, what string) (int64, int, error) {
	v := r.URL.Query()
	var after int64
	if s := v.Get("after"); s != "" {
		n, ok := bounds.ParseInt(s)
		if !ok {
			return 0, 0, apierr.BadRequest("after must be %s (a whole number), got %q", what, s)
		}
		after = n
	}
	limit := paging.DefaultLimit
	if l, err := intParam(v, "limit"); err != nil {
		return 0, 0, err
	} else if l != nil {
		limit = *l
	}
	return after, limit, nil
}
