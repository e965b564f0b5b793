package metering_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The billing paths as a client reads them (docs/contract.md#billing):
// exact bodies, every refusal's message, tenancy.

func newMoneyEnv(t *testing.T, st *store.Store) *servertest.Env {
	env := servertest.New(t, st, servertest.Base)
	datasettest.Load(t, st, moneyKeys)
	return env
}

// wantError fails t unless the answer is status with OpenRelay's error
// body of code and message, exactly.
func wantError(t *testing.T, what string, status int, body []byte, wantStatus int, code, msg string) {
	t.Helper()
	var want strings.Builder
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": map[string]string{"code": code, "message": msg, "requestId": servertest.RequestID}})
	if status != wantStatus || string(body) != want.String() {
		t.Errorf("%s: %d %s; want %d %s", what, status, body, wantStatus, want.String())
	}
}

const creditsPath = "/v1/admin/organizations/org-acme/credits"

// A credit is refused, writing nothing, unless it is a positive whole
// number of cents with a reason, to an organization that exists, by an
// operator (any organization) or an organization's admin (its own:
// another answers as a missing one, SPEC §10); granted, it answers the
// ledger entry (201), and the same Idempotency-Key replays that answer
// without a second entry.
func TestCreditsOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		s, b := env.Do("POST", creditsPath, "acme-billing", []byte(`{"amountCents": 2500, "reason": "launch"}`), nil)
		wantError(t, "billing.read only", s, b, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
		// An organization's admin grants to its own organization only:
		// another is missing for it, as one that does not exist.
		s, b = env.Do("POST", "/v1/admin/organizations/org-globex/credits", "acme-keys-admin", []byte(`{"amountCents": 2500, "reason": "launch"}`), nil)
		wantError(t, "admin, another organization", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`)
		s, b = env.Do("POST", "/v1/admin/organizations/org-globex/credits", "acme-keys-admin", []byte(`{"amountCents": 0, "reason": "launch"}`), nil)
		wantError(t, "admin, another organization, a bad body", s, b, 400, "BAD_REQUEST", "amountCents 0 is not a whole number of cents from 1 to 10000000000")
		bad := []struct{ body, msg string }{
			{`{"amountCents": 0, "reason": "launch"}`, "amountCents 0 is not a whole number of cents from 1 to 10000000000"},
			{`{"amountCents": -5, "reason": "launch"}`, "amountCents -5 is not a whole number of cents from 1 to 10000000000"},
			{`{"amountCents": 25.5, "reason": "launch"}`, "amountCents 25.5 is not a whole number of cents"},
			{`{"amountCents": 2500.0, "reason": "launch"}`, "amountCents 2500.0 is not a whole number of cents"},
			{`{"amountCents": "2500", "reason": "launch"}`, `amountCents "2500" is not a whole number of cents`},
			{`{"reason": "launch"}`, "amountCents is required: a whole number of cents, 1 or more"},
			{`{"amountCents": 2500}`, "reason is missing: say why the credit is granted"},
			{`{"amountCents": 2500, "reason": "  "}`, "reason is missing"},
			{`{"amountCents": 2500, "reason": "launch", "currency": "EUR"}`, `the request body: unknown field "currency"`},
		}
		for _, c := range bad {
			s, b := env.Do("POST", creditsPath, "money-operator", []byte(c.body), nil)
			wantError(t, c.body, s, b, 400, "BAD_REQUEST", c.msg)
		}
		s, b = env.Do("POST", "/v1/admin/organizations/org-nowhere/credits", "money-operator", []byte(`{"amountCents": 2500, "reason": "launch"}`), nil)
		wantError(t, "unknown organization", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-nowhere"`)
		if n := storetest.Count(t, st, "ledger_entries", "1 = 1"); n != 0 {
			t.Fatalf("refused credits wrote %d entries", n)
		}

		key := http.Header{"Idempotency-Key": {"credit-1"}}
		resp := env.Request("POST", creditsPath, "money-operator", []byte(`{"amountCents": 2500, "reason": "launch"}`), key)
		first := readAll(t, resp)
		var got struct {
			ID        string `json:"id"`
			CreatedAt string `json:"createdAt"`
		}
		if err := json.Unmarshal(first, &got); err != nil || resp.StatusCode != 201 {
			t.Fatalf("grant: %d %s", resp.StatusCode, first)
		}
		want := fmt.Sprintf(`{"id":%q,"organizationId":"org-acme","kind":"credit","amountCents":2500,"reason":"launch","createdAt":%q}`+"\n",
			got.ID, got.CreatedAt)
		if string(first) != want {
			t.Errorf("grant answered %s, want %s", first, want)
		}
		if at, err := time.Parse(time.RFC3339Nano, got.CreatedAt); err != nil || time.Since(at) > time.Minute {
			t.Errorf("createdAt %q", got.CreatedAt)
		}
		again := env.Request("POST", creditsPath, "money-operator", []byte(`{"amountCents": 2500, "reason": "launch"}`), key)
		if b := readAll(t, again); again.StatusCode != 201 || string(b) != want || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %q %s", again.StatusCode, again.Header.Get("Idempotent-Replayed"), b)
		}
		s, b = env.Do("POST", creditsPath, "money-operator", []byte(`{"amountCents": 100, "reason": "launch"}`), key)
		if s != 422 || servertest.ErrorCode(t, b) != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("the key for another credit: %d %s", s, b)
		}
		if n := storetest.Count(t, st, "ledger_entries", "1 = 1"); n != 1 {
			t.Errorf("%d entries after a replayed credit, want 1", n)
		}
		s, b = env.Do("POST", creditsPath, "acme-keys-admin", []byte(`{"amountCents": 300, "reason": "own top-up"}`), nil)
		if s != 201 || !strings.Contains(string(b), `"organizationId":"org-acme","kind":"credit","amountCents":300,"reason":"own top-up"`) {
			t.Errorf("admin credits its own organization: %d %s", s, b)
		}
		if n := storetest.Count(t, st, "ledger_entries", "1 = 1"); n != 2 {
			t.Errorf("%d entries after admin's own credit, want 2", n)
		}
	})
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(sb.String())
}

// ninetySeconds meters org-acme for 90 s from t0 with vm-acme-1 at 249
// ¢/h (2 GPUs) after a credit of 100 cents: 6.225 cents of compute and
// vm-acme-2's 200 GB kept for 90 s, 0.137 cents of storage.
func ninetySeconds(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	setPrice(t, st, "vm-acme-1", 249)
	m := metering.New(st, func() time.Time { return t0 })
	if _, err := m.CloseThrough(ctx, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Grant(ctx, auth.SystemCaller(), "org-acme", 100, "trial", "trial"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CloseThrough(ctx, t0.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, env *servertest.Env, path, token string) (int, string) {
	t.Helper()
	s, b := env.Do("GET", path, token, nil, nil)
	return s, string(b)
}

// The balance, usage (JSON and CSV) and ledger of 90 s at 249 ¢/h: the
// contract's figures exactly, the caller's own organization's only.
func TestMoneyReadsOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		ninetySeconds(t, st)

		// 100 − 6.225 − 0.137 = 93.638 cents; the burn is 249 ¢/h of
		// vm-acme-1 (pod-acme-1 runs at 0) and 200 GB × 27,400 µ¢.
		runway, _ := json.Marshal(93_638_000.0 / 254_480_000.0)
		balance := `{"organizationId":"org-acme","prepaid":true,"balanceCents":93.638,"burnRateCentsPerHour":254.48,"runwayHours":` +
			string(runway) + `,"spendLimitCentsPerHour":null}` + "\n"
		for _, c := range []struct{ path, token string }{
			{"/v1/billing/balance", "acme-billing"},
			{"/v1/billing/balance?organizationId=org-acme", "acme-billing"},
			{"/v1/billing/balance?organizationId=org-acme", "money-operator"},
		} {
			if s, b := get(t, env, c.path, c.token); s != 200 || b != balance {
				t.Errorf("%s as %s: %d %s, want %s", c.path, c.token, s, b, balance)
			}
		}
		postpaid := `{"organizationId":"org-globex","prepaid":false,"balanceCents":0,"burnRateCentsPerHour":`
		if s, b := get(t, env, "/v1/billing/balance", "globex-billing"); s != 200 || !strings.HasPrefix(b, postpaid) ||
			!strings.Contains(b, `"runwayHours":null,"spendLimitCentsPerHour":null}`) {
			t.Errorf("globex's balance: %d %s", s, b)
		}
		// An organization's own spend limit shows, postpaid or not.
		if err := st.SetSpendLimit(context.Background(), "org-globex", new(int64(390))); err != nil {
			t.Fatal(err)
		}
		if s, b := get(t, env, "/v1/billing/balance", "globex-billing"); s != 200 || !strings.HasSuffix(b, `"runwayHours":null,"spendLimitCentsPerHour":390}`+"\n") {
			t.Errorf("globex's balance with its own spend limit: %d %s", s, b)
		}

		window := "from=2026-12-03T10:00:00Z&to=2026-12-03T11:00:00Z"
		byWorkload := `{"from":"2026-12-03T10:00:00.000Z","to":"2026-12-03T11:00:00.000Z","usage":[` +
			`{"key":"pod-acme-1","seconds":90,"gpuSeconds":90,"costCents":0},` +
			`{"key":"vm-acme-1","seconds":90,"gpuSeconds":180,"costCents":6.225},` +
			`{"key":"vm-acme-2","seconds":0,"gpuSeconds":0,"costCents":0.137}],"totalCents":6.362}` + "\n"
		if s, b := get(t, env, "/v1/billing/usage?groupBy=workload&"+window, "acme-billing"); s != 200 || b != byWorkload {
			t.Errorf("usage by workload: %d %s\nwant %s", s, b, byWorkload)
		}
		byDay := `{"from":"2026-12-03T10:00:00.000Z","to":"2026-12-03T11:00:00.000Z","usage":[` +
			`{"key":"2026-12-03","seconds":180,"gpuSeconds":270,"costCents":6.362}],"totalCents":6.362}` + "\n"
		if s, b := get(t, env, "/v1/billing/usage?"+window, "acme-billing"); s != 200 || b != byDay {
			t.Errorf("usage by day (the default): %d %s\nwant %s", s, b, byDay)
		}
		resp := env.Request("GET", "/v1/billing/usage?groupBy=workload&"+window, "acme-billing", nil, http.Header{"Accept": {"text/csv"}})
		csv := "key,seconds,gpuSeconds,costCents\r\npod-acme-1,90,90,0\r\nvm-acme-1,90,180,6.225\r\nvm-acme-2,0,0,0.137\r\n"
		if b := readAll(t, resp); resp.StatusCode != 200 || string(b) != csv || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Errorf("usage as CSV: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}

		var page struct {
			Entries []struct {
				ID, Kind, Reason, CreatedAt string
				AmountCents                 json.Number
			}
			Next string
		}
		s, b := get(t, env, "/v1/billing/ledger?limit=1", "acme-billing")
		if err := json.Unmarshal([]byte(b), &page); err != nil || s != 200 || len(page.Entries) != 1 || page.Next != page.Entries[0].ID {
			t.Fatalf("ledger, first page: %d %s", s, b)
		}
		credit := fmt.Sprintf(`{"entries":[{"id":%q,"organizationId":"org-acme","kind":"credit","amountCents":100,"reason":"trial","createdAt":"2026-12-03T10:00:00.000Z"}],"next":%q}`+"\n",
			page.Next, page.Next)
		if b != credit {
			t.Errorf("ledger, first page: %s, want %s", b, credit)
		}
		s, b = get(t, env, "/v1/billing/ledger?after="+page.Next, "acme-billing")
		page.Entries, page.Next = nil, ""
		if err := json.Unmarshal([]byte(b), &page); err != nil || s != 200 || len(page.Entries) != 1 || page.Next != "" ||
			page.Entries[0].Kind != "usage" || page.Entries[0].AmountCents != "-6.362" {
			t.Errorf("ledger, second page: %d %s; want the pass's debit of 6.362 cents", s, b)
		}
		if s, b := get(t, env, "/v1/billing/ledger?organizationId=org-acme", "money-operator"); s != 200 || strings.Count(b, `"kind"`) != 2 {
			t.Errorf("the operator reads acme's ledger: %d %s", s, b)
		}
	})
}

// Bad input answers 400 naming the parameter; another organization's money
// does not exist for a key (404), and a key without billing.read gets 403.
func TestMoneyReadsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		for _, c := range []struct {
			path, token string
			status      int
			code, msg   string
		}{
			{"/v1/billing/usage?from=2026-12-03T11:00:00Z&to=2026-12-03T10:00:00Z", "acme-billing", 400, "BAD_REQUEST",
				"from 2026-12-03T11:00:00Z is not before to 2026-12-03T10:00:00Z"},
			{"/v1/billing/usage?from=2025-01-01T00:00:00Z&to=2026-12-03T10:00:00Z", "acme-billing", 400, "BAD_REQUEST",
				"to is more than 366 days after from"},
			{"/v1/billing/usage?from=2026-12-03T10:00:00Z&to=2026-12-03T11:00:00Z&groupBy=week", "acme-billing", 400, "BAD_REQUEST",
				`groupBy "week" is not one of workload, gpuModel, project, day`},
			{"/v1/billing/usage?to=2026-12-03T11:00:00Z", "acme-billing", 400, "BAD_REQUEST",
				"from is required: an RFC 3339 instant such as 2026-12-01T00:00:00Z"},
			{"/v1/billing/usage?from=yesterday&to=2026-12-03T11:00:00Z", "acme-billing", 400, "BAD_REQUEST",
				`from "yesterday" is not an RFC 3339 instant with a zone (2026-12-01T00:00:00Z)`},
			{"/v1/billing/ledger?limit=501", "acme-billing", 400, "BAD_REQUEST", "limit must be between 1 and 500, got 501"},
			{"/v1/billing/ledger?after=x", "acme-billing", 400, "BAD_REQUEST", `after must be a ledger entry id (a whole number), got "x"`},
			{"/v1/billing/balance", "acme-reader", 403, "FORBIDDEN", "this API key lacks the billing.read permission"},
			{"/v1/billing/usage?from=2026-12-03T10:00:00Z&to=2026-12-03T11:00:00Z", "acme-operator", 403, "FORBIDDEN",
				"this API key lacks the billing.read permission"},
			{"/v1/billing/ledger", "acme-reader", 403, "FORBIDDEN", "this API key lacks the billing.read permission"},
			{"/v1/billing/balance?organizationId=org-globex", "acme-billing", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`},
			{"/v1/billing/ledger?organizationId=org-globex", "acme-billing", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`},
			{"/v1/billing/usage?organizationId=org-globex&from=2026-12-03T10:00:00Z&to=2026-12-03T11:00:00Z", "acme-billing", 404,
				"ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`},
			{"/v1/billing/balance?organizationId=org-nowhere", "money-operator", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-nowhere"`},
			{"/v1/billing/balance?organizationId=org-globex", "acme-keys-admin", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`},
		} {
			s, b := env.Do("GET", c.path, c.token, nil, nil)
			wantError(t, c.path+" as "+c.token, s, b, c.status, c.code, c.msg)
		}
		if s, b := env.Do("GET", "/v1/billing/balance", "acme-keys-admin", nil, nil); s != 200 || !strings.HasPrefix(string(b), `{"organizationId":"org-acme",`) {
			t.Errorf("an organization's administrator reads its own balance: %d %s", s, b)
		}
		if s, _ := env.Do("GET", "/v1/billing/balance", "", nil, nil); s != 401 {
			t.Errorf("no key: %d", s)
		}
	})
}

// The same money over GraphQL: the organization's fields in cents, its
// usage and ledger, each VM's costSoFar read in one statement for a whole
// list, tenancy, and an operator's grantCredits.
func TestMoneyOverGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		ninetySeconds(t, st)
		const q = `{ organization { id prepaid balance burnRatePerHour runwayHours spendLimitPerHour
			usage(from: "2026-12-03T10:00:00Z", to: "2026-12-03T11:00:00Z", groupBy: WORKLOAD) { from to total lines { key seconds gpuSeconds cost } }
			ledger(first: 1) { nodes { id kind amount reason createdAt } pageInfo { hasNextPage } } } }`
		r := env.GraphQL("acme-billing", q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %+v", r.Errors)
		}
		runway, _ := json.Marshal(93_638_000.0 / 254_480_000.0)
		want := `{"organization":{"id":"org-acme","prepaid":true,"balance":93.638,"burnRatePerHour":254.48,"runwayHours":` + string(runway) +
			`,"spendLimitPerHour":null,"usage":{"from":"2026-12-03T10:00:00.000Z","to":"2026-12-03T11:00:00.000Z","total":6.362,"lines":[` +
			`{"key":"pod-acme-1","seconds":90,"gpuSeconds":90,"cost":0},{"key":"vm-acme-1","seconds":90,"gpuSeconds":180,"cost":6.225},` +
			`{"key":"vm-acme-2","seconds":0,"gpuSeconds":0,"cost":0.137}]},"ledger":{"nodes":[{"id":"1","kind":"CREDIT","amount":100,` +
			`"reason":"trial","createdAt":"2026-12-03T10:00:00.000Z"}],"pageInfo":{"hasNextPage":true}}}}`
		if string(r.Data) != want {
			t.Errorf("organization:\n%s\nwant\n%s", r.Data, want)
		}
		if r := env.GraphQL("money-operator", `{ organization(id: "org-acme") { id balance } }`, nil); len(r.Errors) > 0 ||
			string(r.Data) != `{"organization":{"id":"org-acme","balance":93.638}}` {
			t.Errorf("the operator reads acme: %s %+v", r.Data, r.Errors)
		}
		for _, c := range []struct{ token, query, code string }{
			{"acme-billing", `{ organization(id: "org-globex") { id } }`, "ORGANIZATION_NOT_FOUND"},
			{"acme-reader", `{ organization { id } }`, "FORBIDDEN"},
			{"acme-billing", `{ organization { usage(from: "2026-12-03T11:00:00Z", to: "2026-12-03T10:00:00Z") { total } } }`, "BAD_REQUEST"},
			{"acme-billing", `{ organization { ledger(after: "nope") { nodes { id } } } }`, "BAD_REQUEST"},
		} {
			if r := env.GraphQL(c.token, c.query, nil); r.Code() != c.code {
				t.Errorf("%s as %s: %s %+v; want %s", c.query, c.token, r.Data, r.Errors, c.code)
			}
		}

		// costSoFar: billing.read on top of compute.read; one statement for
		// every VM of the list.
		datasettest.Load(t, st, `{"apiKeys": [{"token": "acme-both", "organizationId": "org-acme", "permissions": ["compute.read", "billing.read"]}]}`)
		var without, with int64
		without = env.Statements(func() { env.GraphQL("acme-both", `{ vms { vms { id } } }`, nil) })
		var costs *servertest.Response
		with = env.Statements(func() { costs = env.GraphQL("acme-both", `{ vms { vms { id costSoFar } } }`, nil) })
		var got struct {
			VMs struct {
				VMs []struct {
					ID        string
					CostSoFar *float64
				}
			}
		}
		env.Decode(costs, &got)
		byID := map[string]float64{}
		for _, v := range got.VMs.VMs {
			if v.CostSoFar == nil {
				t.Errorf("%s: costSoFar null", v.ID)
				continue
			}
			byID[v.ID] = *v.CostSoFar
		}
		if len(got.VMs.VMs) < 3 || byID["vm-acme-1"] != 6.225 || byID["vm-acme-2"] != 0.137 || byID["pod-acme-1"] != 0 {
			t.Errorf("costSoFar: %s", costs.Data)
		}
		t.Logf("costSoFar: %d statements without, %d with", without, with)
		if with-without != 1 {
			t.Errorf("costSoFar of %d VMs took %d statements more than without it, want 1", len(got.VMs.VMs), with-without)
		}
		if r := env.GraphQL("acme-reader", `{ vms { vms { id costSoFar } } }`, nil); len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"costSoFar":null`) || strings.Contains(string(r.Data), `"costSoFar":0`) {
			t.Errorf("costSoFar without billing.read: %s %+v", r.Data, r.Errors)
		}

		const grant = `mutation { grantCredits(organizationId: "org-acme", amountCents: 2500, reason: "top-up") { kind amount reason } }`
		if r := env.GraphQL("acme-billing", grant, nil); r.Code() != "FORBIDDEN" {
			t.Errorf("grantCredits without nodes.admin or admin: %s %+v", r.Data, r.Errors)
		}
		// An organization's admin grants to its own organization; another
		// is missing for it.
		if r := env.GraphQL("acme-keys-admin", `mutation { grantCredits(organizationId: "org-globex", amountCents: 5, reason: "x") { id } }`, nil); r.Code() != "ORGANIZATION_NOT_FOUND" ||
			r.Errors[0].Message != `there is no organization "org-globex"` {
			t.Errorf("admin's grantCredits to another organization: %s %+v", r.Data, r.Errors)
		}
		if n := storetest.Count(t, st, "ledger_entries", "organization_id = ?", "org-globex"); n != 0 {
			t.Errorf("admin's refused grant wrote %d entries", n)
		}
		if r := env.GraphQL("acme-keys-admin", `mutation { grantCredits(organizationId: "org-acme", amountCents: 5, reason: "own") { kind amount reason } }`, nil); len(r.Errors) > 0 ||
			string(r.Data) != `{"grantCredits":{"kind":"CREDIT","amount":5,"reason":"own"}}` {
			t.Errorf("admin's grantCredits to its own organization: %s %+v", r.Data, r.Errors)
		}
		if r := env.GraphQL("money-operator", `mutation { grantCredits(organizationId: "org-acme", amountCents: 0, reason: "x") { id } }`, nil); r.Code() != "BAD_REQUEST" {
			t.Errorf("grantCredits of 0: %s %+v", r.Data, r.Errors)
		}
		before := storetest.Count(t, st, "ledger_entries", "organization_id = ?", "org-acme")
		key := http.Header{"Idempotency-Key": {"gql-credit"}}
		body, _ := json.Marshal(map[string]any{"query": grant})
		s1, b1 := env.Do("POST", "/graphql", "money-operator", body, key)
		s2, b2 := env.Do("POST", "/graphql", "money-operator", body, key)
		if s1 != 200 || string(b1) != `{"data":{"grantCredits":{"kind":"CREDIT","amount":2500,"reason":"top-up"}}}` || s2 != s1 || string(b2) != string(b1) {
			t.Errorf("grantCredits twice with one key: %d %s / %d %s", s1, b1, s2, b2)
		}
		if n := storetest.Count(t, st, "ledger_entries", "organization_id = ?", "org-acme"); n != before+1 {
			t.Errorf("%d entries after a replayed grantCredits, want %d", n, before+1)
		}
	})
}

// Every money field of an organization reads one balance, once per
// organization a query reads: two organizations' five money fields each,
// one of them asked for twice, cost what one organization's read costs
// twice (the organization, then its balance), not once a field.
func TestMoneyFieldsReadOneBalancePerOrganization(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		ninetySeconds(t, st)
		const fields = `prepaid balance burnRatePerHour runwayHours spendLimitPerHour`
		var one, two int64
		var r *servertest.Response
		one = env.Statements(func() {
			r = env.GraphQL("money-operator", `{ a: organization(id: "org-acme") { id `+fields+` } }`, nil)
		})
		if len(r.Errors) > 0 {
			t.Fatalf("one organization: %+v", r.Errors)
		}
		two = env.Statements(func() {
			r = env.GraphQL("money-operator", `{ a: organization(id: "org-acme") { id `+fields+` }
				b: organization(id: "org-globex") { id `+fields+` } c: organization(id: "org-acme") { balance } }`, nil)
		})
		if len(r.Errors) > 0 {
			t.Fatalf("two organizations: %+v", r.Errors)
		}
		runway, _ := json.Marshal(93_638_000.0 / 254_480_000.0)
		money := `"prepaid":true,"balance":93.638,"burnRatePerHour":254.48,"runwayHours":` + string(runway) + `,"spendLimitPerHour":null`
		want := `{"a":{"id":"org-acme",` + money + `},"b":{"id":"org-globex","prepaid":false,"balance":0,"burnRatePerHour":0,"runwayHours":null,"spendLimitPerHour":null},"c":{"balance":93.638}}`
		if string(r.Data) != want {
			t.Errorf("two organizations:\n%s\nwant\n%s", r.Data, want)
		}
		t.Logf("every money field: %d statements for one organization, %d for two and one again", one, two)
		// The organization's read (exists, row: 2), then its balance
		// (exists, ledger, burn, storage price, settings: 5), over the
		// request's own statements (the key's check: 1).
		if one != 1+2+5 || two != 1+3*2+2*5 {
			t.Errorf("%d statements for one organization, %d for two and one again; want %d and %d", one, two, 1+2+5, 1+3*2+2*5)
		}
	})
}
