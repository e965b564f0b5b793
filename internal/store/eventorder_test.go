package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Many writers append to the event logs at once, while readers resume each
// log from the last cursor they read, as a subscriber does with after: an
// organization's vmEvents by seq (several writers in one organization,
// and transactions that append to two organizations in either order), an
// organization's billingEvents by seq (two writers of one organization),
// the node log by id, and one VM's events by id (metering's cursor). A reader
// never sees a cursor below one it saw, so an event that committed after
// a greater cursor was read would be missed: each organization's seqs must
// come 1, 2, 3 … with no gap at every read, and at the end every reader
// has seen the whole log. Run it with -race on PostgreSQL (on SQLite the
// writers take turns).
func TestEventLogsResumeInCommitOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		orgs := []string{"o-a", "o-b", "o-c"}
		for i, o := range orgs {
			storetest.Exec(t, st, `INSERT INTO organizations (id, name, tenant_id) VALUES (?, ?, ?)`, o, o, i+1)
		}
		// Writers 0–3 are o-a's (several writers, one organization), 4–5
		// o-b's, 6–7 o-c's; each has its own VM, but writers 0 and 1 share
		// vm-0 (two writers of one VM).
		const writers, rounds = 8, 30
		orgOf := func(w int) string {
			switch {
			case w < 4:
				return "o-a"
			case w < 6:
				return "o-b"
			}
			return "o-c"
		}
		vmOf := func(w int) string {
			if w == 1 {
				return "vm-0"
			}
			return fmt.Sprintf("vm-%d", w)
		}
		for w := range writers {
			if w != 1 {
				storetest.Exec(t, st, `INSERT INTO vms (id, name, organization_id, status) VALUES (?, ?, ?, 'running')`,
					vmOf(w), vmOf(w), orgOf(w))
			}
		}
		lock := func(tx *store.Txn, w int) (*models.VM, error) {
			vm, err := st.LockVM(tx, orgOf(w), vmOf(w))
			if err == nil && vm == nil {
				err = fmt.Errorf("no %s", vmOf(w))
			}
			return vm, err
		}
		transition := func(tx *store.Txn, vm *models.VM) error {
			now := store.Now()
			_, err := st.Apply(tx, vm, store.Change{Transition: models.NodeLeaving,
				Actor: models.Actor{Kind: models.ActorSweep}, Detail: models.LeavingDetail(now)}, now)
			return err
		}
		nodeEvent := func(tx *store.Txn, w, r int) error {
			return st.AppendNodeEvents(tx, []*models.NodeEvent{{NodeID: fmt.Sprintf("n-%d", w), Kind: models.NodeEventStatus,
				ActorKind: models.ActorSweep, ActorID: fmt.Sprint(r), At: store.Now()}})
		}

		done := make(chan struct{})
		var writing sync.WaitGroup
		for w := range writers {
			writing.Add(1)
			go func() {
				defer writing.Done()
				for r := range rounds {
					err := st.InTx(ctx, func(tx *store.Txn) error {
						if (w == 3 && r%2 == 0) || (w == 7 && r%2 == 1) {
							// Two organizations' counters in one transaction:
							// writer 3 appends o-a's event then o-c's, writer 7
							// o-c's then o-a's (the rows locked in one order).
							a, err := lock(tx, 3)
							if err != nil {
								return err
							}
							c, err := lock(tx, 7)
							if err != nil {
								return err
							}
							if w == 7 {
								a, c = c, a
							}
							if err := transition(tx, a); err != nil {
								return err
							}
							return transition(tx, c)
						}
						vm, err := lock(tx, w)
						if err != nil {
							return err
						}
						if err := transition(tx, vm); err != nil {
							return err
						}
						if w%2 == 0 {
							// Node events beside a VM's.
							return nodeEvent(tx, w, r)
						}
						return nil
					})
					if err != nil {
						t.Errorf("writer %d round %d: %v", w, r, err)
						return
					}
					if w%2 == 1 {
						// A billing event (o-a's from two writers) and a
						// node event in one transaction.
						if err := st.InTx(ctx, func(tx *store.Txn) error {
							if err := st.AppendBillingEvent(tx, &models.BillingEvent{OrganizationID: orgOf(w),
								Kind: models.BillingLowBalance, At: store.Now()}); err != nil {
								return err
							}
							return nodeEvent(tx, w, r)
						}); err != nil {
							t.Errorf("writer %d billing and node event %d: %v", w, r, err)
							return
						}
					}
				}
			}()
		}

		// The readers, each resuming from its last cursor in pages of 3.
		var reading sync.WaitGroup
		last, lastBilling := make([]int64, len(orgs)), make([]int64, len(orgs))
		var lastNode, lastVM int64
		seenNodes, seenVM := map[int64]bool{}, map[int64]bool{}
		read := func(name string, once func() (bool, error)) {
			reading.Add(1)
			go func() {
				defer reading.Done()
				for {
					stop := false
					select {
					case <-done:
						stop = true
					default:
					}
					// After the writers stopped, read until the log is drained.
					for {
						more, err := once()
						if err != nil {
							t.Errorf("%s: %v", name, err)
							return
						}
						if !more || !stop {
							break
						}
					}
					if stop {
						return
					}
				}
			}()
		}
		for i, o := range orgs {
			read("vmEvents of "+o, func() (bool, error) {
				evs, err := st.EventsAfter(ctx, o, nil, last[i], 3)
				for _, e := range evs {
					if e.Seq != last[i]+1 {
						return false, fmt.Errorf("read seq %d after %d: an event committed out of order (missed or late)", e.Seq, last[i])
					}
					last[i] = e.Seq
				}
				return len(evs) > 0, err
			})
			read("billingEvents of "+o, func() (bool, error) {
				evs, err := st.BillingEvents(ctx, o, lastBilling[i], 3)
				for _, e := range evs {
					if e.Seq != lastBilling[i]+1 {
						return false, fmt.Errorf("read billing seq %d after %d: an event committed out of order", e.Seq, lastBilling[i])
					}
					lastBilling[i] = e.Seq
				}
				return len(evs) > 0, err
			})
		}
		read("nodeEvents", func() (bool, error) {
			evs, err := st.NodeEventsAfter(ctx, nil, lastNode, 3)
			for _, e := range evs {
				seenNodes[e.ID] = true
				lastNode = e.ID
			}
			return len(evs) > 0, err
		})
		read("vm-0's events by id", func() (bool, error) {
			var ids []int64
			err := st.DB.Raw("SELECT id FROM vm_events WHERE vm_id = ? AND id > ? ORDER BY id LIMIT 3", "vm-0", lastVM).Scan(&ids).Error
			for _, id := range ids {
				seenVM[id] = true
				lastVM = id
			}
			return len(ids) > 0, err
		})

		writing.Wait()
		close(done)
		reading.Wait()
		if t.Failed() {
			return
		}

		// Every reader saw the whole log.
		for i, want := range []int64{4*rounds + rounds/2, 2 * rounds, 2*rounds + rounds/2} {
			if last[i] != want {
				t.Errorf("%s: read through seq %d, want %d", orgs[i], last[i], want)
			}
		}
		for i, want := range []int64{2 * rounds, rounds, rounds} {
			if lastBilling[i] != want {
				t.Errorf("%s: read through billing seq %d, want %d", orgs[i], lastBilling[i], want)
			}
		}
		var nodeIDs []int64
		storetest.Scan(t, st, &nodeIDs, "SELECT id FROM node_events ORDER BY id")
		if len(nodeIDs) != writers*rounds || len(seenNodes) != len(nodeIDs) {
			t.Errorf("node events: %d written, %d read, want %d", len(nodeIDs), len(seenNodes), writers*rounds)
		}
		for _, id := range nodeIDs {
			if !seenNodes[id] {
				t.Errorf("node event %d was never read: it committed after a greater id was read", id)
			}
		}
		var vmIDs []int64
		storetest.Scan(t, st, &vmIDs, "SELECT id FROM vm_events WHERE vm_id = ? ORDER BY id", "vm-0")
		if len(vmIDs) != 2*rounds || len(seenVM) != len(vmIDs) {
			t.Errorf("vm-0's events: %d written, %d read, want %d", len(vmIDs), len(seenVM), 2*rounds)
		}
	})
}

// Events wait at the transaction's tail until its commit: a savepoint
// rolled back (Try whose fn failed) drops the events it appended with the
// row it wrote, and one that held keeps them, numbered as if the dropped
// ones never were.
func TestTryDropsTheEventsOfWhatItUndid(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		storetest.Exec(t, st, `INSERT INTO organizations (id, name, tenant_id) VALUES ('o', 'o', 1)`)
		storetest.Exec(t, st, `INSERT INTO vms (id, name, organization_id, status) VALUES ('vm-a', 'vm-a', 'o', 'running'), ('vm-b', 'vm-b', 'o', 'running')`)
		undone := fmt.Errorf("given up")
		leave := func(tx *store.Txn, id string) error {
			vm, err := st.LockVM(tx, "o", id)
			if err != nil {
				return err
			}
			now := store.Now()
			_, err = st.Apply(tx, vm, store.Change{Transition: models.NodeLeaving,
				Actor: models.Actor{Kind: models.ActorSweep}, Detail: models.LeavingDetail(now)}, now)
			return err
		}
		err := st.InTx(ctx, func(tx *store.Txn) error {
			if err := st.Try(tx, func() error {
				if err := leave(tx, "vm-a"); err != nil {
					return err
				}
				return undone
			}); err != undone {
				return fmt.Errorf("try: %v, want %v", err, undone)
			}
			return st.Try(tx, func() error { return leave(tx, "vm-b") })
		})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.EventsAfter(ctx, "o", nil, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].VMID != "vm-b" || evs[0].Seq != 1 {
			for _, e := range evs {
				t.Logf("event %s seq %d", e.VMID, e.Seq)
			}
			t.Fatalf("%d events, want vm-b's alone, seq 1", len(evs))
		}
		var reason string
		storetest.Scan(t, st, &reason, "SELECT status_reason FROM vms WHERE id = 'vm-a'")
		if reason != "" {
			t.Errorf("vm-a's statusReason %q: the undone transition was kept", reason)
		}
	})
}
