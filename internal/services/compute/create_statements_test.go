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
