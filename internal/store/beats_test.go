package store_test

import (
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
			var defs []string
			q := "SELECT indexdef FROM pg_indexes WHERE tablename = ?"
			if st.Dialect == store.SQLite {
				q = "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
			}
			storetest.Scan(t, st, &defs, q, table)
			if len(defs) == 0 {
				t.Fatalf("no index of %s read: the check reads nothing", table)
			}
			for _, def := range defs {
				for _, c := range cols {
					if regexp.MustCompile(`\b` + c + `\b`).MatchString(def) {
						t.Errorf("%s: a quiet heartbeat writes %s.%s, which this index names", def, table, c)
					}
				}
			}
			if st.Dialect == store.Postgres {
				var opts []string
				storetest.Scan(t, st, &opts, "SELECT unnest(reloptions) FROM pg_class WHERE relname = ? AND relkind = 'r'", table)
				if strings.Join(opts, ",") != "fillfactor=80" {
					t.Errorf("%s's options %v, want fillfactor=80: a full page leaves an update no room to be HOT", table, opts)
				}
			}
		}
	})
}
