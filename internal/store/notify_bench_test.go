package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// What the event log's order costs on PostgreSQL (decision 0047). Each
// iteration is one transaction locking one running VM and applying
// node-leaving to it (one row written, one event appended). Each log
// orders itself: a VM event's seq is drawn from its organization's counter
// row, held to commit, so transitions of one organization commit one at a
// time while those of different organizations do not wait for each other.
//
//   - orgs=16: every client has its own VMs in its own organization; they
//     share no row, so only the commit itself is shared.
//   - orgs=1: the 16 clients' VMs are all one organization's: they queue
//     on its counter row from the draw to the commit, the bound of one
//     organization's rate.
//   - "notify in the transaction": orgs=16 with the NOTIFY queued in the
//     transaction, as before noteAfterCommit: PostgreSQL then holds a lock
//     of the whole cluster from each commit's start to its end.
//   - "global lock": orgs=16 with the one advisory lock every append took
//     before (taken at the same point, the transaction's tail) and the
//     NOTIFY in the transaction, to compare with how it was.
func BenchmarkEventAppendLock(b *testing.B) {
	for _, c := range []struct {
		name          string
		clients, orgs int
		globalLockToo bool
		notifyInTx    bool
	}{
		{"per-org order/clients=1", 1, 1, false, false},
		{"per-org order/clients=16/orgs=16", 16, 16, false, false},
		{"per-org order/clients=16/orgs=1", 16, 1, false, false},
		{"notify in the transaction/clients=16/orgs=16", 16, 16, false, true},
		{"global lock/clients=16/orgs=16", 16, 16, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := storetest.Open(b, store.Postgres)
			if c.globalLockToo {
				st.WithGlobalEventLock()
			}
			if c.notifyInTx {
				st.WithNotifyInTx()
			}
			benchTransitions(b, st, c.clients, c.orgs)
		})
	}
}

func benchTransitions(b *testing.B, st *store.Store, clients, orgs int) {
	ctx := context.Background()
	const perClient = 4
	for o := range orgs {
		if err := st.DB.Exec(`INSERT INTO organizations (id, name, tenant_id) VALUES (?, ?, ?)`,
			fmt.Sprintf("o-%d", o), fmt.Sprintf("O %d", o), o+1).Error; err != nil {
			b.Fatal(err)
		}
	}
	orgOf := func(client int) string { return fmt.Sprintf("o-%d", client%orgs) }
	for i := range clients * perClient {
		if err := st.DB.Exec(`INSERT INTO vms (id, name, organization_id, status) VALUES (?, ?, ?, 'running')`,
			fmt.Sprintf("vm-%d", i), fmt.Sprintf("vm-%d", i), orgOf(i/perClient)).Error; err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				id := fmt.Sprintf("vm-%d", c*perClient+i%perClient)
				now := store.Now()
				ch := store.Change{Transition: models.NodeLeaving, Actor: models.Actor{Kind: models.ActorSweep},
					Detail: models.LeavingDetail(now)}
				err := st.InTx(ctx, func(tx *store.Txn) error {
					vm, err := st.LockVM(tx, orgOf(c), id)
					if err != nil {
						return err
					}
					_, err = st.Apply(tx, vm, ch, now)
					return err
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
}
