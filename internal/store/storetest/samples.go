package storetest

import (
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"gpugraph/internal/store"
)

// SeedSeries stores n samples of one series, for benchmarks: one every
// `every` from start (UTC), the i-th valued i mod 100. The pod must exist.
// PostgreSQL generates the rows itself; SQLite, whose instants are the text
// its driver writes, gets them in multi-row inserts in one transaction.
func SeedSeries(tb testing.TB, st *store.Store, podID, metricType, labels string, start time.Time, every time.Duration, n int) {
	tb.Helper()
	start = start.UTC()
	var err error
	if st.Dialect == store.Postgres {
		err = st.DB.Exec(`INSERT INTO metric_samples (pod_id, type, labels, ts, value)
			SELECT ?, ?, ?, CAST(? AS timestamptz) + (i * CAST(? AS bigint)) * interval '1 microsecond', i % 100
			FROM generate_series(0, ? - 1) AS i`,
			podID, metricType, labels, start, every.Microseconds(), n).Error
		if err == nil {
			err = st.DB.Exec("ANALYZE metric_samples").Error
		}
	} else {
		const batch = 2000
		err = st.DB.Transaction(func(tx *gorm.DB) error {
			for lo := 0; lo < n; lo += batch {
				hi := min(lo+batch, n)
				var q strings.Builder
				q.WriteString("INSERT INTO metric_samples (pod_id, type, labels, ts, value) VALUES ")
				args := make([]any, 0, 5*(hi-lo))
				for i := lo; i < hi; i++ {
					if i > lo {
						q.WriteString(", ")
					}
					q.WriteString("(?, ?, ?, ?, ?)")
					args = append(args, podID, metricType, labels, start.Add(time.Duration(i)*every), float64(i%100))
				}
				if err := tx.Exec(q.String(), args...).Error; err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		tb.Fatalf("seed %d samples: %v", n, err)
	}
}
