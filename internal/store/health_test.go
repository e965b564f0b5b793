package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestHealthPingOwnsAConnection: with every other connection of the pool
// held by requests, the health check still answers at once, where a ping
// through the pool waits for a connection.
func TestHealthPingOwnsAConnection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if err := st.HealthPing(ctx); err != nil {
			t.Fatal(err)
		}
		sqlDB, err := st.DB.DB()
		if err != nil {
			t.Fatal(err)
		}
		sqlDB.SetMaxOpenConns(3)
		var held []*sql.Conn
		for i := 0; i < 2; i++ { // the pool's other two
			c, err := sqlDB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
		}
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if err := sqlDB.PingContext(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a ping through the full pool: %v, want it to wait out its deadline", err)
		}
		short2, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel2()
		if err := st.HealthPing(short2); err != nil {
			t.Fatalf("HealthPing with the pool full: %v", err)
		}
	})
}
