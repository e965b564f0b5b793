package compute_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// TestCreateStatements pins what one placed create costs in statements,
// so that a statement more fails here: a VM of 2 H100s lands on node-2 (no
// fabric). Counted by sqlcount, which also counts each of the three
// subqueries gorm builds into the candidate read, so the database runs 3
// fewer than counted: 16 on either engine (the instance types, then in
// the transaction the model, the organization, the candidates, the row's
// insert, the quota, the savepoint, the candidate's snapshot locked by
// its node read (node, GPUs, host shares), the GPU claim returning the
// GPUs, the row's update, its volume, the release, and at the
// transaction's tail the event's counter (with the notification on
// PostgreSQL) and the event itself: decision 0047).
func TestCreateStatements(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		want := map[store.Dialect]int64{store.SQLite: 19, store.Postgres: 19}[st.Dialect]
		caller := datasettest.Caller(t, st, "b-op")
		count := storetest.CountStatements(t, st)
		var res *compute.Result
		var err error
		stmts := count.Record(func() {
			res, err = cs.Create(context.Background(), caller, vmReq("counted", 2))
		})
		if err != nil || res.VM.Status != models.VMDeploying || *res.VM.NodeID != "n2" ||
			fmt.Sprint(gpuIDs(res)) != "[n2-g0 n2-g1]" {
			t.Fatalf("create: %+v %v, want deploying on n2 holding n2-g0 n2-g1", res, err)
		}
		if int64(len(stmts)) != want {
			var b strings.Builder
			for _, s := range stmts {
				fmt.Fprintf(&b, "\n  %.100s", s.SQL)
			}
			t.Errorf("a placed create ran %d statements, want %d:%s", len(stmts), want, b.String())
		}
	})
}

// TestQueuedCreateReadsOnlyWhatChanged: a create that nothing fits (node-1
// full, node-2 with 3 healthy GPUs, node-3 offline) reads its "0/N nodes"
// summary from the replica's copy of the fleet, which a first such create
// filled; the next one reads the fleet's changes since
// (one statement) and the nodes changed (here node-2, where a VM was
// placed in between), not every node and GPU again: one statement of the
// changes on PostgreSQL (two on SQLite, whose one writer lets them be
// apart). Its answer is the summary a fresh copy gives.
func TestQueuedCreateReadsOnlyWhatChanged(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		caller := datasettest.Caller(t, st, "b-op")
		if res, err := cs.Create(ctx, caller, vmReq("fills-node-1", 4)); err != nil || *res.VM.NodeID != "n1" {
			t.Fatalf("fills-node-1: %+v %v, want placed on n1", res, err)
		}
		if res, err := cs.Create(ctx, caller, vmReq("first", 4)); err != nil || res.VM.Status != models.VMPending {
			t.Fatalf("first: %+v %v, want pending", res, err)
		}
		if res, err := cs.Create(ctx, caller, vmReq("between", 1)); err != nil || *res.VM.NodeID != "n2" {
			t.Fatalf("between: %+v %v, want placed on n2", res, err)
		}
		count := storetest.CountStatements(t, st)
		var res *compute.Result
		var err error
		stmts := count.Record(func() {
			res, err = cs.Create(ctx, caller, vmReq("counted", 4))
		})
		const want = "0/3 nodes can take it: 2 too few free NVIDIA H100 GPUs, 1 offline"
		if err != nil || res.VM.Status != models.VMPending || res.VM.StatusReason != want {
			t.Fatalf("create: %+v %v, want pending: %s", res, err, want)
		}
		fresh, err := compute.New(st).Create(ctx, caller, vmReq("fresh", 4))
		if err != nil || fresh.VM.StatusReason != want {
			t.Fatalf("a fresh copy's create: %+v %v, want pending: %s", fresh, err, want)
		}
		// A Snapshot's reads of nodes and GPUs, by their columns.
		unquote := strings.NewReplacer(`"`, "", "`", "")
		var nodeReads, changeReads []string
		for _, s := range stmts {
			q := unquote.Replace(s.SQL)
			switch {
			case strings.Contains(q, "FROM fleet_changes"):
				changeReads = append(changeReads, q)
			case strings.HasPrefix(q, "SELECT id,name,cluster_id,") || strings.HasPrefix(q, "SELECT id,node_id,idx,"):
				nodeReads = append(nodeReads, q)
			}
		}
		wantChangeReads := map[store.Dialect]int{store.SQLite: 2, store.Postgres: 1}[st.Dialect]
		if len(changeReads) != wantChangeReads || len(nodeReads) != 2 ||
			!strings.Contains(nodeReads[0], "WHERE id IN (") || !strings.Contains(nodeReads[1], "WHERE node_id IN (") {
			var b strings.Builder
			for _, s := range stmts {
				fmt.Fprintf(&b, "\n  %.160s", s.SQL)
			}
			t.Errorf("the fleet read %d changes' and %d nodes' or GPUs' statements, want %d and node-2's two (its node, its GPUs):%s",
				len(changeReads), len(nodeReads), wantChangeReads, b.String())
		}
	})
}
