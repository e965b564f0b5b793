package store

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The event logs: a VM's (vm_events, written by Apply in lifecycle.go) and
// a node's (node_events), read by id order for the API and live updates,
// and purged past their retention.

// EventsOfVMs reads the whole event log of the organization's VMs vmIDs,
// by VM and oldest first: one statement for a page of VMs (GraphQL's
// VM.events, which pages each VM's log in Go).
func (s *Store) EventsOfVMs(ctx context.Context, orgID string, vmIDs []string) ([]*models.VMEvent, error) {
	out := []*models.VMEvent{}
	for part := range slices.Chunk(vmIDs, 500) {
		var rows []*models.VMEvent
		if err := s.WithContext(ctx).Where("organization_id = ? AND vm_id IN ?", orgID, part).
			Order("vm_id, seq").Find(&rows).Error; err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// EventsAfter reads the organization's events after its event seq after,
// oldest first, at most limit; vmIDs, when not empty, keeps those VMs' only.
// (A subscription's read: the log is its source of truth, a notification
// only says when to read it.)
func (s *Store) EventsAfter(ctx context.Context, orgID string, vmIDs []string, after int64, limit int) ([]*models.VMEvent, error) {
	q := s.WithContext(ctx).Where("organization_id = ? AND seq > ?", orgID, after)
	if len(vmIDs) > 0 {
		q = q.Where("vm_id IN ?", vmIDs)
	}
	out := []*models.VMEvent{}
	err := q.Order("seq").Limit(limit).Find(&out).Error
	return out, err
}

// EventLogBounds answers the oldest kept event seq of the organization and
// its newest one (0, 0 when it has none kept).
func (s *Store) EventLogBounds(ctx context.Context, orgID string) (oldest, newest int64, err error) {
	var b struct{ Oldest, Newest *int64 }
	err = s.WithContext(ctx).Raw("SELECT MIN(seq) AS oldest, MAX(seq) AS newest FROM vm_events WHERE organization_id = ?", orgID).Find(&b).Error
	return deref(b.Oldest), deref(b.Newest), err
}

// logBounds reads the bounds of the log table (a constant of this package,
// never input).
func (s *Store) logBounds(ctx context.Context, table string) (oldest, newest int64, err error) {
	var b struct{ Oldest, Newest *int64 }
	err = s.WithContext(ctx).Raw("SELECT MIN(id) AS oldest, MAX(id) AS newest FROM " + table).Find(&b).Error
	return deref(b.Oldest), deref(b.Newest), err
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// DeleteEventsBefore drops the events of both logs (VMs' and nodes')
// older than cutoff (the retention sweep) and answers how many went. A VM
// event its workload's metering cursor has not applied yet is kept, so
// retention never takes a transition before its usage is closed (a
// finished cursor applies nothing more: a terminated row's later events
// go).
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.WithContext(ctx).Where(`at < ? AND NOT EXISTS (SELECT 1 FROM usage_cursors c
		WHERE c.vm_id = vm_events.vm_id AND c.last_event_id < vm_events.id AND NOT c.done)`, cutoff).Delete(&models.VMEvent{})
	if res.Error != nil {
		return 0, res.Error
	}
	nodes := s.WithContext(ctx).Where("at < ?", cutoff).Delete(&models.NodeEvent{})
	return res.RowsAffected + nodes.RowsAffected, nodes.Error
}

// AppendNodeEvents writes a transaction's node events at its tail (see
// appendNodeEvents); none is nothing.
func (s *Store) AppendNodeEvents(tx *Txn, evs []*models.NodeEvent) error {
	return s.appendNodeEvents(tx.db, evs)
}

// appendNodeEvents queues a transaction's node events at its tail, where
// they are written under the node log's lock, taken as late as it can be
// and held until commit, so ids commit in order (writeTail).
func (s *Store) appendNodeEvents(db *gorm.DB, evs []*models.NodeEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if t := tailOf(db); t != nil {
		t.nodes = append(t.nodes, evs...)
		return nil
	}
	return s.writeTail(db, &tail{nodes: evs})
}

// NodeEventsAfter reads the node events after the event id after, oldest
// first, at most limit; nodeIDs, when not empty, keeps those nodes' only.
// Nodes are shared inventory: the log holds no organization's allocation,
// so it is read whole (as the nodes query reads every node).
func (s *Store) NodeEventsAfter(ctx context.Context, nodeIDs []string, after int64, limit int) ([]*models.NodeEvent, error) {
	q := s.WithContext(ctx).Where("id > ?", after)
	if len(nodeIDs) > 0 {
		q = q.Where("node_id IN ?", nodeIDs)
	}
	out := []*models.NodeEvent{}
	err := q.Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// NodeEventLogBounds answers the oldest kept node event id and the newest
// one (0, 0 when the log is empty).
func (s *Store) NodeEventLogBounds(ctx context.Context) (oldest, newest int64, err error) {
	return s.logBounds(ctx, "node_events")
}
