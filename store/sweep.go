package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// expiryBatch bounds the VMs one expiry transaction locks.
const expiryBatch = 500

// SweepResult counts what one sweep changed.
type SweepResult struct {
	NodesOffline int64 // reporting nodes silent for longer than the grace
	Interrupted  int64 // VMs and pods on them, now interrupted (models.NodeLost)
	Stopped      int64 // VMs interrupted too long, now stopped (models.ExpireVM)
	Deleted      int64 // pods interrupted too long, now terminated (models.ExpirePod)
	Leaving      int64 // running rows on a leaving node, now carrying its instant (models.NodeLeaving)
	NodesRemoved int64 // nodes whose leavingAt passed, now removed
	Removed      int64 // VMs and pods on them, now stopped with node_removed (models.NodeRemoval)
}

// Changed reports whether the sweep wrote anything.
func (r SweepResult) Changed() bool {
	return r.NodesOffline+r.Interrupted+r.Stopped+r.Deleted+r.Leaving+r.NodesRemoved+r.Removed > 0
}

// Sweep applies, as of now, what the heartbeats' absence means. Every step
// is a conditional update of rows whose stored state still calls for it,
// so any number of replicas may sweep the same database at any time: a
// second sweep of the same instant changes nothing. Nodes that never
// reported (no lastHeartbeatAt) are left alone.
func (s *Store) Sweep(ctx context.Context, now time.Time, grace time.Duration) (SweepResult, error) {
	var res SweepResult
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var e error
		res.NodesOffline, res.Interrupted, e = s.sweepSilentNodes(tx, now, now.Add(-grace))
		return e
	})
	if err != nil {
		return res, err
	}
	err = s.tx(ctx, func(tx *gorm.DB) error {
		var e error
		res.Leaving, res.NodesRemoved, res.Removed, e = s.sweepLeavingNodes(tx, now)
		return e
	})
	if err != nil {
		return res, err
	}
	for {
		var stopped, deleted int64
		err := s.tx(ctx, func(tx *gorm.DB) error {
			var e error
			stopped, deleted, e = s.expireInterrupted(tx, now)
			return e
		})
		if err != nil {
			return res, err
		}
		res.Stopped += stopped
		res.Deleted += deleted
		if stopped+deleted < expiryBatch {
			return res, nil
		}
	}
}

// sweepSilentNodes takes nodes silent since before cutoff offline and
// applies models.NodeLost to the VMs and pods of every such node. The nodes
// are locked before their VMs are touched, so a heartbeat of one of them
// either comes first (and the node is no longer silent) or waits and then
// resumes what was interrupted (models.NodeBack).
func (s *Store) sweepSilentNodes(tx *gorm.DB, now, cutoff time.Time) (offline, interrupted int64, err error) {
	var silent []string
	err = s.forUpdate(tx.Table("nodes").Select("id").
		Where("status = ? AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at < ?", models.NodeOnline, cutoff).
		Order("id")).Scan(&silent).Error
	if err != nil {
		return 0, 0, err
	}
	var evs []*models.NodeEvent
	if len(silent) > 0 {
		res := tx.Table("nodes").Where("id IN ? AND status = ?", silent, models.NodeOnline).Update("status", models.NodeOffline)
		if res.Error != nil {
			return 0, 0, res.Error
		}
		offline = res.RowsAffected
		for _, id := range silent {
			evs = append(evs, models.NodeStatusEvent(id, models.NodeOnline, models.NodeOffline, sweepActor, now))
		}
	}
	lostVMs := models.Step(models.NodeLost)
	var lost []string
	err = s.forUpdate(tx.Table("nodes").Select("id").
		Where("status = ? AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at < ?", models.NodeOffline, cutoff).
		Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ?)", lostVMs.From).
		Order("id")).Scan(&lost).Error
	if err != nil {
		return offline, 0, err
	}
	if len(lost) > 0 {
		rows, err := s.lockRows(tx.Where("status IN ? AND node_id IN ?", lostVMs.From, lost))
		if err != nil {
			return offline, 0, err
		}
		interrupted, err = s.applyToRows(tx, rows, Change{Transition: models.NodeLost, Actor: sweepActor}, now)
		if err != nil {
			return offline, 0, err
		}
	}
	return offline, interrupted, s.appendNodeEvents(tx, evs)
}

// sweepActor is who the sweep's transitions are by.
var sweepActor = models.Actor{Kind: models.ActorSweep}

// expireInterrupted applies, in one batch, models.ExpireVM and
// models.ExpirePod to the rows that have been interrupted for longer than
// their After: a VM becomes stopped (its disk stays on its node), a pod
// terminated, which is how a deleted pod reads in the OpenRelay API; both
// release their GPUs. The two rows share their from-statuses and After
// (the lifecycle's test checks it), so one read finds both kinds.
func (s *Store) expireInterrupted(tx *gorm.DB, now time.Time) (stopped, deleted int64, err error) {
	expireVM, expirePod := models.Step(models.ExpireVM), models.Step(models.ExpirePod)
	rows, err := s.lockRows(tx.Where("status IN ? AND interrupted_at IS NOT NULL AND interrupted_at < ?",
		expireVM.From, now.Add(-expireVM.After)).Limit(expiryBatch))
	if err != nil || len(rows) == 0 {
		return 0, 0, err
	}
	// Each row takes the transition of its kind; applyToRows skips the other.
	if stopped, err = s.applyToRows(tx, rows, Change{Transition: expireVM.Name, Actor: sweepActor}, now); err != nil {
		return 0, 0, err
	}
	if deleted, err = s.applyToRows(tx, rows, Change{Transition: expirePod.Name, Actor: sweepActor}, now); err != nil {
		return 0, 0, err
	}
	return stopped, deleted, nil
}

// sweepLeavingNodes carries out the operators' decommissions as of now.
// A node whose leavingAt has passed becomes removed, and its VMs and pods
// end with models.NodeRemoval (GPUs released, disk gone): the nodes are
// locked, by id, before their rows, as sweepSilentNodes does. A running
// row on a node still to leave that does not carry the leaving reason (it
// became running after the operator set leavingAt) gets it
// (models.NodeLeaving), so the reason holds whatever the order of events.
func (s *Store) sweepLeavingNodes(tx *gorm.DB, now time.Time) (leaving, nodesRemoved, removed int64, err error) {
	var goneRows []struct {
		ID     string
		Status models.NodeStatus
	}
	err = s.forUpdate(tx.Table("nodes").Select("id, status").
		Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at <= ?", models.NodeRemoved, now).Order("id")).
		Scan(&goneRows).Error
	if err != nil {
		return 0, 0, 0, err
	}
	if len(goneRows) > 0 {
		gone := make([]string, len(goneRows))
		evs := make([]*models.NodeEvent, len(goneRows))
		for i, n := range goneRows {
			gone[i] = n.ID
			evs[i] = models.NodeStatusEvent(n.ID, n.Status, models.NodeRemoved, sweepActor, now)
		}
		res := tx.Model(&models.Node{}).Where("id IN ? AND status <> ?", gone, models.NodeRemoved).
			Update("status", models.NodeRemoved)
		if res.Error != nil {
			return 0, 0, 0, res.Error
		}
		nodesRemoved = res.RowsAffected
		removed, err = s.applyToWorkloads(tx, Workloads{NodeIDs: gone},
			Change{Transition: models.NodeRemoval, Actor: sweepActor}, now)
		if err != nil {
			return 0, 0, 0, err
		}
		if err := s.appendNodeEvents(tx, evs); err != nil {
			return 0, 0, 0, err
		}
	}

	var ahead []models.Node
	running := models.Step(models.NodeLeaving).From
	err = tx.Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at > ?", models.NodeRemoved, now).
		Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ? AND vms.deleted_at IS NULL)", running).
		Order("id").Find(&ahead).Error
	if err != nil {
		return 0, 0, 0, err
	}
	for _, n := range ahead {
		at := *n.LeavingAt
		c, err := s.applyToWorkloads(tx, Workloads{NodeIDs: []string{n.ID}, ReasonNot: models.LeavingReason(at)},
			Change{Transition: models.NodeLeaving, Actor: sweepActor, Detail: models.LeavingDetail(at)}, now)
		if err != nil {
			return 0, 0, 0, err
		}
		leaving += c
	}
	return leaving, nodesRemoved, removed, nil
}
