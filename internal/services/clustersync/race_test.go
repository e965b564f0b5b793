package clustersync_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// A reader never sees half a batch: while a delta moves 2,000 pods from
// Pending to Running, every count of the Running ones is 0 or 2,000.
func TestClusterSyncReaderSeesWholeBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		cred := enrollCluster(t, env, clusterA, 9301)
		path := "/api/v1/clusters/" + clusterA + "/sync"
		const n = 2000
		batch := func(seq int64, kind, phase string) map[string]any {
			pods := make([]map[string]any, n)
			for i := range pods {
				pods[i] = syncPod(clusterA, i, phase)
			}
			return syncBatch(seq, kind, pods...)
		}
		status, body := servertest.Post(t, env, path, cred, batch(1, "snapshot", "Pending"))
		syncAnswer(t, status, body)
		done := make(chan struct{})
		var wg sync.WaitGroup
		seen := make([]map[string]bool, 4)
		for r := range seen {
			seen[r] = map[string]bool{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					status, body := env.Do(http.MethodGet, "/api/v1/workloads/pods/count?filterBy=k8sPhase==Running", "acme-reader", nil, nil)
					if status != http.StatusOK {
						t.Errorf("count: %d %s", status, body)
						return
					}
					seen[r][strings.TrimSpace(string(body))] = true
					select {
					case <-done:
						return
					default:
					}
				}
			}()
		}
		status, body = servertest.Post(t, env, path, cred, batch(2, "delta", "Running"))
		a := syncAnswer(t, status, body)
		close(done)
		wg.Wait()
		if a["podsUpdated"] != float64(n) {
			t.Errorf("delta: %v", a)
		}
		for r, counts := range seen {
			for c := range counts {
				if c != `{"count":0}` && c != fmt.Sprintf(`{"count":%d}`, n) {
					t.Errorf("reader %d saw %s: half a batch", r, c)
				}
			}
		}
	})
}
