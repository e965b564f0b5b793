package fleet_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/fleet"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// operators adds a platform operator's key to the fixture: nodes.admin,
// held by org-acme's operator.
const operators = `{"apiKeys": [{"token": "acme-ops", "organizationId": "org-acme", "permissions": ["nodes.admin"]}]}`

func setup(t *testing.T, st *store.Store) (*fleet.Service, *auth.Caller) {
	t.Helper()
	datasettest.Load(t, st, operators)
	return fleet.New(st), datasettest.Caller(t, st, "acme-ops")
}

// vm reads one VM of org as it stands.
func vm(t *testing.T, st *store.Store, org, id string) *models.VM {
	t.Helper()
	list, err := st.VMsByIDs(context.Background(), org, []string{id}, nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("read %s of %s: %v %v", id, org, list, err)
	}
	return list[0]
}

// Suspending an organization stops its running workloads with the
// suspension's reason, and no other organization's; active reinstates it
// and starts nothing; deleted is final.
func TestSetOrganizationState(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, ops := setup(t, st)
		ch, err := svc.SetOrganizationState(ctx, ops, "org-globex", models.OrgStateSuspended)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Organization.ID != "org-globex" || ch.Organization.State != models.OrgStateSuspended || ch.Stopped != 1 {
			t.Errorf("suspend org-globex: %+v, stopped %d, want suspended and 1 stopped", ch.Organization, ch.Stopped)
		}
		if g := vm(t, st, "org-globex", "vm-globex-1"); g.Status != models.VMStopped || g.StatusReason != models.ReasonAccountSuspended {
			t.Errorf("vm-globex-1 after the suspension: %s %q", g.Status, g.StatusReason)
		}
		if a := vm(t, st, "org-acme", "vm-acme-1"); a.Status != models.VMRunning {
			t.Errorf("acme's vm-acme-1 after globex's suspension: %s", a.Status)
		}
		ch, err = svc.SetOrganizationState(ctx, ops, "org-globex", models.OrgStateActive)
		if err != nil || ch.Organization.State != models.OrgStateActive || ch.Stopped != 0 {
			t.Fatalf("reinstate: %+v %v", ch, err)
		}
		if g := vm(t, st, "org-globex", "vm-globex-1"); g.Status != models.VMStopped {
			t.Errorf("reinstating started vm-globex-1: %s", g.Status)
		}
		if _, err := svc.SetOrganizationState(ctx, ops, "org-globex", models.OrgStateDeleted); err != nil {
			t.Fatal(err)
		}
		_, err = svc.SetOrganizationState(ctx, ops, "org-globex", models.OrgStateActive)
		datasettest.WantError(t, err, 409, fleet.CodeOrganizationDeleted, "organization org-globex is deleted; deletion is final")

		_, err = svc.SetOrganizationState(ctx, ops, "org-initech", models.OrgStateSuspended)
		datasettest.WantError(t, err, 404, fleet.CodeOrganizationNotFound, `there is no organization "org-initech"`)
		_, err = svc.SetOrganizationState(ctx, ops, "org-acme", models.OrgStateSuspended)
		datasettest.WantError(t, err, 409, fleet.CodeOwnOrganization, "organization org-acme is the operator's own; its state stays active so its keys keep working")
		_, err = svc.SetOrganizationState(ctx, ops, "org-acme", "paused")
		datasettest.WantError(t, err, 400, "BAD_REQUEST", `state "paused" is not one of active, suspended, balance_exhausted, deleted`)
	})
}

// A leavingAt marks the node's running workloads with it; clearing it
// takes the mark off again. It must be in the future, on a node that
// exists.
func TestSetLeavingAt(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, ops := setup(t, st)
		at := store.Now().Add(time.Hour).Add(300 * time.Millisecond)
		ch, err := svc.SetLeavingAt(ctx, ops, "n1", &at)
		if err != nil {
			t.Fatal(err)
		}
		want := at.UTC().Truncate(time.Second)
		// n1 runs vm-acme-1, pod-acme-1 and vm-globex-1; vm-acme-2 is stopped.
		if ch.Node.ID != "n1" || ch.Node.LeavingAt == nil || !ch.Node.LeavingAt.Equal(want) || ch.Workloads != 3 {
			t.Errorf("leave n1: %+v moved %d, want leavingAt %s and 3 workloads", ch.Node, ch.Workloads, want)
		}
		if g := vm(t, st, "org-globex", "vm-globex-1"); g.Status != models.VMRunning || g.StatusReason != models.LeavingReason(want) {
			t.Errorf("vm-globex-1: %s %q, want running %q", g.Status, g.StatusReason, models.LeavingReason(want))
		}
		if s := vm(t, st, "org-acme", "vm-acme-2"); s.StatusReason != "user_stopped" {
			t.Errorf("the stopped vm-acme-2: %q", s.StatusReason)
		}
		ch, err = svc.SetLeavingAt(ctx, ops, "n1", nil)
		if err != nil || ch.Node.LeavingAt != nil || ch.Workloads != 3 {
			t.Fatalf("clear n1's leavingAt: %+v %v", ch, err)
		}
		if g := vm(t, st, "org-globex", "vm-globex-1"); g.Status != models.VMRunning || g.StatusReason != "" {
			t.Errorf("vm-globex-1 after clearing: %s %q", g.Status, g.StatusReason)
		}

		past := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
		_, err = svc.SetLeavingAt(ctx, ops, "n1", &past)
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "leavingAt 2024-01-02T03:04:05Z is not in the future; a node leaves at a time still to come")
		_, err = svc.SetLeavingAt(ctx, ops, "n9", &at)
		datasettest.WantError(t, err, 404, fleet.CodeNodeNotFound, `there is no node "n9"`)
	})
}

// Reclaiming stops the node's interruptible workloads only: the fixture's
// are on demand, so nothing stops.
func TestReclaim(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, ops := setup(t, st)
		ch, err := svc.Reclaim(ctx, ops, "n1")
		if err != nil || ch.Node.ID != "n1" || ch.Workloads != 0 {
			t.Fatalf("reclaim n1: %+v %v", ch, err)
		}
		if p := vm(t, st, "org-acme", "pod-acme-1"); p.Status != models.VMRunning {
			t.Errorf("the on-demand pod-acme-1 after a reclaim: %s", p.Status)
		}
		_, err = svc.Reclaim(ctx, ops, "n9")
		datasettest.WantError(t, err, 404, fleet.CodeNodeNotFound, `there is no node "n9"`)
	})
}

// Every operator's path needs nodes.admin: an organization's operator
// without it gets the 403 naming it (before a bad state's 400), no caller
// the 401, and nothing changes.
func TestOperatorsPathsNeedNodesAdmin(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc, _ := setup(t, st)
		at := store.Now().Add(time.Hour)
		for _, c := range []struct {
			caller *auth.Caller
			status int
			code   string
			msg    string
		}{
			{datasettest.Caller(t, st, "acme-operator"), 403, "FORBIDDEN", "this API key lacks the nodes.admin permission"},
			{nil, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>"},
		} {
			_, err := svc.SetOrganizationState(ctx, c.caller, "org-globex", "paused")
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.SetLeavingAt(ctx, c.caller, "n1", &at)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Reclaim(ctx, c.caller, "n1")
			datasettest.WantError(t, err, c.status, c.code, c.msg)
		}
		if g := vm(t, st, "org-globex", "vm-globex-1"); g.Status != models.VMRunning || g.StatusReason != "" {
			t.Errorf("vm-globex-1 after refused changes: %s %q", g.Status, g.StatusReason)
		}
	})
}
