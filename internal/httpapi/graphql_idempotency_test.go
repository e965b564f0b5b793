package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// gqlKeyed posts query with vars to /graphql as token with header, and
// answers the status, the raw body and the headers.
func gqlKeyed(t *testing.T, env *servertest.Env, token, query string, vars map[string]any, h http.Header) (int, []byte, http.Header) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return doRaw(t, env, http.MethodPost, "/graphql", token, body, h)
}

// gqlErr is the first error of a GraphQL answer: code, status and message.
func gqlErr(t *testing.T, body []byte) string {
	t.Helper()
	var r servertest.Response
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) == 0 {
		return fmt.Sprintf("no error: %s", body)
	}
	e := r.Errors[0]
	return fmt.Sprintf("%v %v %s", e.Extensions["code"], e.Extensions["status"], e.Message)
}

// countVMs counts org-acme's rows named name.
func countVMs(t *testing.T, st *store.Store, name string) int64 {
	t.Helper()
	return storetest.Count(t, st, "vms", "organization_id = ? AND name = ?", "org-acme", name)
}

// countKeys counts the kept or reserved rows of key, in any organization.
func countKeys(t *testing.T, st *store.Store, key string) int64 {
	t.Helper()
	return storetest.Count(t, st, "idempotency_keys", "idem_key = ?", key)
}

const createVMQuery = `mutation Create($in: CreateVmInput!) { createVm(input: $in) { id name status gpuIds } }`

func createVars(name string) map[string]any {
	return map[string]any{"in": map[string]any{"name": name, "gpuModelId": "h100-80gb", "gpuCount": 1,
		"cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}}
}

const reusedMessage = `IDEMPOTENCY_KEY_REUSED 422 %s %q was already used with another request (another mutation field, other arguments or other fields asked, or a REST request) in the last 24 hours; use a new key for a new request`

// createVm sent twice with one Idempotency-Key creates one VM: the second
// answer is the first byte for byte, Idempotent-Replayed. The same request
// is the same field, arguments and selection, however the document spells
// them (spacing, operation and variable names, fragments, literals for
// variables);
// other arguments or fields with the key answer 422 naming it. A server
// error (503) is not kept: its retry acts again. Both engines.
func TestGraphQLIdempotencyKeyHeader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		key := withKey("g-1")
		status, first, h := gqlKeyed(t, env, "acme-operator", createVMQuery, createVars("h-1"), key)
		if status != 200 || h.Get("Idempotent-Replayed") != "" || !bytes.Contains(first, []byte(`"name":"h-1","status":"DEPLOYING"`)) {
			t.Fatalf("first createVm: %d %s (replayed %q)", status, first, h.Get("Idempotent-Replayed"))
		}
		for _, again := range []struct {
			what, query string
			vars        map[string]any
		}{
			{"the same body", createVMQuery, createVars("h-1")},
			{"another spelling", "mutation Again($x: CreateVmInput!) {\n  createVm(input: $x) {\n    id name\n    status gpuIds\n  }\n}", map[string]any{"x": createVars("h-1")["in"]}},
			{"fragments", `mutation($in: CreateVmInput!) { ...C } fragment C on Mutation { createVm(input: $in) { id ...V gpuIds } } fragment V on VM { name status }`, createVars("h-1")},
			{"literals", `mutation { createVm(input: {diskSizeGb: 100, ramGb: 64, cpuCores: 8, gpuCount: 1, gpuModelId: "h100-80gb", name: "h-1"}) { id name status gpuIds } }`, nil},
			{"the directive with the same key", `mutation($in: CreateVmInput!) { createVm(input: $in) @idempotent(key: "g-1") { id name status gpuIds } }`, createVars("h-1")},
		} {
			var h http.Header
			if again.what != "the directive with the same key" {
				h = key
			}
			status, b, rh := gqlKeyed(t, env, "acme-operator", again.query, again.vars, h)
			if status != 200 || !bytes.Equal(b, first) || rh.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s: %d %s (replayed %q), want the first answer byte for byte\n%s", again.what, status, b, rh.Get("Idempotent-Replayed"), first)
			}
		}
		if n := countVMs(t, st, "h-1"); n != 1 {
			t.Errorf("%d VMs named h-1, want 1", n)
		}

		// Another request with the key: other arguments, other fields.
		for _, other := range []struct {
			query string
			vars  map[string]any
		}{
			{createVMQuery, createVars("h-2")},
			{`mutation($in: CreateVmInput!) { createVm(input: $in) { id } }`, createVars("h-1")},
			{`mutation($in: CreateVmInput!) { vm: createVm(input: $in) { id name status gpuIds } }`, createVars("h-1")},
			{`mutation($in: CreateVmInput!) { createVm(input: $in) { id name status gpuIds @include(if: false) } }`, createVars("h-1")},
			{`mutation { stopVm(id: "vm-h-1") { id } }`, nil},
		} {
			status, b, _ := gqlKeyed(t, env, "acme-operator", other.query, other.vars, key)
			if want := fmt.Sprintf(reusedMessage, "Idempotency-Key", "g-1"); status != 422 || gqlErr(t, b) != want || bytes.Contains(b, []byte(`"data"`)) {
				t.Errorf("%s with a used key: %d %s, want 422 %s", other.query, status, b, want)
			}
		}
		if n := countVMs(t, st, "h-2"); n != 0 {
			t.Errorf("a reused key created %d VMs named h-2", n)
		}

		// A server error is not kept: a retry with the key acts again.
		full := map[string]any{"in": map[string]any{"name": "h-3", "gpuModelId": "h100-80gb", "gpuCount": 7,
			"cpuCores": 1, "ramGb": 1, "diskSizeGb": 1, "queue": false}}
		for range 2 {
			status, b, rh := gqlKeyed(t, env, "acme-operator", createVMQuery, full, withKey("g-3"))
			if status != 200 || gqlErr(t, b)[:len("VM_NO_CAPACITY 503")] != "VM_NO_CAPACITY 503" || rh.Get("Idempotent-Replayed") != "" {
				t.Errorf("createVm past capacity: %d %s (replayed %q), want VM_NO_CAPACITY acted afresh", status, b, rh.Get("Idempotent-Replayed"))
			}
		}
		if n := countKeys(t, st, "g-3"); n != 0 {
			t.Errorf("a 503 kept its key (%d rows)", n)
		}
	})
}

// @idempotent(key:) on the mutation field: the same guarantee as the
// header, over HTTP and over a WebSocket, whose operations carry no header
// (the upgrade's is refused on a mutation). Both engines.
func TestGraphQLIdempotentDirective(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		const m = `mutation($in: CreateVmInput!, $key: String!) { createVm(input: $in) @idempotent(key: $key) { id name status } }`
		vars := createVars("d-1")
		vars["key"] = "d-1"
		status, first, h := gqlKeyed(t, env, "acme-operator", m, vars, nil)
		if status != 200 || h.Get("Idempotent-Replayed") != "" || !bytes.Contains(first, []byte(`"name":"d-1"`)) {
			t.Fatalf("first createVm: %d %s", status, first)
		}
		status, again, h := gqlKeyed(t, env, "acme-operator", m, vars, nil)
		if status != 200 || !bytes.Equal(again, first) || h.Get("Idempotent-Replayed") != "true" {
			t.Errorf("again: %d %s (replayed %q), want %s", status, again, h.Get("Idempotent-Replayed"), first)
		}
		other := createVars("d-2")
		other["key"] = "d-1"
		status, b, _ := gqlKeyed(t, env, "acme-operator", m, other, nil)
		if want := fmt.Sprintf(reusedMessage, "@idempotent key", "d-1"); status != 422 || gqlErr(t, b) != want {
			t.Errorf("another input with the key: %d %s, want 422 %s", status, b, want)
		}
		if n1, n2 := countVMs(t, st, "d-1"), countVMs(t, st, "d-2"); n1 != 1 || n2 != 0 {
			t.Errorf("%d VMs named d-1, %d named d-2; want 1 and 0", n1, n2)
		}

		// Over a WebSocket: twice, one after the other, one VM.
		s := initWS(t, env, "acme-operator")
		const ws = `mutation { createVm(input: {name: "d-ws", gpuModelId: "h100-80gb", gpuCount: 1, cpuCores: 8, ramGb: 64, diskSizeGb: 100}) @idempotent(key: "d-ws") { id name status } }`
		var payloads []string
		for i := range 2 {
			s.operate(fmt.Sprint(i), ws)
			var got string
			for done := false; !done; {
				switch msg := s.next(); msg.Type {
				case "next":
					got = string(msg.Payload)
				case "complete":
					done = true
				default:
					t.Fatalf("message %s %s", msg.Type, msg.Payload)
				}
			}
			payloads = append(payloads, got)
		}
		if payloads[0] != payloads[1] || !bytes.Contains([]byte(payloads[0]), []byte(`"name":"d-ws"`)) {
			t.Errorf("over a WebSocket: %s then %s, want one answer twice", payloads[0], payloads[1])
		}
		if n := countVMs(t, st, "d-ws"); n != 1 {
			t.Errorf("%d VMs named d-ws, want 1", n)
		}
		// The header of a WebSocket's upgrade keys no mutation of the
		// connection: refused, naming the directive; a query is answered.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, _, err := websocket.Dial(ctx, wsURL(env), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: withKey("ws-h")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		hs := &sub{t: t, conn: conn}
		init, _ := json.Marshal(map[string]any{"Authorization": "Bearer acme-operator"})
		hs.send(wsMsg{Type: "connection_init", Payload: init})
		if msg := hs.next(); msg.Type != "connection_ack" {
			t.Fatalf("after connection_init: %s %s", msg.Type, msg.Payload)
		}
		hs.operate("m", `mutation { stopVm(id: "vm-none") { id } }`)
		hs.operate("q", `{ vms { total } }`)
		res := hs.results(2)
		if r := res["m"]; r.code() != "INVALID_IDEMPOTENCY_KEY" || r.Errors[0].Message != "the Idempotency-Key header keys a plain POST /graphql, not the operations of a WebSocket or an event stream: mark the mutation field @idempotent(key:)" {
			t.Errorf("a mutation on a connection upgraded with the header: %s %+v", r.Data, r.Errors)
		}
		if r := res["q"]; len(r.Errors) != 0 || !bytes.Contains(r.Data, []byte(`"total"`)) {
			t.Errorf("a query on it: %s %+v", r.Data, r.Errors)
		}
	})
}

// A key is one organization's whichever face sends it: REST's POST /v1/vms
// and GraphQL's createVm are different requests, so a key used on one is
// reused on the other. Both engines.
func TestIdempotencyKeyAcrossFaces(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		body := []byte(`{"name": "x-1", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`)
		if status, b, _ := doRaw(t, env, http.MethodPost, "/v1/vms", "acme-operator", body, withKey("x-1")); status != 201 {
			t.Fatalf("REST create: %d %s", status, b)
		}
		status, b, _ := gqlKeyed(t, env, "acme-operator", createVMQuery, createVars("x-1"), withKey("x-1"))
		if want := fmt.Sprintf(reusedMessage, "Idempotency-Key", "x-1"); status != 422 || gqlErr(t, b) != want {
			t.Errorf("createVm with REST's key: %d %s, want 422 %s", status, b, want)
		}
		if status, b, _ := gqlKeyed(t, env, "acme-operator", createVMQuery, createVars("x-2"), withKey("x-2")); status != 200 || gqlErr(t, b) != "no error: "+string(b) {
			t.Fatalf("GraphQL create: %d %s", status, b)
		}
		body = []byte(`{"name": "x-2", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}`)
		status, b, _ = doRaw(t, env, http.MethodPost, "/v1/vms", "acme-operator", body, withKey("x-2"))
		if status != 422 || !bytes.Contains(b, []byte(`"code":"IDEMPOTENCY_KEY_REUSED"`)) {
			t.Errorf("REST create with GraphQL's key: %d %s, want 422", status, b)
		}
		if n1, n2 := countVMs(t, st, "x-1"), countVMs(t, st, "x-2"); n1 != 1 || n2 != 1 {
			t.Errorf("%d VMs named x-1, %d named x-2; want one each", n1, n2)
		}
	})
}

// What a key may not be put on answers 400 INVALID_IDEMPOTENCY_KEY before
// anything runs, and keeps nothing; the header on a query is ignored; a
// caller without the mutation's permission is answered as without a key.
// Both engines.
func TestGraphQLIdempotencyKeyRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		create := func(name, directive string) string {
			return `mutation { createVm(input: {name: "` + name + `", gpuModelId: "h100-80gb", gpuCount: 1, cpuCores: 8, ramGb: 64, diskSizeGb: 100})` + directive + ` { id } }`
		}
		for _, c := range []struct {
			query  string
			header http.Header
			want   string
		}{
			{`mutation { a: createVm(input: {name: "r-1", gpuModelId: "h100-80gb", gpuCount: 1, cpuCores: 8, ramGb: 64, diskSizeGb: 100}) { id } b: stopVm(id: "vm-none") { id } }`, withKey("r-k"),
				"Idempotency-Key keys a mutation operation of one field; this one has 2 (a, b): send each as its own operation"},
			{create("r-1", ` @idempotent(key: "r-k")`), withKey("r-k"),
				"send the key once: the Idempotency-Key header or @idempotent(key:) on createVm, not both"},
			{`{ vm(id: "vm-none") @idempotent(key: "r-k") { id } }`, nil,
				"@idempotent marks a mutation's root field; vm is not one"},
			{`mutation { stopVm(id: "vm-none") { id node @idempotent(key: "r-k") { id } } }`, nil,
				"@idempotent marks a mutation's root field; node is not one"},
			{create("r-1", ` @idempotent(key: "")`), nil,
				"@idempotent key is empty: send 1 to 255 characters, such as a UUID"},
			{create("r-1", ""), withKey(""),
				"Idempotency-Key is empty: send 1 to 255 characters, such as a UUID"},
			{`mutation { createApiKey(input: {name: "k", permissions: ["compute.read"]}) { secret } }`, withKey("r-k"),
				"createApiKey takes no idempotency key: its answer holds a secret, which is never kept; send it without one"},
		} {
			status, b, _ := gqlKeyed(t, env, "acme-operator", c.query, nil, c.header)
			if got := gqlErr(t, b); status != 400 || got != "INVALID_IDEMPOTENCY_KEY 400 "+c.want || bytes.Contains(b, []byte(`"data"`)) {
				t.Errorf("%s: %d %s\nwant 400 INVALID_IDEMPOTENCY_KEY %s", c.query, status, b, c.want)
			}
		}
		if n, k := countVMs(t, st, "r-1"), countKeys(t, st, "r-k"); n != 0 || k != 0 {
			t.Errorf("refusals created %d VMs and kept %d keys", n, k)
		}

		// The header on a query is ignored.
		if status, b, h := gqlKeyed(t, env, "acme-reader", `{ vms { total } }`, nil, withKey("r-q")); status != 200 || bytes.Contains(b, []byte("errors")) || h.Get("Idempotent-Replayed") != "" {
			t.Errorf("a query with the header: %d %s", status, b)
		}
		// A reader's createVm is refused by its resolver as without a key.
		status, b, _ := gqlKeyed(t, env, "acme-reader", createVMQuery, createVars("r-2"), withKey("r-r"))
		if status != 200 || gqlErr(t, b) != "FORBIDDEN 403 this API key lacks the compute.operate permission" {
			t.Errorf("a reader's keyed createVm: %d %s", status, b)
		}
		if n, k := countKeys(t, st, "r-q"), countKeys(t, st, "r-r"); n != 0 || k != 0 {
			t.Errorf("kept %d keys of a query and %d of a refused caller", n, k)
		}
	})
}

// Identical createVm operations racing with one key create one VM: every
// other answer is the kept one or 409 IDEMPOTENCY_KEY_IN_USE with
// Retry-After: 1. Both engines.
func TestGraphQLIdempotencyKeyRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		for round := range 3 {
			name := fmt.Sprintf("race-%d", round)
			body, _ := json.Marshal(map[string]any{"query": createVMQuery, "variables": createVars(name)})
			race := env.CheckKeyRace(env.RaceKey(8, "POST", "/graphql", "acme-operator", name, body), func(a servertest.Answer) bool {
				return gqlErr(t, []byte(a.Body)) == fmt.Sprintf(
					"IDEMPOTENCY_KEY_IN_USE 409 a request with Idempotency-Key %q is still in flight; retry once it has answered", name)
			})
			if vms := countVMs(t, st, name); vms != 1 {
				t.Fatalf("round %d: %d VMs; want 1", round, vms)
			}
			t.Logf("round %d: 1 acted, %d in use, %d replayed", round, race.InUse, race.Replays)
		}
	})
}

// stopVm, restartVm and terminateVm honour keys as REST's do: a second stop
// with the key answers the first stop, not VM_NOT_RUNNING, and a refusal
// is kept too. Both engines.
func TestGraphQLIdempotentLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		addVM(f, vmSpec{id: "vm-a", node: "n6", status: "running", model: h100, gpus: 1, held: []string{"n6-g0"}, cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-b", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 1, ram: 1, disk: 1})
		resetOps(t, st, f)
		for _, c := range []struct {
			field, id, key string
			events         int
		}{
			{"stopVm", "vm-a", "l-1", 1},
			{"stopVm", "vm-a", "l-2", 1}, // VM_NOT_RUNNING, kept
			{"restartVm", "vm-b", "l-3", 1},
			{"terminateVm", "vm-b", "l-4", 2},
		} {
			q := fmt.Sprintf(`mutation { %s(id: %q) { id status statusReason } }`, c.field, c.id)
			status, first, _ := gqlKeyed(t, env, "acme-operator", q, nil, withKey(c.key))
			status2, again, h := gqlKeyed(t, env, "acme-operator", q, nil, withKey(c.key))
			if status != 200 || status2 != 200 || !bytes.Equal(first, again) || h.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s %s: %d %s then %d %s (replayed %q), want the first answer again", c.field, c.id, status, first, status2, again, h.Get("Idempotent-Replayed"))
			}
			if n := len(eventsOf(t, st, c.id)); n != c.events {
				t.Errorf("%s %s: %d events of %s, want %d", c.field, c.key, n, c.id, c.events)
			}
			if c.key == "l-2" && gqlErr(t, again)[:len("VM_NOT_RUNNING 409")] != "VM_NOT_RUNNING 409" {
				t.Errorf("the second stop: %s, want the kept VM_NOT_RUNNING", again)
			}
		}
		if v := vmRow(t, st, "vm-b"); v.Status != "terminated" {
			t.Errorf("vm-b is %s, want terminated", v.Status)
		}
	})
}
