package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// A VM transition's NOTIFY is sent after its commit, not queued in its
// transaction (where PostgreSQL would hold a lock of the whole cluster
// through the commit, serializing every transition), and it still wakes
// the listeners of another process on the same database.
func TestVMEventsNotifyAfterCommit(t *testing.T) {
	if storetest.URL(t, store.Postgres) == "" {
		t.Skip("PostgreSQL only: SQLite wakes its listeners in process")
	}
	reps := storetest.Replicas(t, store.Postgres, 2)
	writer, other := reps[0], reps[1]
	storetest.Exec(t, writer, `INSERT INTO organizations (id, name, tenant_id) VALUES ('o-1', 'O 1', 1)`)
	storetest.Exec(t, writer, `INSERT INTO vms (id, name, organization_id, status) VALUES ('vm-1', 'vm-1', 'o-1', 'running')`)

	wake, stop := other.Notifications().Wake(store.TopicVMEvents)
	defer stop()
	drain(wake)
	count := storetest.CountStatements(t, writer)
	ctx := context.Background()
	stmts := count.Record(func() {
		err := writer.InTx(ctx, func(tx *store.Txn) error {
			vm, err := writer.LockVM(tx, "o-1", "vm-1")
			if err != nil {
				return err
			}
			now := store.Now()
			_, err = writer.Apply(tx, vm, store.Change{Transition: models.NodeLeaving,
				Actor: models.Actor{Kind: models.ActorSweep}, Detail: models.LeavingDetail(now)}, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	for _, s := range stmts {
		if strings.Contains(s.SQL, "pg_notify") {
			t.Errorf("the transition's transaction notifies: %s", s.SQL)
		}
	}
	if storetest.Count(t, writer, "vm_events", "vm_id = 'vm-1'") != 1 {
		t.Fatal("no event appended")
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the other process's listener was not woken by the committed transition")
	}
}

// drain empties a wake-up channel of what its subscription was sent on
// connecting.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}
