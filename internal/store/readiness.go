package store

import (
	"context"
	"fmt"
)

// PendingMigrations answers the migrations this binary holds that the
// database has not recorded as applied, in order ([] when it is current).
// Versions the database holds beyond this binary's (a newer replica
// migrated it) are not pending.
func (s *Store) PendingMigrations(ctx context.Context) ([]string, error) {
	files, err := s.migrations()
	if err != nil {
		return nil, err
	}
	var done []string
	if err := s.DB.WithContext(ctx).Raw("SELECT version FROM schema_migrations").Find(&done).Error; err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	applied := make(map[string]bool, len(done))
	for _, v := range done {
		applied[v] = true
	}
	pending := []string{}
	for _, f := range files {
		if !applied[f] {
			pending = append(pending, f)
		}
	}
	return pending, nil
}
