package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// queueWorld: six online nodes of 8 H100s on one InfiniBand fabric of 12
// addresses, full: 24 running VMs of 2 GPUs each (the even ones
// org-a's, the odd ones org-b's), and 8 stopped VMs that want 2 GPUs back.
// org-a is InfiniBand-enabled and creates pods (an address each), org-b
// plain VMs.
func queueWorld() *dataset.File {
	const h100 = "h100-80gb"
	f := &dataset.File{
		GPUModels: []models.GPUModel{{ID: h100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Fabrics:   []models.Fabric{{ID: "ib-q", IPCapacity: 12}},
		Organizations: []models.Organization{
			{ID: "org-a", Name: "A", TenantID: 2001, InfinibandEnabled: true},
			{ID: "org-b", Name: "B", TenantID: 2002},
		},
		APIKeys: []dataset.APIKey{
			{Token: "a-operator", OrganizationID: "org-a", Permissions: []string{"compute.operate"}},
			{Token: "b-operator", OrganizationID: "org-b", Permissions: []string{"compute.operate"}},
		},
	}
	fabric := "ib-q"
	for n := 1; n <= 6; n++ {
		node := dataset.Node{Node: models.Node{ID: fmt.Sprintf("q%d", n), Name: fmt.Sprintf("gpu-q%d", n), ClusterID: "c1",
			NodePool: "default", Status: models.NodeOnline, AgentVersion: "2.6.1", FabricID: &fabric,
			CPUCores: 256, RAMGb: 4096, DiskGb: 100000}}
		for g := range 8 {
			node.GPUs = append(node.GPUs, models.GPU{ID: fmt.Sprintf("q%d-g%d", n, g), Index: g,
				UUID: fmt.Sprintf("GPU-q%d-%04d", n, g), Address: fmt.Sprintf("0000:%02X:00.0", 0x18+g), ModelID: h100,
				Health: models.GPUHealthy})
		}
		f.Nodes = append(f.Nodes, node)
	}
	model := h100
	created := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	vm := func(id string, i int, status models.VMStatus, reason string, held []string) dataset.VM {
		node := fmt.Sprintf("q%d", 1+i%6)
		if held != nil {
			node = fmt.Sprintf("q%d", 1+i/4)
		}
		return dataset.VM{VM: models.VM{ID: id, Name: id, OrganizationID: []string{"org-a", "org-b"}[i%2], Status: status,
			StatusReason: reason, CreatedAt: &created, NodeID: &node, GPUModelID: &model, GPUCount: 2, CPUCores: 8, RAMGb: 64,
			DiskSizeGb: 100, Tier: "standard", ResourceSize: "2x-h100-80gb", PricePerHourCents: 450,
			ProvisioningStage: "ready", ComputeClass: "on_demand"}, GPUIDs: held}
	}
	for i := range 24 {
		n, g := 1+i/4, 2*(i%4)
		f.VMs = append(f.VMs, vm(fmt.Sprintf("r-%02d", i), i, models.VMRunning, "",
			[]string{fmt.Sprintf("q%d-g%d", n, g), fmt.Sprintf("q%d-g%d", n, g+1)}))
	}
	for i := range 8 {
		f.VMs = append(f.VMs, vm(fmt.Sprintf("s-%02d", i), i, models.VMStopped, models.ReasonUserStopped, []string{}))
	}
	return f
}

// 32 clients race creates, stops, restarts and terminates on a full fleet,
// against two servers on one PostgreSQL database (one on SQLite, whose
// writer is single), each running its scheduler. Creates queue pending;
// stops and terminates free GPUs that restarts and both schedulers then
// race for. Afterwards every other workload is terminated, and the queue
// drains: every pending VM is placed (pods too, but for those the fabric's
// 12 addresses cannot take), each exactly once — one queue-placed event —
// no GPU is held twice, no node is over capacity, the fabric hands out no
// address twice, and every log follows the lifecycle table.
func TestCreateRaceAcrossReplicas(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			servers, st := startQueueServers(t, d, "--rate-limit", "0", "--restart-rate-limit", "0",
				"--credential-concurrency", "64", "--heartbeat-grace", "1h", "--provision-timeout", "1h")
			raceQueue(t, st, servers)
		})
	}
}

// startQueueServers serves queueWorld with flags on a fresh database of
// engine d: one server on SQLite (its writer is single), two on
// PostgreSQL, so that what a test races or wakes crosses replicas. It
// returns their addresses and a store on the same database; the test's
// end closes the store, then stops the servers.
func startQueueServers(t *testing.T, d store.Dialect, flags ...string) ([]string, *store.Store) {
	t.Helper()
	dbURL := storetest.URL(t, d)
	b, err := json.Marshal(queueWorld())
	if err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(t.TempDir(), "queue.json")
	if err := os.WriteFile(fixture, b, 0o600); err != nil {
		t.Fatal(err)
	}
	flags = append([]string{"--fixtures", fixture}, flags...)
	var servers []string
	for range map[store.Dialect]int{store.SQLite: 1, store.Postgres: 2}[d] {
		addr, cancel, done := startServingOn(t, dbURL, flags...)
		t.Cleanup(func() { cancel(); <-done })
		servers = append(servers, addr)
	}
	st, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return servers, st
}

// raceAnswer is what the race reads of a REST answer.
type queueAnswer struct {
	status int
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct{ Code string }
}

func raceQueue(t *testing.T, st *store.Store, servers []string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	do := func(server, token, method, path string, body any) queueAnswer {
		var rd *strings.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		} else {
			rd = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, "http://"+server+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return queueAnswer{}
		}
		defer resp.Body.Close()
		a := queueAnswer{status: resp.StatusCode}
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Errorf("%s %s: %d, %v", method, path, resp.StatusCode, err)
		}
		return a
	}
	create := func(i, n int) map[string]any {
		name := fmt.Sprintf("c-%02d-%d", i, n)
		if i%2 == 0 {
			return map[string]any{"name": name, "capabilityTier": "pod", "gpuModelId": "h100-80gb", "gpuCount": 1,
				"imageUrl": "nvcr.io/nvidia/pytorch:24.05-py3", "volumeGb": 50}
		}
		return map[string]any{"name": name, "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}
	}

	const clients = 32
	var (
		mu      sync.Mutex
		created = map[string]string{} // id → the status its 201 answered
		wg      sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := []string{"a-operator", "b-operator"}[i%2]
			<-start
			var own string
			for k := range 4 {
				server := servers[(i+k)%len(servers)]
				var a queueAnswer
				var what string
				if k == 3 && i%4 != 1 && i%4 != 2 && own == "" {
					// Its create answered 503 VM_NODE_BUSY: it has no VM of
					// its own to terminate or stop.
					continue
				}
				switch {
				case k == 0 || k == 3 && i%4 == 2:
					what = "create"
					a = do(server, token, "POST", "/v1/vms", create(i, k))
					if a.status == http.StatusCreated {
						mu.Lock()
						created[a.ID] = a.Status
						mu.Unlock()
						if own == "" {
							own = a.ID
						}
					}
				case k == 1:
					what = "stop"
					a = do(server, token, "POST", fmt.Sprintf("/v1/vms/r-%02d/stop", i%24), nil)
				case k == 2 && i%4 < 2:
					what = "restart"
					a = do(server, token, "POST", fmt.Sprintf("/v1/vms/r-%02d/restart", i%24), nil)
				case k == 2:
					what = "restart"
					a = do(server, token, "POST", fmt.Sprintf("/v1/vms/s-%02d/restart", i%8), nil)
				case i%4 == 0:
					what = "terminate"
					a = do(server, token, "DELETE", "/v1/vms/"+own, nil)
				case i%4 == 1:
					what = "terminate"
					a = do(server, token, "DELETE", fmt.Sprintf("/v1/vms/r-%02d", (i+12)%24), nil)
				default:
					what = "stop"
					a = do(server, token, "POST", "/v1/vms/"+own+"/stop", nil)
				}
				ok := a.status == http.StatusOK || a.status == http.StatusConflict || a.status == http.StatusServiceUnavailable
				if what == "create" {
					// Or the contract's answer 8: every node it tried was
					// taken by a racing write meanwhile (try again).
					ok = a.status == http.StatusCreated && (a.Status == "pending" || a.Status == "deploying") ||
						a.status == http.StatusServiceUnavailable && a.Error != nil && a.Error.Code == "VM_NODE_BUSY"
				}
				if !ok {
					t.Errorf("client %d, %s: %d %+v", i, what, a.status, a)
				}
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	raced := time.Since(began)
	if t.Failed() {
		return
	}

	// Free everything else: the queue is all that is left to place.
	for i := range 24 {
		a := do(servers[i%len(servers)], []string{"a-operator", "b-operator"}[i%2], "DELETE", fmt.Sprintf("/v1/vms/r-%02d", i), nil)
		if a.status != http.StatusOK && a.status != http.StatusConflict && a.status != http.StatusNotFound {
			t.Errorf("terminate r-%02d: %d %+v", i, a.status, a)
		}
	}
	for i := range 8 {
		a := do(servers[i%len(servers)], []string{"a-operator", "b-operator"}[i%2], "DELETE", fmt.Sprintf("/v1/vms/s-%02d", i), nil)
		if a.status != http.StatusOK && a.status != http.StatusConflict && a.status != http.StatusNotFound {
			t.Errorf("terminate s-%02d: %d %+v", i, a.status, a)
		}
	}

	// The schedulers are woken by the terminations; wait until what is
	// left pending is pods the full fabric cannot take.
	var pending []models.VM
	for i := 0; ; i++ {
		pending = nil
		storetest.Scan(t, st, &pending, "SELECT * FROM vms WHERE status = ? ORDER BY id", models.VMPending)
		addresses := storetest.Count(t, st, "vms", "capability_tier = ? AND status IN ?", models.TierPod, models.HoldingStatuses)
		settled := true
		for _, v := range pending {
			if !v.IsPod() || addresses < 12 {
				settled = false
			}
		}
		if settled {
			break
		}
		if i == 400 {
			t.Fatalf("after 20 s, %d rows still pending with %d of 12 addresses held: %v", len(pending), addresses, ids(pending))
		}
		time.Sleep(50 * time.Millisecond)
	}

	drained := time.Since(began) - raced
	for _, v := range storetest.Violations(t, st) {
		t.Error(v)
	}
	queued, placedFromQueue := 0, 0
	for id, answered := range created {
		for _, msg := range storetest.LogViolations(t, st, id, models.VMPending) {
			t.Error(msg)
		}
		var evs []models.VMEvent
		storetest.Scan(t, st, &evs, "SELECT * FROM vm_events WHERE vm_id = ? ORDER BY id", id)
		if len(evs) == 0 {
			t.Errorf("%s: no event", id)
			continue
		}
		want := models.CreatePlaced
		if answered == "pending" {
			want = models.CreateQueued
			queued++
		}
		if evs[0].Transition != want {
			t.Errorf("%s answered %s, its first event is %s", id, answered, evs[0].Transition)
		}
		placements, leftQueue := 0, false
		for _, e := range evs {
			if e.Transition == models.QueuePlaced {
				placements++
			}
			if e.From == models.VMPending && e.To != models.VMPending {
				leftQueue = true
			}
		}
		terminatedPending := len(evs) > 1 && evs[1].Transition == models.UserTerminate
		switch {
		case placements > 1:
			t.Errorf("%s placed %d times: %v", id, placements, evs)
		case answered == "pending" && leftQueue && !terminatedPending && placements != 1:
			t.Errorf("%s left the queue without one queue-placed event: %v", id, evs)
		case answered == "deploying" && placements != 0:
			t.Errorf("%s was placed at create and by the queue: %v", id, evs)
		}
		placedFromQueue += placements
	}
	if queued == 0 || placedFromQueue == 0 {
		t.Errorf("%d creates queued, %d placed from the queue: the race did not race the scheduler", queued, placedFromQueue)
	}
	t.Logf("%d creates, %d queued, %d placed by the scheduler, %d pods left pending for want of an address; raced %v, drained %v",
		len(created), queued, placedFromQueue, len(pending), raced.Round(time.Millisecond), drained.Round(time.Millisecond))
}

func ids(vms []models.VM) []string {
	var out []string
	for _, v := range vms {
		out = append(out, v.ID)
	}
	return slices.Clip(out)
}
