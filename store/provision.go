package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// DefaultProvisionTimeout is how long a row may stay deploying before the
// sweep fails it (models.ProvisionTimeout), when the server sets none.
const DefaultProvisionTimeout = 10 * time.Minute

// ProvisionTimeoutDetail is the sentence after "container failed to start: "
// of a row that stayed deploying for timeout.
func ProvisionTimeoutDetail(timeout time.Duration) string {
	return fmt.Sprintf("it was still deploying after %s; no node agent reported it running.", timeout)
}

// FailStuckDeploying applies models.ProvisionTimeout to every row that has
// been deploying since before now − timeout (since statusChangedAt; rows
// written before that column existed count from updatedAt), in batches
// under row locks. The lock re-reads each row, so a row an agent moved to
// running meanwhile is left alone, and any number of replicas may run it
// at once. It answers how many rows failed.
func (s *Store) FailStuckDeploying(ctx context.Context, now time.Time, timeout time.Duration) (int64, error) {
	t := models.Step(models.ProvisionTimeout)
	cutoff := now.Add(-timeout)
	change := Change{Transition: t.Name, Actor: sweepActor, Detail: ProvisionTimeoutDetail(timeout)}
	var total int64
	for {
		var n int64
		err := s.tx(ctx, func(tx *gorm.DB) error {
			rows, err := s.lockRows(tx.Where("status IN ? AND deleted_at IS NULL AND COALESCE(status_changed_at, updated_at) < ?",
				t.From, cutoff).Limit(expiryBatch))
			if err != nil || len(rows) == 0 {
				n = 0
				return err
			}
			n, err = s.applyToRows(tx, rows, change, now)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < expiryBatch {
			return total, nil
		}
	}
}
