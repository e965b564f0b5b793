package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// GET /v1/vms and /v1/vms/{id}: the organization's rows only, newest first
// as GraphQL's vms, status filters, paging with next.
func TestReadVMs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		statuses := []string{"running", "stopped", "failed", "running", "interrupted", "stopped", "terminated"}
		for i, s := range statuses {
			spec := vmSpec{id: fmt.Sprintf("vm-%d", i), node: "n6", status: s, model: h100, gpus: 0, cpu: 1, ram: 1, disk: 1}
			if s == "interrupted" {
				spec.reason = "node_lost"
			}
			addVM(f, spec)
		}
		addVM(f, vmSpec{id: "vm-cpu", node: "n6", status: "running", cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-held", node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g0", "n1-g1"}, cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-globex", org: "org-globex", node: "n6", status: "running", cpu: 1, ram: 1, disk: 1})
		for i := range f.VMs {
			c := created.Add(time.Duration(i) * time.Minute)
			f.VMs[i].CreatedAt = &c
		}
		resetOps(t, st, f)

		list := func(query string) (int, []string, any, map[string]any) {
			t.Helper()
			status, b := env.Do(http.MethodGet, "/v1/vms"+query, "acme-reader", nil, nil)
			var body map[string]any
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatalf("%s: %s", query, b)
			}
			var ids []string
			if vms, ok := body["vms"].([]any); ok {
				for _, v := range vms {
					ids = append(ids, v.(map[string]any)["id"].(string))
				}
			}
			return status, ids, body["next"], body
		}
		// Newest first, every status, no other organization's row.
		status, ids, next, _ := list("")
		want := "vm-held vm-cpu vm-6 vm-5 vm-4 vm-3 vm-2 vm-1 vm-0"
		if status != 200 || strings.Join(ids, " ") != want || next != nil {
			t.Errorf("list = %d %v next %v, want %s", status, ids, next, want)
		}
		// GraphQL lists the same order.
		var g struct {
			Vms struct{ Vms []struct{ ID string } }
		}
		env.Decode(env.GraphQL("acme-reader", `{ vms { vms { id } } }`, nil), &g)
		var gids []string
		for _, v := range g.Vms.Vms {
			gids = append(gids, v.ID)
		}
		if strings.Join(gids, " ") != want {
			t.Errorf("GraphQL vms = %v, REST %v", gids, ids)
		}

		for _, c := range []struct{ query, want string }{
			{"?status=running", "vm-held vm-cpu vm-3 vm-0"},
			{"?status=stopped,failed", "vm-5 vm-2 vm-1"},
			{"?status=stopped&status=terminated", "vm-6 vm-5 vm-1"},
			{"?status=running&limit=2", "vm-held vm-cpu"},
			{"?status=running&limit=2&offset=2", "vm-3 vm-0"},
		} {
			if status, ids, _, _ := list(c.query); status != 200 || strings.Join(ids, " ") != c.want {
				t.Errorf("%s = %d %v, want %s", c.query, status, ids, c.want)
			}
		}
		if _, _, next, _ := list("?status=running&limit=2"); next != float64(2) {
			t.Errorf("next of the first page = %v, want 2", next)
		}
		if _, _, _, body := list("?status=running&limit=2&offset=2"); body["next"] != nil || len(body) != 1 {
			t.Errorf("last page = %v, want no next", body)
		}
		if _, ids, _, body := list("?status=pending"); len(ids) != 0 || body["vms"] == nil {
			t.Errorf("no match = %v, want an empty list", body)
		}

		for _, c := range []struct{ query, msg string }{
			{"?status=RUNNING", `"RUNNING"`},
			{"?status=running,bogus", `"bogus"`},
			{"?status=running,", `""`},
			{"?limit=0", "limit"},
			{"?limit=501", "limit"},
			{"?limit=x", "limit"},
			{"?offset=-1", "offset"},
		} {
			status, b := env.Do(http.MethodGet, "/v1/vms"+c.query, "acme-reader", nil, nil)
			if status != 400 || !strings.Contains(strings.ReplaceAll(string(b), `\"`, `"`), c.msg) || !strings.Contains(string(b), `"error"`) {
				t.Errorf("%s = %d %s, want a 400 naming %s", c.query, status, b, c.msg)
			}
		}

		// One VM: the seed's object, as restart answers it.
		status, b := env.Do(http.MethodGet, "/v1/vms/vm-held", "acme-reader", nil, nil)
		var vm map[string]any
		_ = json.Unmarshal(b, &vm)
		if status != 200 || len(vm) != len(seedFields) || vm["status"] != "running" || fmt.Sprint(vm["gpuIds"]) != "[n1-g0 n1-g1]" ||
			vm["gpuModelName"] != "NVIDIA H100 80GB HBM3" || vm["gpuManufacturer"] != "NVIDIA" {
			t.Errorf("GET vm-held = %d %s", status, b)
		}
		status, b = env.Do(http.MethodGet, "/v1/vms/vm-cpu", "acme-reader", nil, nil)
		vm = nil
		_ = json.Unmarshal(b, &vm)
		if _, ok := vm["gpuManufacturer"]; status != 200 || ok || vm["gpuModelName"] != nil {
			t.Errorf("GET vm-cpu (CPU-only) = %d %s", status, b)
		}
		for _, id := range []string{"vm-globex", "vm-nope"} {
			status, b := env.Do(http.MethodGet, "/v1/vms/"+id, "acme-reader", nil, nil)
			if status != 404 || !strings.Contains(string(b), `"VM_NOT_FOUND"`) || !strings.Contains(string(b), id) {
				t.Errorf("GET %s = %d %s, want 404 VM_NOT_FOUND", id, status, b)
			}
		}
		if status, _ := env.Do(http.MethodGet, "/v1/vms", "", nil, nil); status != 401 {
			t.Errorf("no key: %d", status)
		}
	})
}

// The event log through both faces: the same events, paged by after and
// limit, another organization's VM a 404 (REST) and null (GraphQL).
func TestVMEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		addVM(f, vmSpec{id: "vm-a", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 1, ram: 1, disk: 1})
		addVM(f, vmSpec{id: "vm-g", org: "org-globex", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 1, ram: 1, disk: 1})
		resetOps(t, st, f)
		// restart → deploying, stop, restart → deploying, terminate.
		for _, step := range []struct{ method, path string }{
			{"POST", "/v1/vms/vm-a/restart"}, {"POST", "/v1/vms/vm-a/stop"},
			{"POST", "/v1/vms/vm-a/restart"}, {"DELETE", "/v1/vms/vm-a"},
		} {
			if status, b := env.Do(step.method, step.path, "acme-operator", nil, nil); status != 200 {
				t.Fatalf("%s %s = %d %s", step.method, step.path, status, b)
			}
		}
		if status, b := env.Do("POST", "/v1/vms/vm-g/restart", "globex-operator", nil, nil); status != 200 {
			t.Fatalf("globex restart = %d %s", status, b)
		}
		actor := keyActor("acme-operator").String()
		wantChain := "stopped→deploying restart-deploy user_restarted|deploying→stopped user-stop user_stopped|" +
			"stopped→deploying restart-deploy user_restarted|deploying→terminated user-terminate user_terminated"

		type ev struct {
			ID, VMID, From, To, Reason, Transition, Actor, At string
		}
		chain := func(evs []ev, upper bool) string {
			var parts []string
			for _, e := range evs {
				from, to := e.From, e.To
				if upper {
					from, to = strings.ToLower(from), strings.ToLower(to)
				}
				parts = append(parts, fmt.Sprintf("%s→%s %s %s", from, to, e.Transition, e.Reason))
				if e.Actor != actor || e.VMID != "vm-a" || !strings.HasSuffix(e.At, "Z") {
					t.Errorf("event %+v: want actor %s, vmId vm-a, an RFC 3339 UTC time", e, actor)
				}
			}
			return strings.Join(parts, "|")
		}

		var rest struct {
			Events []ev
			Next   string
		}
		status, b := env.Do("GET", "/v1/vms/vm-a/events", "acme-reader", nil, nil)
		_ = json.Unmarshal(b, &rest)
		if status != 200 || chain(rest.Events, false) != wantChain || rest.Next != "" {
			t.Fatalf("REST events = %d %s", status, b)
		}
		// Paging: two at a time, next is the after of the following page.
		rest.Events, rest.Next = nil, ""
		_, b = env.Do("GET", "/v1/vms/vm-a/events?limit=2", "acme-reader", nil, nil)
		_ = json.Unmarshal(b, &rest)
		first := rest
		rest.Events, rest.Next = nil, ""
		_, b = env.Do("GET", "/v1/vms/vm-a/events?limit=2&after="+first.Next, "acme-reader", nil, nil)
		_ = json.Unmarshal(b, &rest)
		if len(first.Events) != 2 || first.Next != first.Events[1].ID || chain(append(first.Events, rest.Events...), false) != wantChain || rest.Next != "" {
			t.Errorf("pages = %+v then %s", first, b)
		}

		var g struct {
			VM *struct{ Events []ev }
		}
		env.Decode(env.GraphQL("acme-reader", `{ vm(id: "vm-a") { events { id vmId from to reason transition actor at } } }`, nil), &g)
		if g.VM == nil || chain(g.VM.Events, true) != wantChain {
			t.Errorf("GraphQL events = %+v", g.VM)
		}
		for i, e := range append(first.Events, rest.Events...) {
			if g.VM.Events[i].ID != e.ID || g.VM.Events[i].At != e.At {
				t.Errorf("GraphQL event %d = %+v, REST's %+v", i, g.VM.Events[i], e)
			}
		}
		env.Decode(env.GraphQL("acme-reader", `{ vm(id: "vm-a") { events(after: "`+first.Next+`", limit: 1) { transition } } }`, nil), &g)
		if len(g.VM.Events) != 1 || g.VM.Events[0].Transition != "restart-deploy" {
			t.Errorf("GraphQL page = %+v", g.VM.Events)
		}

		// Tenancy: globex's VM is not acme's to read, on either face.
		if status, b := env.Do("GET", "/v1/vms/vm-g/events", "acme-reader", nil, nil); status != 404 || !strings.Contains(string(b), "VM_NOT_FOUND") {
			t.Errorf("another organization's events = %d %s", status, b)
		}
		r := env.GraphQL("acme-reader", `{ vm(id: "vm-g") { events { id } } }`, nil)
		if len(r.Errors) != 0 || string(r.Data) != `{"vm":null}` {
			t.Errorf("GraphQL another organization's VM = %s %v", r.Data, r.Errors)
		}
		for _, q := range []string{"?limit=0", "?limit=501", "?after=-1", "?after=x"} {
			if status, b := env.Do("GET", "/v1/vms/vm-a/events"+q, "acme-reader", nil, nil); status != 400 {
				t.Errorf("events%s = %d %s, want 400", q, status, b)
			}
		}
		if r := env.GraphQL("acme-reader", `{ vm(id: "vm-a") { events(after: "x") { id } } }`, nil); r.Code() != "BAD_REQUEST" {
			t.Errorf("GraphQL bad after: %+v", r.Errors)
		}
	})
}

// A page of VMs with their events costs one statement more than the page
// without them, whatever the number of VMs.
func TestVMEventsOneStatementPerLevel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		for i := range 12 {
			addVM(f, vmSpec{id: fmt.Sprintf("vm-%02d", i), node: "n6", status: "running", cpu: 1, ram: 1, disk: 1})
		}
		resetOps(t, st, f)
		for i := range 12 {
			if status, b := env.Do("POST", fmt.Sprintf("/v1/vms/vm-%02d/stop", i), "acme-operator", nil, nil); status != 200 {
				t.Fatalf("stop: %d %s", status, b)
			}
		}
		count := func(limit int, withEvents bool) int64 {
			sel := "id"
			if withEvents {
				sel = "id events { id actor }"
			}
			q := fmt.Sprintf(`{ vms(limit: %d) { vms { %s } } }`, limit, sel)
			return env.Statements(func() {
				r := env.GraphQL("acme-reader", q, nil)
				if len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", q, r.Errors)
				}
			})
		}
		small, big := count(2, true)-count(2, false), count(12, true)-count(12, false)
		if small != 1 || big != 1 {
			t.Errorf("events of a page cost %d statements for 2 VMs and %d for 12, want 1", small, big)
		}
	})
}
