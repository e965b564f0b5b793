package live_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// nodeWorld is liveWorld's (n running VMs of Acme on n1, vm-g of Globex
// there too) with the platform operator's organization and key, and both
// event logs empty.
func nodeWorld(t *testing.T, st *store.Store, n int) {
	t.Helper()
	f := liveFixture(n)
	f.Organizations = append(f.Organizations, models.Organization{ID: "org-platform", Name: "Platform", TenantID: 9000})
	f.APIKeys = append(f.APIKeys,
		dataset.APIKey{Token: "platform-admin", OrganizationID: "org-platform", Permissions: []string{"nodes.admin", "compute.read"}})
	servertest.ResetOps(t, st, f)
}

const nodeEventsQuery = `subscription($ids: [ID!], $after: ID) { nodeEvents(ids: $ids, after: $after) {
	id nodeId kind fromStatus toStatus fromLeavingAt toLeavingAt gpuId fromHealth toHealth failedReason actor
	node { id status vms { id } gpus { id vm { id } } } } }`

// gotNodeEvent is one nodeEvents message.
type gotNodeEvent struct {
	ID, NodeID, Kind, Actor                    string
	FromStatus, ToStatus, FromHealth, ToHealth *string
	FromLeavingAt, ToLeavingAt, GPUID          *string
	FailedReason                               *string
	Node                                       *struct {
		ID, Status string
		Vms        []struct{ ID string }
		GPUs       []struct {
			ID string
			VM *struct{ ID string }
		}
	}
}

func subscribeNodes(t *testing.T, srv *httptest.Server, token string, vars map[string]any) *servertest.WS {
	t.Helper()
	return servertest.Subscribe(t, srv.URL, token, nodeEventsQuery, vars)
}

// nodeEvents reads n node events, failing on anything else.
func nodeEvents(s *servertest.WS, n int) []gotNodeEvent {
	s.T.Helper()
	return servertest.NextData(s, n, func(d struct{ NodeEvents gotNodeEvent }) gotNodeEvent { return d.NodeEvents })
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// summary is an event as node:kind:from>to (gpu and reason for GPU_HEALTH).
func (e gotNodeEvent) summary() string {
	switch e.Kind {
	case "STATUS":
		return e.NodeID + ":status:" + str(e.FromStatus) + ">" + str(e.ToStatus)
	case "LEAVING_AT":
		return e.NodeID + ":leavingAt:" + str(e.FromLeavingAt) + ">" + str(e.ToLeavingAt)
	}
	return e.NodeID + ":gpu:" + str(e.GPUID) + ":" + str(e.FromHealth) + ">" + str(e.ToHealth) + ":" + str(e.FailedReason)
}

func summaries(evs []gotNodeEvent) string {
	var b []string
	for _, e := range evs {
		b = append(b, e.summary())
	}
	return strings.Join(b, " ")
}

// A GPU an agent reports failed reaches a subscriber once, with its XID,
// when the heartbeat that carries it commits; the sweep and the operator's
// changes follow, each once and in order; every organization's subscriber
// sees the shared node, but only its own allocations on it.
func TestLiveNodeEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		nodeWorld(t, st, 2)
		srv := liveServer(t, st, nil)
		n1, n3 := servertest.NodeCredential(t, st, "gpu-node-1", "c1"), servertest.NodeCredential(t, st, "gpu-node-3", "c1")
		acme := subscribeNodes(t, srv, "acme-reader", nil)
		globex := subscribeNodes(t, srv, "globex-operator", nil)
		only3 := subscribeNodes(t, srv, "acme-reader", map[string]any{"ids": []string{"n3"}})
		time.Sleep(100 * time.Millisecond)

		servertest.WorldHeartbeat(t, srv.URL, n1, "n1", 8, 3, "XID 79")
		got := nodeEvents(acme, 1)
		if want := "n1:gpu:n1-g3:HEALTHY>FAILED:XID 79"; summaries(got) != want {
			t.Fatalf("acme got %s, want %s", summaries(got), want)
		}
		if got[0].Actor != "agent gpu-node-1" {
			t.Errorf("actor %q", got[0].Actor)
		}
		// The node as each organization may see it: its own VMs only, and
		// no holder on a GPU another organization holds.
		if vms := vmIDs(got[0]); vms != "vm-0 vm-1" {
			t.Errorf("acme sees vms %s on n1", vms)
		}
		g := nodeEvents(globex, 1)
		if g[0].summary() != got[0].summary() || g[0].ID != got[0].ID {
			t.Errorf("globex got %s", summaries(g))
		}
		if vms := vmIDs(g[0]); vms != "vm-g" {
			t.Errorf("globex sees vms %s on n1", vms)
		}
		for _, gpu := range g[0].Node.GPUs {
			if gpu.VM != nil && gpu.VM.ID != "vm-g" {
				t.Errorf("globex sees %s on GPU %s", gpu.VM.ID, gpu.ID)
			}
		}
		// The same failure reported again changes nothing: the next
		// events below are the sweep's.
		servertest.WorldHeartbeat(t, srv.URL, n1, "n1", 8, 3, "XID 79")

		// The sweep takes silent n3 offline; its next heartbeat brings it back.
		old := store.Now().Add(-time.Hour)
		storetest.Exec(t, st, "UPDATE nodes SET last_heartbeat_at = ? WHERE id = 'n3'", old)
		if _, err := sweep.New(st).Sweep(context.Background(), store.Now(), 30*time.Second); err != nil {
			t.Fatal(err)
		}
		servertest.WorldHeartbeat(t, srv.URL, n3, "n3", 4, -1, "")
		// The operator decommissions n6, then changes its mind.
		leavingAt := store.Now().Add(48 * time.Hour).Truncate(time.Second)
		at := models.FormatTime(leavingAt)
		leave := `mutation($at: Time) { setNodeLeavingAt(id: "n6", leavingAt: $at) { workloadsChanged } }`
		servertest.GQLDo(t, srv.URL, "platform-admin", leave, map[string]any{"at": leavingAt.Format(time.RFC3339)})
		servertest.GQLDo(t, srv.URL, "platform-admin", leave, map[string]any{"at": nil})

		got = nodeEvents(acme, 4)
		wantAll := "n3:status:ONLINE>OFFLINE n3:status:OFFLINE>ONLINE n6:leavingAt:null>" + at + " n6:leavingAt:" + at + ">null"
		if summaries(got) != wantAll {
			t.Fatalf("acme got\n%s\nwant\n%s", summaries(got), wantAll)
		}
		if got[0].Actor != "sweep" || got[1].Actor != "agent gpu-node-3" || !strings.HasPrefix(got[2].Actor, "operator key:") {
			t.Errorf("actors %s, %s, %s", got[0].Actor, got[1].Actor, got[2].Actor)
		}
		for i := 1; i < len(got); i++ {
			if atoi(t, got[i].ID) <= atoi(t, got[i-1].ID) {
				t.Errorf("ids out of order: %s after %s", got[i].ID, got[i-1].ID)
			}
		}
		acme.Quiet()
		if g := nodeEvents(only3, 2); summaries(g) != "n3:status:ONLINE>OFFLINE n3:status:OFFLINE>ONLINE" {
			t.Errorf("ids filter: %s", summaries(g))
		}
		only3.Quiet()
		// The node's VM transitions are vmEvents', not here: n3's sweep
		// moved none, and acme saw exactly the events above.

		// Resume after the first event: the log from there, then live.
		r := subscribeNodes(t, srv, "acme-reader", map[string]any{"after": got[0].ID})
		if g := nodeEvents(r, 3); summaries(g) != strings.Join(strings.Split(wantAll, " ")[1:], " ") {
			t.Fatalf("replay %s", summaries(g))
		}
		servertest.WorldHeartbeat(t, srv.URL, n3, "n3", 4, 0, "XID 48")
		if g := nodeEvents(r, 1); summaries(g) != "n3:gpu:n3-g0:HEALTHY>FAILED:XID 48" {
			t.Fatalf("live after replay %s", summaries(g))
		}
		r.Quiet()
	})
}

func vmIDs(e gotNodeEvent) string {
	if e.Node == nil {
		return "no node"
	}
	var b []string
	for _, v := range e.Node.Vms {
		b = append(b, v.ID)
	}
	return strings.Join(b, " ")
}
