package store

import (
	"context"
	"time"
)

// BeatReplica records that the server process id is running at now: one
// upsert of its row in server_replicas.
func (s *Store) BeatReplica(ctx context.Context, id string, now time.Time) error {
	return s.DB.WithContext(ctx).Exec(`INSERT INTO server_replicas (id, seen_at) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, id, now).Error
}

// LiveReplicas counts the server processes seen at or after since, and of
// them those whose id sorts before id: n and id's rank among them.
func (s *Store) LiveReplicas(ctx context.Context, id string, since time.Time) (n, rank int, err error) {
	var row struct{ N, Below int }
	err = s.DB.WithContext(ctx).Raw(`SELECT COUNT(*) AS n, COUNT(CASE WHEN id < ? THEN 1 END) AS below
		FROM server_replicas WHERE seen_at >= ?`, id, since).Find(&row).Error
	return row.N, row.Below, err
}

// ForgetReplica deletes the row of the server process id (its clean
// shutdown).
func (s *Store) ForgetReplica(ctx context.Context, id string) error {
	return s.DB.WithContext(ctx).Exec(`DELETE FROM server_replicas WHERE id = ?`, id).Error
}

// ForgetReplicasBefore deletes the rows of the server processes last seen
// before before (killed without a shutdown) and answers how many.
func (s *Store) ForgetReplicasBefore(ctx context.Context, before time.Time) (int64, error) {
	res := s.DB.WithContext(ctx).Exec(`DELETE FROM server_replicas WHERE seen_at < ?`, before)
	return res.RowsAffected, res.Error
}
