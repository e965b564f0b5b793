package store_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestQuietHeartbeatWritesNoIndexedColumn: no index of nodes or gpus
// names a column a quiet heartbeat writes (RecordBeat), so that on
// PostgreSQL its updates are HOT (a row version in the same page, no index
// entry written) given room on the page, which the tables' fillfactor
// leaves; on SQLite no index is written either. An index on one of them
// would cost every heartbeat of a fleet a write to each index of the table
// (migration 0027).
func TestQuietHeartbeatWritesNoIndexedColumn(t *testing.T) {
	written := map[string][]string{
		"nodes": {"last_heartbeat_at", "agent_reported_at", "agent_version", "report_sequence"},
		"gpus":  {"utilization", "memory_used_bytes", "sampled_at"},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for table, cols := range written {
			defs, err := st.Indexes(context.Background(), table)
			if err != nil || len(defs) == 0 {
				t.Fatalf("indexes of %s: %v %v: the check reads nothing", table, defs, err)
			}
			for name, def := range defs {
				for _, c := range cols {
					if regexp.MustCompile(`\b` + c + `\b`).MatchString(def) {
						t.Errorf("%s (%s): a quiet heartbeat writes %s.%s, which this index names", name, def, table, c)
					}
				}
			}
			if st.Dialect == store.Postgres {
				var opts []string
				storetest.Scan(t, st, &opts, "SELECT unnest(reloptions) FROM pg_class WHERE relname = ? AND relkind = 'r' AND relnamespace = to_regnamespace(current_schema())", table)
				if strings.Join(opts, ",") != "fillfactor=80" {
					t.Errorf("%s's options %v, want fillfactor=80: a full page leaves an update no room to be HOT", table, opts)
				}
			}
		}
	})
}
