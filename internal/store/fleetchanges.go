package store

import (
	"context"
	"strconv"

	"gorm.io/gorm"
)

// FleetMark is how far a reader of the fleet has seen its changes (the
// fleet_changes that migration 0028's triggers append in the transaction
// of every write a placement reads): on PostgreSQL the xmin of the snapshot
// it read in, at or below the id of every transaction that snapshot could
// not see; on SQLite, whose one writer commits in order, the last change's
// number.
type FleetMark uint64

// FleetRead is one consistent read for a copy of the fleet's placement
// view (package compute keeps one a replica).
type FleetRead struct {
	// Mark is where the next read starts (ReadFleet's since).
	Mark FleetMark
	// Full: Snapshot is of every node (since was nil, or more than
	// fleetChangedMax nodes changed since).
	Full bool
	// Changed lists the nodes that changed since the read's since, by id,
	// when not Full.
	Changed []string
	// Snapshot is of every node when Full, else of the nodes of Changed (a
	// node of Changed not in it no longer exists).
	Snapshot *Snapshot
}

// fleetChangedMax is the most changed nodes a ReadFleet reads one by one
// (by id, in one statement's list); past it, it reads every node.
const fleetChangedMax = 2000

// ReadFleet reads, in tx, the mark now and a Snapshot of every node
// (since nil, or too many changed) or of the nodes changed since since
// only. The mark and the changes are read in one statement, so in one
// snapshot: a change committed after it is read by the next ReadFleet from
// Mark, and one read twice (a changed node's later statements may see
// newer changes too) is harmless. tx must have written nothing a placement
// reads, or the copy would hold what it may still roll back.
func (s *Store) ReadFleet(tx *Txn, since *FleetMark) (*FleetRead, error) {
	read := &FleetRead{}
	var err error
	scope := SnapshotScope{}
	switch {
	case since == nil:
		read.Mark, err = s.fleetMark(tx)
	case s.Dialect == Postgres:
		var rows []struct {
			Mark   string  `gorm:"column:mark"`
			NodeID *string `gorm:"column:node_id"`
		}
		err = tx.db.Raw(`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS mark, c.node_id
			FROM (SELECT 1) AS one LEFT JOIN (SELECT DISTINCT node_id FROM fleet_changes WHERE xid >= ?::xid8) AS c ON true
			ORDER BY c.node_id`, strconv.FormatUint(uint64(*since), 10)).Find(&rows).Error
		if err == nil && len(rows) > 0 {
			var m uint64
			m, err = strconv.ParseUint(rows[0].Mark, 10, 64)
			read.Mark, read.Changed = FleetMark(m), []string{}
			for _, r := range rows {
				if r.NodeID != nil {
					read.Changed = append(read.Changed, *r.NodeID)
				}
			}
		}
	default:
		// One writer: nothing commits between the two statements.
		if read.Mark, err = s.fleetMark(tx); err == nil {
			read.Changed = []string{}
			err = tx.db.Table("fleet_changes").Distinct("node_id").Where("seq > ?", int64(*since)).
				Order("node_id").Pluck("node_id", &read.Changed).Error
		}
	}
	if err != nil {
		return nil, err
	}
	if read.Changed == nil || len(read.Changed) > fleetChangedMax {
		read.Full, read.Changed = true, nil
	} else {
		scope.NodeIDs = read.Changed
	}
	read.Snapshot, err = s.Snapshot(tx, scope)
	return read, err
}

// FleetMarkNow is the mark a ReadFleet beginning now would answer.
func (s *Store) FleetMarkNow(ctx context.Context) (FleetMark, error) {
	return s.fleetMark(&Txn{db: s.WithContext(ctx), st: s})
}

// fleetMark is the mark of the statement that reads it: on PostgreSQL its
// snapshot's xmin, on SQLite the last change's number.
func (s *Store) fleetMark(tx *Txn) (FleetMark, error) {
	if s.Dialect == Postgres {
		var xmin string
		if err := tx.db.Raw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").Find(&xmin).Error; err != nil {
			return 0, err
		}
		m, err := strconv.ParseUint(xmin, 10, 64)
		return FleetMark(m), err
	}
	var last int64
	err := tx.db.Raw("SELECT COALESCE(MAX(seq), 0) FROM fleet_changes").Find(&last).Error
	return FleetMark(last), err
}

// DeleteFleetChangesBefore deletes the changes every reader at mark or
// later has read already, and answers how many went.
func (s *Store) DeleteFleetChangesBefore(ctx context.Context, mark FleetMark) (int64, error) {
	db := s.WithContext(ctx)
	var res *gorm.DB
	if s.Dialect == Postgres {
		res = db.Exec("DELETE FROM fleet_changes WHERE xid < ?::xid8", strconv.FormatUint(uint64(mark), 10))
	} else {
		res = db.Exec("DELETE FROM fleet_changes WHERE seq <= ?", int64(mark))
	}
	return res.RowsAffected, res.Error
}
