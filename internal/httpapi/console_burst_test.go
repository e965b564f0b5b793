package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// A console session on one key at the share a two-core server gives it
// (one request in flight) and the default queue wait: its six pages'
// queries sent at once, with its vmEvents subscription open, all answer
// with their data and none is refused — the share queues a page load, it
// does not refuse it — while another tenant's query answers beside them
// (docs/decisions/0045-a-console-session-and-the-credential-share.md;
// BenchmarkConsoleBurst measures how long the queue takes).
func TestConsoleBurstQueuesAtTheShare(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := demoConsoleFleet(t)
		if _, err := dataset.LoadFile(context.Background(), st, f.fixture); err != nil {
			t.Fatal(err)
		}
		c := &consoleClient{url: consoleServer(t, st, 1), fleet: f, http: &http.Client{Transport: &http.Transport{}}}
		t.Cleanup(c.http.CloseIdleConnections)
		sub := servertest.Subscribe(t, c.url, f.key, `subscription { vmEvents { id vmId to } }`, nil)
		defer sub.Conn.CloseNow()
		var wg sync.WaitGroup
		wg.Go(func() {
			if s, body := c.send(f.other, consoleOperation{query: otherTenantQuery}); s != http.StatusOK {
				t.Errorf("the other tenant during the burst: %d %.300s", s, body)
			}
		})
		_, refused := c.burst(t, len(consoleOperations))
		wg.Wait()
		if refused != 0 {
			t.Errorf("%d of the console's %d queries refused at a share of 1", refused, len(consoleOperations))
		}
		resp, err := http.Get(c.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range []string{
			`gpugraph_requests_refused_total{reason="credential_share"} 0`,
			`gpugraph_requests_refused_total{reason="busy"} 0`,
		} {
			if !strings.Contains(string(metrics), line+"\n") {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	})
}
