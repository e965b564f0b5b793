package store

import (
	"context"

	"gorm.io/gorm"

	"gpugraph/models"
)

// appendNodeEvents writes a transaction's node events at its tail, as the
// VM transitions append theirs: the log lock (lockEventLog) is taken as
// late as it can be and held until commit, so ids commit in order.
func (s *Store) appendNodeEvents(db *gorm.DB, evs []*models.NodeEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if err := s.lockEventLog(db); err != nil {
		return err
	}
	if err := db.CreateInBatches(evs, 200).Error; err != nil {
		return err
	}
	return s.note(db, TopicNodeEvents, evs[len(evs)-1].ID)
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
