package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// opCall is a stop or terminate through one face; it answers the HTTP
// status (GraphQL: extensions.status), the error code and message, and the
// VM object of a success.
func opCall(t *testing.T, env *servertest.Env, op, id, token string, graphql bool) (int, string, string, map[string]any) {
	t.Helper()
	if graphql {
		field := map[string]string{"stop": "stopVm", "terminate": "terminateVm"}[op]
		r := env.GraphQL(token, `mutation($id: ID!) { `+field+`(id: $id) { id status statusReason nodeId gpuIds events { from to transition actor reason } } }`,
			map[string]any{"id": id})
		if len(r.Errors) > 0 {
			s, _ := r.Errors[0].Extensions["status"].(float64)
			return int(s), r.Code(), r.Errors[0].Message, nil
		}
		var got map[string]map[string]any
		env.Decode(r, &got)
		return 200, "", "", got[field]
	}
	method, path := http.MethodPost, "/v1/vms/"+id+"/stop"
	if op == "terminate" {
		method, path = http.MethodDelete, "/v1/vms/"+id
	}
	status, b := env.Do(method, path, token, nil, nil)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	if status != 200 {
		e, _ := body["error"].(map[string]any)
		if e == nil || len(body) != 1 {
			t.Fatalf("error body = %s, want {\"error\": {...}}", b)
		}
		code, _ := e["code"].(string)
		msg, _ := e["message"].(string)
		return status, code, msg, nil
	}
	return status, "", "", body
}

// Stop and terminate from every status, on both faces and both engines:
// what the row says afterwards, what it holds, and the event it logged.
func TestStopAndTerminate(t *testing.T) {
	type tc struct {
		op, from string
		pod      bool
		status   int
		code     string
	}
	var cases []tc
	for _, from := range models.VMStatuses {
		stop := tc{op: "stop", from: string(from), status: 200}
		switch from {
		case models.VMPending, models.VMStopped, models.VMFailed:
			stop.status, stop.code = 409, "VM_NOT_RUNNING"
		case models.VMTerminated:
			stop.status, stop.code = 409, "VM_TERMINATED"
		}
		term := tc{op: "terminate", from: string(from), status: 200}
		if from == models.VMTerminated {
			term.status, term.code = 409, "VM_TERMINATED"
		}
		cases = append(cases, stop, term)
		if from == models.VMRunning || from == models.VMInterrupted {
			cases = append(cases, tc{op: "stop", from: string(from), pod: true, status: 200},
				tc{op: "terminate", from: string(from), pod: true, status: 200})
		}
	}

	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		for _, c := range cases {
			for _, graphql := range []bool{false, true} {
				name := c.op + " " + c.from
				if c.pod {
					name += " pod"
				}
				if graphql {
					name += " (GraphQL)"
				}
				t.Run(name, func(t *testing.T) {
					f := newWorld()
					spec := vmSpec{id: "vm-x", node: "n1", status: c.from, model: h100, gpus: 2, cpu: 8, ram: 64, disk: 100, pod: c.pod}
					if models.VMStatus(c.from).Holds() {
						spec.held = []string{"n1-g0", "n1-g1"}
					}
					if c.from == "pending" {
						spec.node = ""
					}
					if c.from == "interrupted" {
						spec.reason = "node_lost"
					}
					addVM(f, spec)
					addVM(f, vmSpec{id: "vm-other", node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g2"}, cpu: 4, ram: 8, disk: 10})
					resetOps(t, st, f)
					before := vmRow(t, st, "vm-x")

					status, code, msg, body := opCall(t, env, c.op, "vm-x", "acme-operator", graphql)
					if status != c.status || code != c.code {
						t.Fatalf("answer %d %s %q, want %d %s", status, code, msg, c.status, c.code)
					}
					h := holders(t, st)
					if h["n1-g2"] != "vm-other" {
						t.Errorf("another VM's GPU changed: %v", h)
					}
					if c.code != "" {
						if !strings.Contains(msg, "vm-x") {
							t.Errorf("message %q does not name the VM", msg)
						}
						if now := vmRow(t, st, "vm-x"); snap(now) != snap(before) || len(eventsOf(t, st, "vm-x")) != 0 {
							t.Errorf("a refusal changed the row or logged an event: %+v", snap(now))
						}
						return
					}

					want, reason, transition := models.VMStopped, models.ReasonUserStopped, models.UserStop
					if c.op == "terminate" {
						want, reason, transition = models.VMTerminated, models.ReasonUserTerminated, models.UserTerminate
					}
					v := vmRow(t, st, "vm-x")
					if v.Status != want || v.StatusReason != reason || v.InterruptedAt != nil {
						t.Errorf("row: %s %q interruptedAt %v, want %s %q", v.Status, v.StatusReason, v.InterruptedAt, want, reason)
					}
					// The disk or volume stays where it was: nodeId kept.
					if (v.NodeID == nil) != (before.NodeID == nil) || (v.NodeID != nil && *v.NodeID != *before.NodeID) {
						t.Errorf("node %v, was %v", v.NodeID, before.NodeID)
					}
					if held := heldBy(h, "vm-x"); len(held) != 0 {
						t.Errorf("still holds GPUs %v", held)
					}
					shares, addresses := heldOn(t, st, "n1")
					if strings.Join(shares, ",") != "vm-other" || len(addresses) != 0 {
						t.Errorf("held on n1 afterwards: host shares %v, addresses %v", shares, addresses)
					}

					evs := eventsOf(t, st, "vm-x")
					actor := keyActor("acme-operator")
					if len(evs) != 1 {
						t.Fatalf("events = %+v, want one", evs)
					}
					if e := evs[0]; e.From != models.VMStatus(c.from) || e.To != want || e.Reason != reason ||
						e.Transition != transition || e.Actor() != actor || e.OrganizationID != "org-acme" {
						t.Errorf("event = %+v, want %s→%s %s by %s", e, c.from, want, transition, actor)
					}

					wantStatus := string(want)
					if graphql {
						wantStatus = strings.ToUpper(wantStatus)
					}
					if body["id"] != "vm-x" || body["status"] != wantStatus || body["statusReason"] != reason ||
						len(body["gpuIds"].([]any)) != 0 {
						t.Errorf("answer = %v", body)
					}
					if graphql {
						evs := body["events"].([]any)
						if len(evs) != 1 || evs[0].(map[string]any)["actor"] != actor.String() {
							t.Errorf("answer's events = %v, want the one just logged, by %s", evs, actor)
						}
					} else if _, ok := body["gpuManufacturer"]; !ok {
						t.Errorf("REST answer lacks the seed's gpuManufacturer: %v", body)
					}
				})
			}
		}
	})
}

// The refusals every VM operation shares: missing, another organization's,
// a serving replica, no key, a key that may only read.
func TestStopAndTerminateRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := newWorld()
		addVM(f, vmSpec{id: "vm-globex", org: "org-globex", node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g0"}})
		addVM(f, vmSpec{id: "vm-serve", node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g1"}, managedBy: "serving"})
		addVM(f, vmSpec{id: "vm-a", node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g2"}})
		resetOps(t, st, f)
		for _, op := range []string{"stop", "terminate"} {
			for _, graphql := range []bool{false, true} {
				for _, r := range []struct {
					id, token string
					status    int
					code      string
					msg       string
				}{
					{"vm-nope", "acme-operator", 404, "VM_NOT_FOUND", `"vm-nope"`},
					{"vm-globex", "acme-operator", 404, "VM_NOT_FOUND", `"vm-globex"`},
					{"vm-serve", "acme-operator", 403, "VM_READ_ONLY", "serving deployment"},
					{"vm-a", "acme-reader", 403, "FORBIDDEN", "compute.operate"},
					{"vm-a", "", 401, "UNAUTHENTICATED", "API key"},
				} {
					status, code, msg, _ := opCall(t, env, op, r.id, r.token, graphql)
					if status != r.status || code != r.code || !strings.Contains(msg, r.msg) {
						t.Errorf("%s %s as %q (graphql %v) = %d %s %q, want %d %s …%s…", op, r.id, r.token, graphql,
							status, code, msg, r.status, r.code, r.msg)
					}
				}
			}
		}
		n := storetest.Count(t, st, "vm_events", "")
		if h := holders(t, st); n != 0 || len(h) != 3 {
			t.Errorf("refusals changed something: %d events, holders %v", n, h)
		}
	})
}
