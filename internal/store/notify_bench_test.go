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

// The price of the event log's advisory lock on PostgreSQL: every
// transition appends its event under one lock held to commit, so
// transitions of different VMs, which share no row, still commit one at a
// time. Each iteration is one transaction locking one running VM and
// applying node-leaving to it (one row written, one event appended); with
// 1 client nothing contends, with 16 every client has its own VMs and
// contends on the lock only (each client's VMs are its own organization's,
// so seqs are drawn apart). "without lock" is the same with the lock
// dropped (ids may then commit out of order): the difference is its cost.
func BenchmarkEventAppendLock(b *testing.B) {
	for _, lock := range []bool{true, false} {
		for _, clients := range []int{1, 16} {
			name := fmt.Sprintf("with lock/clients=%d", clients)
			if !lock {
				name = fmt.Sprintf("without lock/clients=%d", clients)
			}
			b.Run(name, func(b *testing.B) {
				st := storetest.Open(b, store.Postgres)
				if !lock {
					st.WithoutEventLogLock()
				}
				benchTransitions(b, st, clients)
			})
		}
	}
}

func benchTransitions(b *testing.B, st *store.Store, clients int) {
	ctx := context.Background()
	const perClient = 4
	// Each client's VMs are its own organization's: without the lock, two
	// appends to one organization could draw one seq.
	for c := range clients {
		if err := st.DB.Exec(`INSERT INTO organizations (id, name, tenant_id) VALUES (?, ?, ?)`,
			fmt.Sprintf("o-%d", c), fmt.Sprintf("O %d", c), c+1).Error; err != nil {
			b.Fatal(err)
		}
	}
	for i := range clients * perClient {
		if err := st.DB.Exec(`INSERT INTO vms (id, name, organization_id, status) VALUES (?, ?, ?, 'running')`,
			fmt.Sprintf("vm-%d", i), fmt.Sprintf("vm-%d", i), fmt.Sprintf("o-%d", i/perClient)).Error; err != nil {
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
					vm, err := st.LockVM(tx, "o", id)
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
