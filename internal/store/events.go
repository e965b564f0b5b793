package store

import (
	"context"
	"time"

	"gpugraph/models"
)

// EventsOfVMs reads the whole event log of the organization's VMs vmIDs,
// by VM and oldest first: one statement for a page of VMs (GraphQL's
// VM.events, which pages each VM's log in Go).
func (s *Store) EventsOfVMs(ctx context.Context, orgID string, vmIDs []string) ([]*models.VMEvent, error) {
	out := []*models.VMEvent{}
	for _, part := range chunks(vmIDs, 500) {
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
	err = s.WithContext(ctx).Raw("SELECT MIN(seq) AS oldest, MAX(seq) AS newest FROM vm_events WHERE organization_id = ?", orgID).Scan(&b).Error
	return deref(b.Oldest), deref(b.Newest), err
}

// logBounds reads the bounds of the log table (a constant of this package,
// never input).
func (s *Store) logBounds(ctx context.Context, table string) (oldest, newest int64, err error) {
	var b struct{ Oldest, Newest *int64 }
	err = s.WithContext(ctx).Raw("SELECT MIN(id) AS oldest, MAX(id) AS newest FROM " + table).Scan(&b).Error
	return deref(b.Oldest), deref(b.Newest), err
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// DeleteEventsBefore drops the events of both logs (VMs' and nodes')
// older than cutoff (the retention sweep) and answers how many went.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.WithContext(ctx).Where("at < ?", cutoff).Delete(&models.VMEvent{})
	if res.Error != nil {
		return 0, res.Error
	}
	nodes := s.WithContext(ctx).Where("at < ?", cutoff).Delete(&models.NodeEvent{})
	return res.RowsAffected + nodes.RowsAffected, nodes.Error
}
