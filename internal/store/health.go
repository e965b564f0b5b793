package store

import (
	"context"
	"database/sql"
	"sync"
)

// healthConn is one connection of the pool kept for health checks, so a
// pool that busy requests hold whole (32 connections on PostgreSQL, 8 on
// SQLite, against 64 requests in flight) cannot make /healthz wait for one.
type healthConn struct {
	mu   sync.Mutex
	conn *sql.Conn
}

// HealthPing answers whether the database answers, on the health
// connection: it waits for the pool only when that connection is gone (the
// first check, or after the database dropped it).
func (s *Store) HealthPing(ctx context.Context) error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if s.health.conn == nil {
		sqlDB, err := s.DB.DB()
		if err != nil {
			return err
		}
		c, err := sqlDB.Conn(ctx)
		if err != nil {
			return err
		}
		s.health.conn = c
	}
	if err := s.health.conn.PingContext(ctx); err != nil {
		// A broken connection goes back (database/sql discards it); the
		// next check takes a fresh one.
		_ = s.health.conn.Close()
		s.health.conn = nil
		return err
	}
	return nil
}

func (s *Store) closeHealth() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if s.health.conn != nil {
		_ = s.health.conn.Close()
		s.health.conn = nil
	}
}
