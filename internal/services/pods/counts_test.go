package pods_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/pods"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// CountCompaction folds the kept counts at once and then every interval,
// until its context ends; the counts stay what the pods hold.
func TestCountCompactionFoldsUntilStopped(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		// Every pod's phase moved and back: two more rows a key on PostgreSQL.
		storetest.Exec(t, st, "UPDATE pods SET k8s_phase = k8s_phase || '-'")
		storetest.Exec(t, st, "UPDATE pods SET k8s_phase = substr(k8s_phase, 1, length(k8s_phase) - 1)")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { pods.NewCountCompaction(st, time.Hour).Run(ctx); close(done) }()
		var rows, keys int64
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			storetest.Scan(t, st, &rows, "SELECT count(*) FROM pod_counts WHERE n <> 0")
			storetest.Scan(t, st, &keys, "SELECT count(*) FROM (SELECT DISTINCT tenant_id, deleted_at IS NULL, k8s_phase FROM pods) k")
			if rows == keys || time.Now().After(deadline) {
				break
			}
		}
		cancel()
		<-done
		if rows != keys {
			t.Fatalf("pod_counts holds %d rows of counts for %d keys", rows, keys)
		}
		var kept, counted int64
		storetest.Scan(t, st, &kept, "SELECT COALESCE(SUM(n), 0) FROM pod_counts")
		storetest.Scan(t, st, &counted, "SELECT count(*) FROM pods")
		if kept != counted || counted == 0 {
			t.Errorf("kept %d pods, the table holds %d", kept, counted)
		}
	})
}
