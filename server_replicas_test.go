package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Two servers started as main starts them, on one database: each
// announces itself, counts the other, and holds half of each rate limit,
// so one key's burst (--rate-burst 10) across both is 10 in all. The one
// stopped deletes its row at shutdown, and the other then holds the whole
// limit.
func TestServersShareRateLimits(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			dbURL := storetest.URL(t, d)
			flags := []string{"--rate-limit", "0.001", "--rate-burst", "10", "--replica-heartbeat", "50ms"}
			a, cancelA, doneA := startServingOn(t, dbURL, flags...)
			defer func() { cancelA(); <-doneA }()
			b, cancelB, doneB := startServingOn(t, dbURL, flags...)
			stoppedB := false
			defer func() {
				if !stoppedB {
					cancelB()
					<-doneB
				}
			}()
			for _, addr := range []string{a, b} {
				waitMetric(t, addr, "gpugraph_replicas 2")
			}
			accepted := 0
			for i := 0; i < 20; i++ {
				status, body := getAs(t, []string{a, b}[i%2], "acme-operator", "/api/v1/workloads/pods/count")
				switch status {
				case http.StatusOK:
					accepted++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("request %d: %d %s", i+1, status, body)
				}
			}
			if accepted != 10 {
				t.Errorf("%d of 20 accepted across two servers, want the burst of 10", accepted)
			}

			cancelB()
			if err := <-doneB; err != nil {
				t.Fatalf("B: %v", err)
			}
			stoppedB = true
			waitMetric(t, a, "gpugraph_replicas 1")
			st, err := store.Open(dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var rows int
			storetest.Scan(t, st, &rows, "SELECT COUNT(*) FROM server_replicas")
			if rows != 1 {
				t.Errorf("%d rows in server_replicas after B stopped (%v), want A's alone", rows, err)
			}
			// A alone holds the whole burst for a key it had not seen.
			accepted = 0
			for i := 0; i < 11; i++ {
				if status, _ := getAs(t, a, "globex-operator", "/api/v1/workloads/pods/count"); status == http.StatusOK {
					accepted++
				}
			}
			if accepted != 10 {
				t.Errorf("%d of 11 accepted by the server left alone, want 10", accepted)
			}
		})
	}
}

// waitMetric waits until the server at addr exposes line in /metrics.
func waitMetric(t *testing.T, addr, line string) {
	t.Helper()
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "\n"+line+"\n") {
			return
		}
		if i == 200 {
			t.Fatalf("%s never exposed %q", addr, line)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// --replica-heartbeat defaults to replicas.DefaultInterval and must be
// positive.
func TestReplicaHeartbeatFlag(t *testing.T) {
	if o, err := parseFlags(nil); err != nil || o.replicaHeartbeat != 2*time.Second {
		t.Errorf("default: %v, %v; want 2s", o.replicaHeartbeat, err)
	}
	for _, v := range []string{"0s", "-1s"} {
		_, err := parseFlags([]string{"--replica-heartbeat", v})
		if want := "--replica-heartbeat " + v + ": must be positive"; err == nil || err.Error() != want {
			t.Errorf("--replica-heartbeat %s: %v, want %q", v, err, want)
		}
	}
}
