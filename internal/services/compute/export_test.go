package compute

import (
	"context"

	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// SetChosenHook has fn run after each create of s chose its node and
// before it locks it.
func (s *Service) SetChosenHook(fn func(nodeID string)) { s.onChosen = fn }

// FleetCopy answers, in one transaction, the nodes of s's copy of the
// fleet read up to now, and those of a fresh Snapshot of every node; each
// with its cluster and node pool.
func (s *Service) FleetCopy(ctx context.Context) (kept, fresh []*placement.NodeInfo, keptRows, freshRows map[string]*models.Node, err error) {
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		v, err := s.fleet.current(tx)
		if err != nil {
			return err
		}
		snap, err := s.store.Snapshot(tx, store.SnapshotScope{})
		if err != nil {
			return err
		}
		f := newNodeView(snap)
		kept, fresh, keptRows, freshRows = v.nodes, f.nodes, v.rows, f.rows
		return nil
	})
	return kept, fresh, keptRows, freshRows, err
}
