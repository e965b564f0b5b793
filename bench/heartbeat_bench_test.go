package bench_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"gpugraph/bench"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
	"gpugraph/internal/store/storetest"
)

// Heartbeats at fleet scale: 10,000 nodes of 8 GPUs, each running one VM,
// heartbeating as they do between changes (the same samples, the VM
// running and ready), each with its own node credential, through the whole
// HTTP surface on a loopback port, from 16 and 64 agents at once. It
// reports heartbeats a second, the latencies' p50 and p99, the SQL
// statements one heartbeat costs (the credential's lookup included) and,
// on PostgreSQL, the write-ahead log it writes (a HOT update of the node's
// row, migration 0027, writes no index entry). A
// 20,000-node fleet at the agent's default 10 s interval sends 2,000 a
// second.
//
//	TEST_DATABASE_URL=… go test -run '^$' -bench HeartbeatFleet -benchtime 20000x ./internal/httpapi/
func BenchmarkHeartbeatFleet(b *testing.B) {
	const nodes = 10_000
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, d)
			agents, err := bench.InsertHeartbeatFleet(ctx, st, nodes, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			stmts, err := sqlcount.Register(st.DB)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(httpapi.New(servertest.Wire(st, servertest.Options{}, httpapi.Config{})))
			b.Cleanup(srv.Close)
			for _, clients := range []int{16, 64} {
				b.Run(fmt.Sprintf("agents=%d", clients), func(b *testing.B) {
					hc := bench.NewHTTPClient(clients)
					var l bench.Load
					walWritten := walFrom(b, st)
					n := stmts.During(func() { l = bench.DriveHeartbeats(ctx, hc, srv.URL, agents, clients, b.N) })
					if written, ok := walWritten(); ok {
						b.ReportMetric(float64(written)/float64(b.N), "WAL-bytes/heartbeat")
					}
					if l.Errors > 0 {
						b.Fatalf("%d of %d heartbeats failed, first: %v", l.Errors, l.Requests, l.FirstErr)
					}
					b.ReportMetric(l.PerSecond(), "heartbeats/s")
					b.ReportMetric(float64(l.Quantile(0.5).Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(l.Quantile(0.99).Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(n)/float64(b.N), "statements/heartbeat")
				})
			}
		})
	}
}

// walFrom notes PostgreSQL's write-ahead log position and answers a
// function that reads how many bytes of it were written since (ok false
// on SQLite, which has none).
func walFrom(b *testing.B, st *store.Store) func() (written int64, ok bool) {
	if st.Dialect != store.Postgres {
		return func() (int64, bool) { return 0, false }
	}
	var lsn string
	storetest.Scan(b, st, &lsn, "SELECT pg_current_wal_lsn()::text")
	return func() (int64, bool) {
		var n int64
		storetest.Scan(b, st, &n, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::bigint", lsn)
		return n, true
	}
}
