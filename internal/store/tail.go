package store

import (
	"hash/fnv"
	"slices"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The event logs' order (docs/decisions/0047-event-log-order.md). A
// subscriber resumes a log from the last cursor it read (after), so a
// cursor must never commit below one a reader has already seen. Each log
// keeps that order where its cursor lives, with a lock held to commit and
// taken before the cursor is drawn, instead of one lock for every log:
//
//   - vm_events: the cursor is the organization's seq. It is drawn from
//     the organization's row of vm_event_seqs, whose row lock (the upsert's)
//     is held to commit: one organization's transitions commit one at a
//     time from that row, others' do not wait for them.
//   - billing_events: the cursor is the organization's seq too, the
//     greatest plus one, read under the organization's advisory lock
//     (billingLock).
//   - node_events: the cursor is the log's global id, drawn under the node
//     log's advisory lock (nodeLogLock).
//
// VM and node events wait at the transaction's tail (this file) and are
// written at its end, just before the commit: their locks are the last a
// transaction takes, in one order (organizations' counter rows by id,
// then the node log's lock), and a transaction holding one waits for
// nothing but another of them, so they take part in no deadlock.

// tail is what a transaction appends to the VM and node event logs, written
// by writeTail as its last statements.
type tail struct {
	vm    []*models.VMEvent
	nodes []*models.NodeEvent
}

// tailKey holds, in a transaction's context, its *tail (set by tx).
type tailKey struct{}

// tailOf answers db's transaction's tail; nil outside tx, where appends
// are written at once.
func tailOf(db *gorm.DB) *tail {
	t, _ := db.Statement.Context.Value(tailKey{}).(*tail)
	return t
}

// tailMark is how long a tail was, for undo.
type tailMark struct{ vm, nodes int }

func (t *tail) mark() tailMark {
	if t == nil {
		return tailMark{}
	}
	return tailMark{len(t.vm), len(t.nodes)}
}

// undo drops what was appended since m (a savepoint rolled back).
func (t *tail) undo(m tailMark) {
	if t != nil {
		t.vm, t.nodes = t.vm[:m.vm], t.nodes[:m.nodes]
	}
}

// appendVMEvents queues evs at db's transaction's tail, or writes them now
// outside one.
func (s *Store) appendVMEvents(db *gorm.DB, evs ...*models.VMEvent) error {
	if t := tailOf(db); t != nil {
		t.vm = append(t.vm, evs...)
		return nil
	}
	return s.writeTail(db, &tail{vm: evs})
}

// writeTail writes the transaction's queued events: the VM events under
// their organizations' counters (drawSeqs), then the node events under the
// node log's lock, each log noted to the listeners. Nothing is written
// after it but the commit.
func (s *Store) writeTail(db *gorm.DB, t *tail) error {
	if s.globalEventLock && (len(t.vm) > 0 || len(t.nodes) > 0) {
		if err := db.Exec("SELECT pg_advisory_xact_lock(?)", eventLogLock).Error; err != nil {
			return err
		}
	}
	if len(t.vm) > 0 {
		if err := s.drawSeqs(db, t.vm); err != nil {
			return err
		}
		if err := db.CreateInBatches(t.vm, 200).Error; err != nil {
			return err
		}
		if err := s.noteAfterCommit(db, TopicVMEvents, t.vm[len(t.vm)-1].ID); err != nil {
			return err
		}
	}
	if len(t.nodes) > 0 {
		if err := s.advisoryLock(db, nodeLogLock, 0); err != nil {
			return err
		}
		if err := db.CreateInBatches(t.nodes, 200).Error; err != nil {
			return err
		}
		if err := s.note(db, TopicNodeEvents, t.nodes[len(t.nodes)-1].ID); err != nil {
			return err
		}
	}
	return nil
}

// The advisory locks of the logs that have no counter row. Each is a pair
// of keys (class, key); classes "gpun" and "gpub" are this file's.
const (
	// nodeLogLock (key 0) orders node_events' ids: held to commit from
	// before the id is drawn.
	nodeLogLock = 0x6770756e // "gpun"
	// billingLogLock, with the organization's key (orgKey), orders
	// its billing events' seqs.
	billingLogLock = 0x67707562 // "gpub"
	// eventLogLock is the one lock every append took before decision
	// 0047; only the benchmark that compares with it takes it now
	// (globalEventLock).
	eventLogLock = 0x67707567 // "gpug"
)

// advisoryLock takes the transaction-level advisory lock (class, key) on
// PostgreSQL, held to commit; SQLite's writers are serialized already
// (BEGIN IMMEDIATE).
func (s *Store) advisoryLock(db *gorm.DB, class, key int32) error {
	if s.Dialect != Postgres {
		return nil
	}
	return db.Exec("SELECT pg_advisory_xact_lock(?, ?)", class, key).Error
}

// orgKey is organization orgID's key in a class of advisory locks taken
// per organization (billingLogLock, queueLock): a hash, so two
// organizations may share one lock, which only makes one wait for the
// other.
func orgKey(orgID string) int32 {
	h := fnv.New32a()
	h.Write([]byte(orgID))
	return int32(h.Sum32())
}

// drawSeqs numbers events within their organizations: each takes the next
// of its organization's counter (vm_event_seqs, which never goes back,
// whatever retention deletes). The upsert locks the counter's row until
// commit, so one organization's seqs commit in the order they are drawn;
// the organizations are drawn in id order, and only writeTail touches the
// counters, so their rows take part in no other lock order.
func (s *Store) drawSeqs(db *gorm.DB, events []*models.VMEvent) error {
	count := map[string]int64{}
	var orgs []string
	for _, ev := range events {
		if count[ev.OrganizationID] == 0 {
			orgs = append(orgs, ev.OrganizationID)
		}
		count[ev.OrganizationID]++
	}
	slices.Sort(orgs)
	next := make(map[string]int64, len(orgs))
	for _, org := range orgs {
		var last int64
		err := db.Raw(`INSERT INTO vm_event_seqs (organization_id, last) VALUES (?, ?)
			ON CONFLICT (organization_id) DO UPDATE SET last = vm_event_seqs.last + excluded.last RETURNING last`,
			org, count[org]).Find(&last).Error
		if err != nil {
			return err
		}
		next[org] = last - count[org]
	}
	for _, ev := range events {
		next[ev.OrganizationID]++
		ev.Seq = next[ev.OrganizationID]
	}
	return nil
}
