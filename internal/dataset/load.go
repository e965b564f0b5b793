package dataset

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Stats counts what a load wrote.
type Stats struct {
	Nodes, GPUs, VMs, Pods, Samples int
}

// Load checks f and writes it in one transaction, replacing rows with the
// same ids. Nothing is written when any row is refused. A load that loses a
// race to another writer is replayed whole, checks included: the checks
// only fill in what f leaves out (UTC instants, names from the catalog), so
// running them twice on f is running them once.
func Load(ctx context.Context, st *store.Store, f *File) (Stats, error) {
	var stats Stats
	err := st.InTx(ctx, func(tx *store.Txn) error {
		c := &checker{st: st, tx: tx, f: f}
		d, err := c.check()
		if err != nil {
			return err
		}
		stats = Stats{Nodes: len(d.Nodes), GPUs: len(d.GPUs), VMs: len(d.VMs), Pods: len(d.Pods),
			Samples: len(d.MetricSamples) + len(d.HistogramSamples)}
		if err := st.WriteDataSet(tx, d); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		return nil
	})
	return stats, err
}

// LoadFile parses and loads b.
func LoadFile(ctx context.Context, st *store.Store, b []byte) (Stats, error) {
	f, err := Parse(b)
	if err != nil {
		return Stats{}, err
	}
	return Load(ctx, st, f)
}

func hashKey(k APIKey) models.APIKey {
	h := auth.HashToken(k.Token)
	return models.APIKey{TokenHash: h, KeyID: models.KeyIDOf(h), OrganizationID: k.OrganizationID,
		Permissions: strings.Join(k.Permissions, " "), CreatedAt: time.Now().UTC()}
}
