package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/demo"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	livefeed "gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// consoleFleet is a data set a console session is measured on: the
// fixture, the key the console's user typed (allowed every page: the Usage
// page needs billing.read), another tenant's key, the pod whose metrics
// the plot reads, and the instant "now" is for the data.
type consoleFleet struct {
	name          string
	fixture       []byte
	key, other    string
	workload, pod string
	now           time.Time
}

// demoConsoleFleet is the demo data set as of now, with acme-console.
func demoConsoleFleet(tb testing.TB) consoleFleet {
	now := time.Now()
	d, err := demo.JSON(now)
	if err != nil {
		tb.Fatal(err)
	}
	// llama3-70b-pretrain-master-0, an Acme pod with metric series
	return consoleFleet{"demo", withConsoleKey(tb, d, "acme-console", "org-acme"), "acme-console", "globex-reader",
		"abac6a90-5b54-5000-9b14-72baefd89601", "1fc3994a-2eb2-559c-a87e-c91b75f73ea0", now}
}

// largeConsoleFleet is a fleet of the size the console's issue names
// (1,000 nodes of 8 GPUs, a VM list of 500 rows) split between two
// tenants, with fleet-console.
func largeConsoleFleet(tb testing.TB) consoleFleet {
	f := fleetgen.Generate(fleetgen.Options{Nodes: 1000, Pods: 1000, Samples: fleetgen.SeriesLength, Tenants: 2, Seed: 7, VMsPerNode: 1})
	pod := f.PodMetrics[0].PodID
	i := slices.IndexFunc(f.Pods, func(p models.Pod) bool { return p.ID == pod })
	b, err := json.Marshal(f)
	if err != nil {
		tb.Fatal(err)
	}
	tenant := f.Pods[i].TenantID - fleetgen.TenantID(0)
	return consoleFleet{"fleet1000", withConsoleKey(tb, b, "fleet-console", fleetgen.OrgID(tenant)), "fleet-console",
		fleetgen.Token(1 - tenant), f.Pods[i].WorkloadID, pod, fleetgen.Epoch}
}

// withConsoleKey adds to fixture a key named token of org allowed every
// page of the console.
func withConsoleKey(tb testing.TB, fixture []byte, token, org string) []byte {
	var f dataset.File
	if err := json.Unmarshal(fixture, &f); err != nil {
		tb.Fatal(err)
	}
	f.APIKeys = append(f.APIKeys, dataset.APIKey{Token: token, OrganizationID: org,
		Permissions: []string{"compute.read", "compute.operate", "workloads.read", "billing.read"}})
	out, err := json.Marshal(f)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// consoleOperation is what one page of the console sends: one GraphQL
// query.
type consoleOperation struct {
	page, query string
	vars        func(f consoleFleet) map[string]any
}

// consoleOperations are the console's pages' queries, in the order a
// burst cycles through them: a slow podMetrics range comes second, beside
// the fast lists.
var consoleOperations = []consoleOperation{
	{"vms", `query ConsoleVMs { vms(limit: 500) { total next vms { id name status statusReason provisioningStage
  pricePerHourCents costSoFar gpuCount gpuModelName createdAt interruptedAt node { id name status } } } }`, nil},
	{"podMetrics", `query ConsolePodMetrics($workload: ID!, $pod: ID!, $start: Time!, $end: Time!) {
  podMetrics(workloadId: $workload, podId: $pod, start: $start, end: $end, numberOfSamples: 120,
    metricTypes: [GPU_UTILIZATION_PER_GPU, GPU_MEMORY_USAGE_BYTES_PER_GPU, GPU_UTILIZATION, GPU_MEMORY_USAGE_BYTES,
      CPU_USAGE_CORES, CPU_MEMORY_USAGE_BYTES, GPU_SM_ACTIVITY_PER_GPU, GPU_TENSOR_ACTIVITY_PER_GPU]) {
    measurements { type labels values { timestamp value } } histogram { type values { timestamp data } } omittedTypes } }`,
		func(f consoleFleet) map[string]any {
			return map[string]any{"workload": f.workload, "pod": f.pod,
				"start": f.now.Add(-time.Hour).Format(time.RFC3339), "end": f.now.Format(time.RFC3339)}
		}},
	{"pods", `query ConsolePods { podsCount pods(limit: 50, sortBy: CREATED_AT, sortOrder: DESC) { total next pods {
  id name workloadName projectName nodeName k8sPhase createdAt completedAt currentNodePool
  containers { name image startedAt } requestedResources { gpu { request limit } gpuMemory { request } cpu { request } }
  allocatedResources { gpu gpuMemory cpu cpuMemory } node { id name status } } } }`, nil},
	{"instanceTypes", `query ConsoleInstanceTypes { instanceTypes { name gpuCount cpuCores ramGb diskSizeGb volumeGb
  pricePerHourCents description gpuModel { id name manufacturer memoryGb } capacity { clusterId nodePool available } } }`, nil},
	{"fleet", `query ConsoleFleet { nodes { id name clusterId nodePool status agentVersion leavingAt lastHeartbeatAt
  gpus { id index address health failedReason utilization model { name } vm { id name status } } } }`, nil},
	{"usage", `query ConsoleUsage($from: Time!, $to: Time!) { organization { id name balance burnRatePerHour runwayHours
  byDay: usage(from: $from, to: $to, groupBy: DAY) { total lines { key seconds gpuSeconds cost } }
  byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) { total lines { key seconds gpuSeconds cost } }
  ledger(first: 50) { nodes { id kind amount reason createdAt } } } }`,
		func(f consoleFleet) map[string]any {
			return map[string]any{"from": f.now.AddDate(0, 0, -30).Format(time.RFC3339), "to": f.now.Format(time.RFC3339)}
		}},
}

// otherTenantQuery is what the second tenant sends while the first one's
// console bursts: its own VMs list, as its own console's first page would.
const otherTenantQuery = `{ vms(limit: 500) { total vms { id name status statusReason node { name } } } }`

// BenchmarkConsoleBurst measures a console session under the gate's
// credential share (docs/decisions/0045-a-console-session-and-the-credential-share.md):
// one key sends bursts of 3, 6 and 12 of its pages' queries at once, as a
// user opening several pages or tabs does, with a vmEvents subscription
// open on a WebSocket, against a server over the demo data and over a
// fleet of 1,000 nodes, on SQLite and (with TEST_DATABASE_URL) PostgreSQL,
// at the default share (half the cores), 2, 4 and the whole server (64).
// Meanwhile a second tenant sends its own VMs query every 20 ms. Each
// iteration is one burst; burst=0 is the second tenant alone.
//
// Reported: burst-p50-ms and burst-p99-ms, the time until every answer
// of a burst is in; serial-ms, the burst's queries' times one after
// another with nothing else running (the least a burst can take on a
// saturated machine); refused/burst, its answers refused (429, 503 or
// 504); other-p50-ms and other-p99-ms, the second tenant's answers, and
// other-refused. Rate limits are off, so the share alone is measured (a
// burst of 12 is far inside the default --rate-burst of 100). Run with a
// fixed count so that the percentiles have samples:
//
//	go test -run '^$' -bench BenchmarkConsoleBurst -benchtime 40x ./internal/httpapi/
func BenchmarkConsoleBurst(b *testing.B) {
	shares := []struct {
		name  string
		share int
	}{{"default", httpapi.DefaultCredentialConcurrency()}, {"2", 2}, {"4", 4}, {"whole", 64}}
	fleets := []consoleFleet{demoConsoleFleet(b), largeConsoleFleet(b)}
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			for _, f := range fleets {
				b.Run(f.name, func(b *testing.B) {
					st := storetest.Open(b, d)
					if _, err := dataset.LoadFile(context.Background(), st, f.fixture); err != nil {
						b.Fatal(err)
					}
					for _, sh := range shares {
						b.Run("share="+sh.name, func(b *testing.B) {
							c := &consoleClient{url: consoleServer(b, st, sh.share), fleet: f,
								http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
							b.Cleanup(c.http.CloseIdleConnections)
							solo := c.solo(b)
							sub := servertest.Subscribe(b, c.url, f.key, `subscription { vmEvents { id vmId from to reason } }`, nil)
							defer sub.Conn.CloseNow()
							for _, n := range []int{0, 3, 6, 12} {
								b.Run(fmt.Sprintf("burst=%d", n), func(b *testing.B) {
									c.measure(b, n)
									if n > 0 {
										serial := time.Duration(0)
										for i := range n {
											serial += solo[i%len(solo)]
										}
										b.ReportMetric(float64(serial.Microseconds())/1000, "serial-ms")
									}
								})
							}
						})
					}
				})
			}
		})
	}
}

// consoleServer starts a server over st, as the command wires it (the
// production loaders' wait, a live feed for vmEvents), with the given
// credential share; it answers its address.
func consoleServer(tb testing.TB, st *store.Store, share int) string {
	feed := livefeed.New(st, livefeed.Limits{})
	srv := httptest.NewServer(httpapi.New(servertest.Wire(st, servertest.Options{Services: services.Config{Live: feed}},
		httpapi.Config{CredentialConcurrency: share})))
	tb.Cleanup(func() { feed.Shutdown(); srv.Close() })
	return srv.URL
}

type consoleClient struct {
	url   string
	fleet consoleFleet
	http  *http.Client
}

// send posts one query as token; it answers the status, and -1 with the
// body for a 200 that is not data without errors.
func (c *consoleClient) send(token string, op consoleOperation) (int, string) {
	body := map[string]any{"query": op.query}
	if op.vars != nil {
		body["variables"] = op.vars(c.fleet)
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.url+"/graphql", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	var g struct {
		Data   json.RawMessage
		Errors []any
	}
	if resp.StatusCode == http.StatusOK && (json.Unmarshal(answer, &g) != nil || len(g.Errors) > 0 || len(g.Data) < 3) {
		return -1, string(answer)
	}
	return resp.StatusCode, string(answer)
}

// solo answers each page's query's time alone, the median of 5 after one
// that warms the caches.
func (c *consoleClient) solo(b *testing.B) []time.Duration {
	var out []time.Duration
	for _, op := range consoleOperations {
		var ts []time.Duration
		for i := range 6 {
			start := time.Now()
			if s, body := c.send(c.fleet.key, op); s != http.StatusOK {
				b.Fatalf("%s: %d %.300s", op.page, s, body)
			}
			if i > 0 {
				ts = append(ts, time.Since(start))
			}
		}
		slices.Sort(ts)
		out = append(out, ts[len(ts)/2])
	}
	return out
}

// measure runs b.N bursts of n queries (none: a pause) while the second
// tenant queries, and reports the figures.
func (c *consoleClient) measure(b *testing.B, n int) {
	stop := make(chan struct{})
	var other []time.Duration
	var otherRefused int
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			start := time.Now()
			s, body := c.send(c.fleet.other, consoleOperation{page: "other", query: otherTenantQuery})
			switch {
			case s == http.StatusOK:
				other = append(other, time.Since(start))
			case refusedStatus(s):
				otherRefused++
			default:
				b.Errorf("the second tenant's query: %d %.300s", s, body)
				return
			}
		}
	}()
	var bursts []time.Duration
	refused := 0
	for b.Loop() {
		took, r := c.burst(b, n)
		if n > 0 {
			bursts = append(bursts, took)
		}
		refused += r
	}
	close(stop)
	<-done
	if n > 0 {
		b.ReportMetric(percentileMs(bursts, 50), "burst-p50-ms")
		b.ReportMetric(percentileMs(bursts, 99), "burst-p99-ms")
		b.ReportMetric(float64(refused)/float64(len(bursts)), "refused/burst")
	}
	b.ReportMetric(percentileMs(other, 50), "other-p50-ms")
	b.ReportMetric(percentileMs(other, 99), "other-p99-ms")
	b.ReportMetric(float64(otherRefused), "other-refused")
}

// burst sends n of the console's queries at once (none: it pauses 100
// ms) and answers how long until every answer was in and how many were
// refused. (A function of its own: a b.Loop body starting goroutines
// crashed go1.26's compiler.)
func (c *consoleClient) burst(tb testing.TB, n int) (took time.Duration, refused int) {
	if n == 0 {
		time.Sleep(100 * time.Millisecond)
		return 0, 0
	}
	start := time.Now()
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		op := consoleOperations[i%len(consoleOperations)]
		wg.Go(func() { statuses[i], bodies[i] = c.send(c.fleet.key, op) })
	}
	wg.Wait()
	took = time.Since(start)
	for i, s := range statuses {
		switch {
		case s == http.StatusOK:
		case refusedStatus(s):
			refused++
		default:
			tb.Fatalf("%s: %d %.300s", consoleOperations[i%len(consoleOperations)].page, s, bodies[i])
		}
	}
	return took, refused
}

// refusedStatus reports whether s is one of the gate's refusals.
func refusedStatus(s int) bool {
	return s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout
}

// percentileMs is the p-th percentile of ds (nearest rank) in milliseconds;
// 0 for none.
func percentileMs(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return float64(s[max(0, i-1)].Microseconds()) / 1000
}
