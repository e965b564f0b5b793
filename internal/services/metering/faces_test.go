package metering_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/live"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The faces of the billing settings and events (docs/contract.md#billing):
// PATCH and GET /v1/billing/settings, GET /v1/billing/events, GraphQL's
// setLowBalanceThreshold, setSpendLimit, Organization.billingEvents and
// the billingEvents subscription.

// settingsEnv is newMoneyEnv with the platform's default spend limit of
// the command (8000 cents an hour).
func settingsEnv(t *testing.T, st *store.Store) *servertest.Env {
	env := servertest.NewWithOptions(t, st, servertest.Base,
		servertest.Options{Services: services.Config{SpendLimitCentsPerHour: 8000}}, servertest.Config{})
	datasettest.Load(t, st, moneyKeys)
	return env
}

func patch(t *testing.T, env *servertest.Env, path, token, body string) (int, string) {
	t.Helper()
	s, b := env.Do("PATCH", path, token, []byte(body), nil)
	return s, string(b)
}

const (
	settingsPath = "/v1/billing/settings"
	noSettings   = `{"organizationId":"org-acme","lowBalanceThresholdHours":null,"spendLimitCentsPerHour":null}` + "\n"
)

// Setting and clearing each setting over REST, by the organization's
// admin and by the operator; a bad body answers 400 naming the member and
// writes nothing (not even its valid other member); the spend limit set
// refuses a create with 402 SPEND_LIMIT_EXCEEDED, and cleared lets it
// through; another organization's settings do not exist for a key.
func TestBillingSettingsOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := settingsEnv(t, st)
		if s, b := get(t, env, settingsPath, "acme-billing"); s != 200 || b != noSettings {
			t.Errorf("settings before: %d %s", s, b)
		}
		for _, token := range []string{"acme-billing", "acme-operator"} {
			s, b := env.Do("PATCH", settingsPath, token, []byte(`{"lowBalanceThresholdHours": 24}`), nil)
			wantError(t, "PATCH as "+token, s, b, 403, "FORBIDDEN", "this API key lacks the admin permission")
		}
		bad := []struct{ body, msg string }{
			{`{"lowBalanceThresholdHours": 0}`, "lowBalanceThresholdHours 0 is not a whole number of hours from 1 to 8784"},
			{`{"lowBalanceThresholdHours": -3}`, "lowBalanceThresholdHours -3 is not a whole number of hours from 1 to 8784"},
			{`{"lowBalanceThresholdHours": 8785}`, "lowBalanceThresholdHours 8785 is not a whole number of hours from 1 to 8784"},
			{`{"lowBalanceThresholdHours": 1.5}`, "lowBalanceThresholdHours 1.5 is not a whole number of hours (or null to clear it)"},
			{`{"lowBalanceThresholdHours": "24"}`, `lowBalanceThresholdHours "24" is not a whole number of hours (or null to clear it)`},
			{`{"spendLimitCentsPerHour": 2.5}`, "spendLimitCentsPerHour 2.5 is not a whole number of cents (or null to clear it)"},
			{`{"spendLimitCentsPerHour": 500.0}`, "spendLimitCentsPerHour 500.0 is not a whole number of cents (or null to clear it)"},
			{`{"spendLimitCentsPerHour": -1}`, "spendLimitCentsPerHour -1 is not a whole number of cents from 0 (none) to 100000000"},
			{`{"spendLimitCentsPerHour": 100000001}`, "spendLimitCentsPerHour 100000001 is not a whole number of cents from 0 (none) to 100000000"},
			{`{"lowBalanceThresholdHours": 24, "spendLimitCentsPerHour": -1}`, "spendLimitCentsPerHour -1 is not a whole number of cents from 0 (none) to 100000000"},
			{`{"lowBalanceThresholdHours": 24, "currency": "EUR"}`, `the request body: unknown field "currency"`},
			{`{}`, "the request body changes nothing: send lowBalanceThresholdHours, spendLimitCentsPerHour or both (null clears one)"},
		}
		for _, c := range bad {
			s, b := env.Do("PATCH", settingsPath, "acme-keys-admin", []byte(c.body), nil)
			wantError(t, c.body, s, b, 400, "BAD_REQUEST", c.msg)
		}
		// An organization's admin tightens its limit; lifting it past the
		// platform's default, or removing it, is the operator's.
		s, b := env.Do("PATCH", settingsPath, "acme-keys-admin", []byte(`{"spendLimitCentsPerHour": 8001}`), nil)
		wantError(t, "admin lifts its limit", s, b, 403, "FORBIDDEN", "spendLimitCentsPerHour 8001 is past the platform's default of 8000 cents per hour, "+
			"which only the platform operator (nodes.admin) lifts: an organization may tighten its own limit")
		s, b = env.Do("PATCH", settingsPath, "acme-keys-admin", []byte(`{"spendLimitCentsPerHour": 0}`), nil)
		wantError(t, "admin removes its limit", s, b, 403, "FORBIDDEN", "spendLimitCentsPerHour 0 removes the limit, "+
			"which only the platform operator (nodes.admin) does: an organization may tighten its own limit")
		// Another organization's settings are missing for its admin.
		s, b = env.Do("PATCH", settingsPath+"?organizationId=org-globex", "acme-keys-admin", []byte(`{"lowBalanceThresholdHours": 2}`), nil)
		wantError(t, "globex's settings as acme's admin", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`)
		s, b = env.Do("GET", settingsPath+"?organizationId=org-globex", "acme-keys-admin", nil, nil)
		wantError(t, "reading globex's settings as acme's admin", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`)
		s, b = env.Do("PATCH", settingsPath+"?organizationId=org-nowhere", "money-operator", []byte(`{"lowBalanceThresholdHours": 2}`), nil)
		wantError(t, "an unknown organization", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-nowhere"`)
		if n := storetest.Count(t, st, "billing_settings", "1 = 1"); n != 0 {
			t.Fatalf("refused changes wrote %d settings", n)
		}

		set := `{"organizationId":"org-acme","lowBalanceThresholdHours":24,"spendLimitCentsPerHour":500}` + "\n"
		if s, b := patch(t, env, settingsPath, "acme-keys-admin", `{"lowBalanceThresholdHours": 24, "spendLimitCentsPerHour": 500}`); s != 200 || b != set {
			t.Errorf("PATCH both: %d %s, want %s", s, b, set)
		}
		for _, token := range []string{"acme-billing", "acme-keys-admin"} {
			if s, b := get(t, env, settingsPath, token); s != 200 || b != set {
				t.Errorf("settings as %s: %d %s", token, s, b)
			}
		}
		if s, b := get(t, env, "/v1/billing/balance", "acme-billing"); s != 200 || !strings.HasSuffix(b, `"spendLimitCentsPerHour":500}`+"\n") {
			t.Errorf("the balance with the limit: %d %s", s, b)
		}
		// org-acme spends 450 ¢/h (vm-acme-1) and 5.48 keeping vm-acme-2's
		// 200 GB: a 2 × H100 asks 498 more.
		create := []byte(`{"name": "train", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`)
		before := storetest.Count(t, st, "vms", "1 = 1")
		s, b = env.Do("POST", "/v1/vms", "acme-operator", create, nil)
		wantError(t, "a create past the limit", s, b, 402, "SPEND_LIMIT_EXCEEDED",
			"organization org-acme's spend limit is 500 cents per hour: it spends 455.48 cents per hour now and this asks 498 more")
		if n := storetest.Count(t, st, "vms", "1 = 1"); n != before {
			t.Errorf("a refused create wrote a row: %d → %d", before, n)
		}
		// Clearing one leaves the other.
		cleared := `{"organizationId":"org-acme","lowBalanceThresholdHours":24,"spendLimitCentsPerHour":null}` + "\n"
		if s, b := patch(t, env, settingsPath, "acme-keys-admin", `{"spendLimitCentsPerHour": null}`); s != 200 || b != cleared {
			t.Errorf("clearing the limit: %d %s, want %s", s, b, cleared)
		}
		if s, b := env.Do("POST", "/v1/vms", "acme-operator", create, nil); s != 201 {
			t.Errorf("the create once the limit is cleared (postpaid: none applies): %d %s", s, b)
		}
		if s, b := patch(t, env, settingsPath, "acme-keys-admin", `{"lowBalanceThresholdHours": null}`); s != 200 || b != noSettings {
			t.Errorf("clearing the threshold: %d %s", s, b)
		}
		// The operator sets any organization's, any value.
		globex := `{"organizationId":"org-globex","lowBalanceThresholdHours":null,"spendLimitCentsPerHour":0}` + "\n"
		if s, b := patch(t, env, settingsPath+"?organizationId=org-globex", "money-operator", `{"spendLimitCentsPerHour": 0}`); s != 200 || b != globex {
			t.Errorf("the operator's PATCH of globex: %d %s", s, b)
		}
		if s, b := patch(t, env, settingsPath+"?organizationId=org-acme", "money-operator", `{"spendLimitCentsPerHour": 20000}`); s != 200 ||
			!strings.HasSuffix(b, `"spendLimitCentsPerHour":20000}`+"\n") {
			t.Errorf("the operator lifts acme's past the default: %d %s", s, b)
		}
		s, b = env.Do("GET", settingsPath+"?organizationId=org-globex", "acme-billing", nil, nil)
		wantError(t, "globex's settings as acme's reader", s, b, 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-globex"`)
		s, b = env.Do("GET", settingsPath, "acme-reader", nil, nil)
		wantError(t, "settings without billing.read", s, b, 403, "FORBIDDEN", "this API key lacks the billing.read permission")
	})
}

// The same settings over GraphQL: each mutation sets and clears, answers
// the organization, refuses what REST refuses, and writes nothing then.
func TestBillingSettingsOverGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := settingsEnv(t, st)
		for _, c := range []struct{ token, query, want string }{
			{"acme-keys-admin", `mutation { setLowBalanceThreshold(hours: 6) { id lowBalanceThresholdHours } }`,
				`{"setLowBalanceThreshold":{"id":"org-acme","lowBalanceThresholdHours":6}}`},
			{"acme-keys-admin", `mutation { setSpendLimit(centsPerHour: 700) { id spendLimitPerHour } }`,
				`{"setSpendLimit":{"id":"org-acme","spendLimitPerHour":700}}`},
			{"acme-keys-admin", `mutation { setSpendLimit(organizationId: "org-acme", centsPerHour: null) { spendLimitPerHour lowBalanceThresholdHours } }`,
				`{"setSpendLimit":{"spendLimitPerHour":null,"lowBalanceThresholdHours":6}}`},
			{"acme-keys-admin", `mutation { setLowBalanceThreshold(hours: null) { lowBalanceThresholdHours } }`,
				`{"setLowBalanceThreshold":{"lowBalanceThresholdHours":null}}`},
			{"money-operator", `mutation { setSpendLimit(organizationId: "org-acme", centsPerHour: 9000) { id spendLimitPerHour } }`,
				`{"setSpendLimit":{"id":"org-acme","spendLimitPerHour":9000}}`},
		} {
			if r := env.GraphQL(c.token, c.query, nil); len(r.Errors) > 0 || string(r.Data) != c.want {
				t.Errorf("%s: %s %+v, want %s", c.query, r.Data, r.Errors, c.want)
			}
		}
		want := `{"organizationId":"org-acme","lowBalanceThresholdHours":null,"spendLimitCentsPerHour":9000}` + "\n"
		for _, c := range []struct{ token, query, code, msg string }{
			{"acme-billing", `mutation { setLowBalanceThreshold(hours: 6) { id } }`, "FORBIDDEN", "this API key lacks the admin permission"},
			{"acme-keys-admin", `mutation { setLowBalanceThreshold(hours: 0) { id } }`, "BAD_REQUEST",
				"lowBalanceThresholdHours 0 is not a whole number of hours from 1 to 8784"},
			{"acme-keys-admin", `mutation { setSpendLimit(centsPerHour: -5) { id } }`, "BAD_REQUEST",
				"spendLimitCentsPerHour -5 is not a whole number of cents from 0 (none) to 100000000"},
			{"acme-keys-admin", `mutation { setSpendLimit(centsPerHour: 9000) { id } }`, "FORBIDDEN",
				"spendLimitCentsPerHour 9000 is past the platform's default of 8000 cents per hour, which only the platform operator (nodes.admin) lifts: an organization may tighten its own limit"},
			{"acme-keys-admin", `mutation { setLowBalanceThreshold(organizationId: "org-globex", hours: 2) { id } }`, "ORGANIZATION_NOT_FOUND",
				`there is no organization "org-globex"`},
			{"money-operator", `mutation { setLowBalanceThreshold(organizationId: "org-nowhere", hours: 2) { id } }`, "ORGANIZATION_NOT_FOUND",
				`there is no organization "org-nowhere"`},
		} {
			r := env.GraphQL(c.token, c.query, nil)
			if r.Code() != c.code || r.Errors[0].Message != c.msg {
				t.Errorf("%s as %s: %s %+v; want %s %q", c.query, c.token, r.Data, r.Errors, c.code, c.msg)
			}
		}
		if r := env.GraphQL("acme-keys-admin", `mutation { setSpendLimit(centsPerHour: 2.5) { id } }`, nil); len(r.Errors) == 0 {
			t.Errorf("a fractional spend limit: %s", r.Data)
		}
		if s, b := get(t, env, settingsPath, "acme-billing"); s != 200 || b != want {
			t.Errorf("settings after the refusals: %d %s, want %s", s, b, want)
		}
		if n := storetest.Count(t, st, "billing_settings", "organization_id = ?", "org-globex"); n != 0 {
			t.Errorf("refusals wrote globex's settings")
		}
	})
}

// moneyServer serves st as the command does (no answer-checking
// recorder, which could not upgrade a WebSocket), with moneyKeys.
func moneyServer(t *testing.T, st *store.Store) *httptest.Server {
	t.Helper()
	feed := live.New(st, live.Limits{})
	srv := httptest.NewServer(servertest.Handler(st, servertest.Options{Services: services.Config{Live: feed}, LoaderWait: time.Millisecond}, servertest.Config{}))
	t.Cleanup(func() { feed.Shutdown(); srv.Close() })
	return srv
}

const billingSub = `subscription($org: ID, $after: ID) { billingEvents(organizationId: $org, after: $after) {
	id organizationId kind balance burnRatePerHour thresholdHours workloadsStopped at } }`

func subscribeBilling(t *testing.T, srv *httptest.Server, token string, vars map[string]any) *servertest.WS {
	t.Helper()
	return servertest.Subscribe(t, srv.URL, token, billingSub, vars)
}

// billingData reads n billingEvents messages, as their JSON.
func billingData(s *servertest.WS, n int) []string {
	s.T.Helper()
	return servertest.NextData(s, n, func(d struct{ BillingEvents json.RawMessage }) string { return string(d.BillingEvents) })
}

// The two events the test below raises, as GraphQL writes them: the
// runway of 93.638 cents at 254.48 an hour fell below 1 hour; then, 93
// cents taken, the balance no longer covered a minute and the pass
// stopped vm-acme-1 and pod-acme-1.
const (
	lowEvent       = `{"id":"1","organizationId":"org-acme","kind":"LOW_BALANCE","balance":93.638,"burnRatePerHour":254.48,"thresholdHours":1,"workloadsStopped":0,"at":"2026-12-03T10:01:35.000Z"}`
	exhaustedEvent = `{"id":"2","organizationId":"org-acme","kind":"BALANCE_EXHAUSTED","balance":0.638,"burnRatePerHour":254.48,"thresholdHours":null,"workloadsStopped":2,"at":"2026-12-03T10:01:35.000Z"}`
)

// A threshold set, the next metering pass raises low_balance, and a
// balance run out raises balance_exhausted: each visible on REST's paged
// events, on Organization.billingEvents and on the billingEvents
// subscriptions of the organization's reader and of the operator, and on
// none of another organization's.
func TestBillingEventsOnEveryFace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		srv := moneyServer(t, st)
		ninetySeconds(t, st)
		acme := subscribeBilling(t, srv, "acme-billing", nil)
		operator := subscribeBilling(t, srv, "money-operator", map[string]any{"org": "org-acme"})
		globex := subscribeBilling(t, srv, "globex-billing", nil)
		refused := subscribeBilling(t, srv, "acme-keys-admin", map[string]any{"org": "org-globex"})
		if m := refused.Next(); !strings.Contains(string(m.Payload), `"message":"there is no organization \"org-globex\""`) ||
			!strings.Contains(string(m.Payload), `"code":"ORGANIZATION_NOT_FOUND"`) || strings.Contains(string(m.Payload), `"kind"`) {
			t.Errorf("another organization's billing events: %s %s", m.Type, m.Payload)
		}
		if m := subscribeBilling(t, srv, "acme-reader", nil).Next(); !strings.Contains(string(m.Payload), `"message":"this API key lacks the billing.read permission"`) {
			t.Errorf("billing events without billing.read: %s %s", m.Type, m.Payload)
		}
		time.Sleep(100 * time.Millisecond) // the subscriptions start "now"

		if r := env.GraphQL("acme-keys-admin", `mutation { setLowBalanceThreshold(hours: 1) { lowBalanceThresholdHours } }`, nil); len(r.Errors) > 0 {
			t.Fatalf("setLowBalanceThreshold: %+v", r.Errors)
		}
		ctx := context.Background()
		m := metering.New(st, func() time.Time { return t0.Add(90*time.Second + metering.DefaultSettle) })
		if res, err := m.Pass(ctx); err != nil || res.LowBalance != 1 || res.Exhausted != 0 {
			t.Fatalf("the pass after the threshold: %+v %v", res, err)
		}
		if got := billingData(acme, 1); got[0] != lowEvent {
			t.Errorf("acme's subscription: %s\nwant %s", got[0], lowEvent)
		}
		if _, err := m.Adjust(ctx, auth.SystemCaller(), "org-acme", -93, "test", "take"); err != nil {
			t.Fatal(err)
		}
		if res, err := m.Pass(ctx); err != nil || res.Exhausted != 1 || res.Stopped != 2 {
			t.Fatalf("the pass after the balance ran out: %+v %v", res, err)
		}
		if got := billingData(acme, 1); got[0] != exhaustedEvent {
			t.Errorf("acme's subscription: %s\nwant %s", got[0], exhaustedEvent)
		}
		if got := billingData(operator, 2); got[0] != lowEvent || got[1] != exhaustedEvent {
			t.Errorf("the operator's subscription: %s", got)
		}
		globex.Quiet()
		// Resumed after the first, a subscription replays the second.
		if got := billingData(subscribeBilling(t, srv, "acme-billing", map[string]any{"after": "1"}), 1); got[0] != exhaustedEvent {
			t.Errorf("after 1: %s", got)
		}

		low := `{"id":"1","organizationId":"org-acme","kind":"low_balance","balanceCents":93.638,"burnRateCentsPerHour":254.48,"thresholdHours":1,"workloadsStopped":0,"at":"2026-12-03T10:01:35.000Z"}`
		exhausted := `{"id":"2","organizationId":"org-acme","kind":"balance_exhausted","balanceCents":0.638,"burnRateCentsPerHour":254.48,"thresholdHours":null,"workloadsStopped":2,"at":"2026-12-03T10:01:35.000Z"}`
		for _, c := range []struct{ path, token, want string }{
			{"/v1/billing/events", "acme-billing", `{"events":[` + low + `,` + exhausted + `]}`},
			{"/v1/billing/events?limit=1", "acme-billing", `{"events":[` + low + `],"next":"1"}`},
			{"/v1/billing/events?after=1", "acme-keys-admin", `{"events":[` + exhausted + `]}`},
			{"/v1/billing/events?after=2", "acme-billing", `{"events":[]}`},
			{"/v1/billing/events?organizationId=org-acme&limit=2", "money-operator", `{"events":[` + low + `,` + exhausted + `]}`},
			{"/v1/billing/events", "globex-billing", `{"events":[]}`},
		} {
			if s, b := get(t, env, c.path, c.token); s != 200 || b != c.want+"\n" {
				t.Errorf("%s as %s: %d %s\nwant %s", c.path, c.token, s, b, c.want)
			}
		}
		for _, c := range []struct {
			path, token string
			status      int
			code, msg   string
		}{
			{"/v1/billing/events?after=x", "acme-billing", 400, "BAD_REQUEST", `after must be a billing event id (a whole number), got "x"`},
			{"/v1/billing/events?limit=0", "acme-billing", 400, "BAD_REQUEST", "limit must be between 1 and 500, got 0"},
			{"/v1/billing/events?organizationId=org-acme", "globex-billing", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-acme"`},
			{"/v1/billing/events?organizationId=org-nowhere", "money-operator", 404, "ORGANIZATION_NOT_FOUND", `there is no organization "org-nowhere"`},
			{"/v1/billing/events", "acme-reader", 403, "FORBIDDEN", "this API key lacks the billing.read permission"},
		} {
			s, b := env.Do("GET", c.path, c.token, nil, nil)
			wantError(t, c.path+" as "+c.token, s, b, c.status, c.code, c.msg)
		}

		const q = `{ organization { billingEvents(first: 1) { nodes { id organizationId kind balance burnRatePerHour thresholdHours workloadsStopped at } pageInfo { hasNextPage endCursor } } } }`
		r := env.GraphQL("acme-billing", q, nil)
		var page struct {
			Organization struct {
				BillingEvents struct {
					Nodes    []json.RawMessage
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
		}
		env.Decode(r, &page)
		be := page.Organization.BillingEvents
		if len(be.Nodes) != 1 || string(be.Nodes[0]) != lowEvent || !be.PageInfo.HasNextPage {
			t.Fatalf("the connection's first page: %s %+v", r.Data, r.Errors)
		}
		r = env.GraphQL("acme-billing", `query($after: String) { organization { billingEvents(after: $after) { nodes { id kind } pageInfo { hasNextPage } } } }`,
			map[string]any{"after": be.PageInfo.EndCursor})
		if want := `{"organization":{"billingEvents":{"nodes":[{"id":"2","kind":"BALANCE_EXHAUSTED"}],"pageInfo":{"hasNextPage":false}}}}`; string(r.Data) != want {
			t.Errorf("the connection's second page: %s %+v\nwant %s", r.Data, r.Errors, want)
		}
		if r := env.GraphQL("globex-billing", `{ organization { billingEvents { nodes { id } } } }`, nil); string(r.Data) != `{"organization":{"billingEvents":{"nodes":[]}}}` {
			t.Errorf("globex's billing events: %s %+v", r.Data, r.Errors)
		}
		if r := env.GraphQL("acme-billing", `{ organization { billingEvents(after: "nope") { nodes { id } } } }`, nil); r.Code() != "BAD_REQUEST" {
			t.Errorf("a bad cursor: %s %+v", r.Data, r.Errors)
		}
	})
}

// Two server processes on one PostgreSQL, each with its own store and
// listener: a low_balance event raised by a metering pass of one reaches
// a billingEvents subscriber of the other.
func TestBillingEventsAcrossReplicas(t *testing.T) {
	st := storetest.Replicas(t, store.Postgres, 2)
	a, b := st[0], st[1]
	datasettest.Load(t, a, servertest.Base)
	datasettest.Load(t, a, moneyKeys)
	srvA := moneyServer(t, a)
	s := subscribeBilling(t, srvA, "acme-billing", nil)
	time.Sleep(100 * time.Millisecond)

	ninetySeconds(t, b)
	ctx := context.Background()
	m := metering.New(b, func() time.Time { return t0.Add(90*time.Second + metering.DefaultSettle) })
	if _, err := m.SetLowBalanceThreshold(ctx, auth.SystemCaller(), "org-acme", new(1)); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Pass(ctx); err != nil || res.LowBalance != 1 {
		t.Fatalf("replica B's pass: %+v %v", res, err)
	}
	if got := billingData(s, 1); got[0] != lowEvent {
		t.Errorf("replica A's subscriber: %s\nwant %s", got[0], lowEvent)
	}
	s.Quiet()
}

// A billingEvents stream is rechecked as every stream: an operator's key
// that loses nodes.admin while it follows another organization is closed
// with 4403 FORBIDDEN (the organization is no longer its to read); the
// organization's own reader's stream lives on.
func TestBillingEventsStreamClosesWhenThePermissionGoes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, servertest.Base)
		datasettest.Load(t, st, moneyKeys)
		feed := live.New(st, live.Limits{Recheck: 200 * time.Millisecond})
		srv := httptest.NewServer(servertest.Handler(st, servertest.Options{Services: services.Config{Live: feed}}, servertest.Config{}))
		t.Cleanup(func() { feed.Shutdown(); srv.Close() })
		operator := subscribeBilling(t, srv, "money-operator", map[string]any{"org": "org-acme"})
		acme := subscribeBilling(t, srv, "acme-billing", nil)
		time.Sleep(100 * time.Millisecond)
		storetest.Exec(t, st, "UPDATE api_keys SET permissions = ? WHERE token_hash = ?", "billing.read", auth.HashToken("money-operator"))
		code, reason := operator.ClosedWith()
		if code != live.CloseRevoked || reason != `FORBIDDEN: this API key may no longer read this stream: there is no organization "org-acme"` {
			t.Errorf("close %d %q, want 4403 FORBIDDEN", code, reason)
		}
		ninetySeconds(t, st)
		m := metering.New(st, func() time.Time { return t0.Add(90*time.Second + metering.DefaultSettle) })
		if _, err := m.SetLowBalanceThreshold(context.Background(), auth.SystemCaller(), "org-acme", new(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := billingData(acme, 1); got[0] != lowEvent {
			t.Errorf("acme's stream: %s", got)
		}
	})
}

// A billing event's id counts its own organization's events only: two
// organizations' events interleaved read
// 1, 2 … each on REST, so the gaps show nothing of the other's.
func TestBillingEventIDsPerOrganization(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMoneyEnv(t, st)
		for i, org := range []string{"org-acme", "org-globex", "org-acme", "org-globex", "org-globex"} {
			e := &models.BillingEvent{OrganizationID: org, Kind: models.BillingBalanceRestored, BalanceMicroCents: int64(i),
				At: t0.Add(time.Duration(i) * time.Second)}
			if err := st.InTx(context.Background(), func(tx *store.Txn) error { return st.AppendBillingEvent(tx, e) }); err != nil {
				t.Fatal(err)
			}
		}
		for token, want := range map[string]string{"acme-billing": "1@0 2@2", "globex-billing": "1@1 2@3 3@4"} {
			var page struct {
				Events []struct{ ID, At string }
			}
			s, b := get(t, env, "/v1/billing/events", token)
			if err := json.Unmarshal([]byte(b), &page); err != nil || s != 200 {
				t.Fatalf("%s: %d %s", token, s, b)
			}
			var got []string
			for _, e := range page.Events {
				got = append(got, e.ID+"@"+strings.TrimPrefix(strings.TrimSuffix(e.At, ".000Z"), "2026-12-03T10:00:0"))
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%s's events: %v, want %s", token, got, want)
			}
		}
	})
}
