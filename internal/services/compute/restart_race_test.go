package compute_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// raceWorld: one online node with 8 H100s, 64 cores and an InfiniBand fabric
// of 4 addresses, and a removed node. 32 stopped or failed workloads of one
// InfiniBand-enabled organization want one GPU each:
//
//   - 12 plain VMs on the node and 4 on the removed node (placed afresh,
//     so onto the same node), 16 cores each: CPU lets 4 of them in;
//   - 12 pods on the node and 4 on the removed node: the fabric lets 4 in.
//
// Whatever the order, exactly 8 fit: the VMs stop short of 4 only when the
// GPUs ran out, and so do the pods.
func raceWorld() *dataset.File {
	f := &dataset.File{
		GPUModels:     []models.GPUModel{{ID: servertest.H100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Fabrics:       []models.Fabric{{ID: "ib-r", IPCapacity: 4}},
		Organizations: []models.Organization{{ID: "org-acme", Name: "Acme", TenantID: 1001, InfinibandEnabled: true}},
		APIKeys:       []dataset.APIKey{{Token: "acme-operator", OrganizationID: "org-acme", Permissions: []string{"compute.operate"}}},
	}
	servertest.AddNode(f, "n1", "online", "2.6.1", "ib-r", 64, 1024, 10000, servertest.H100, 8)
	servertest.AddNode(f, "n9", "removed", "2.6.1", "", 64, 1024, 10000, servertest.H100, 4)
	for i := range 16 {
		node, reason := "n1", "user_stopped"
		if i >= 12 {
			node, reason = "n9", "node_removed"
		}
		servertest.AddVM(f, servertest.VMSpec{ID: fmt.Sprintf("vm-%02d", i), Node: node, Status: "stopped", Reason: reason,
			Model: servertest.H100, GPUs: 1, CPU: 16, RAM: 128, Disk: 500})
		servertest.AddVM(f, servertest.VMSpec{ID: fmt.Sprintf("pod-%02d", i), Pod: true, Node: node, Status: "failed", Reason: reason,
			Model: servertest.H100, GPUs: 1})
	}
	return f
}

// fabricRaceWorld: two online nodes with 8 H100s each on one fabric of 3
// addresses, 8 failed pods on each. GPUs are plenty; only the fabric, which
// the two nodes' locks do not cover, limits them: exactly 3 fit.
func fabricRaceWorld() *dataset.File {
	f := &dataset.File{
		GPUModels:     []models.GPUModel{{ID: servertest.H100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Fabrics:       []models.Fabric{{ID: "ib-f", IPCapacity: 3}},
		Organizations: []models.Organization{{ID: "org-acme", Name: "Acme", TenantID: 1001, InfinibandEnabled: true}},
		APIKeys:       []dataset.APIKey{{Token: "acme-operator", OrganizationID: "org-acme", Permissions: []string{"compute.operate"}}},
	}
	servertest.AddNode(f, "n1", "online", "2.6.1", "ib-f", 64, 1024, 10000, servertest.H100, 8)
	servertest.AddNode(f, "n2", "online", "2.6.1", "ib-f", 64, 1024, 10000, servertest.H100, 8)
	for i := range 16 {
		servertest.AddVM(f, servertest.VMSpec{ID: fmt.Sprintf("pod-%02d", i), Pod: true, Node: fmt.Sprintf("n%d", 1+i%2), Status: "failed",
			Model: servertest.H100, GPUs: 1})
	}
	return f
}

// raceRounds is per engine and scenario; RESTART_RACE_ROUNDS overrides.
const raceRounds = 10

type raceAnswer struct {
	vm     string
	status int
	code   string
	retry  string
	node   string
	gpus   []string
}

// TestRestartVMRace restarts every workload twice at once through the HTTP
// server, round after round, and checks that exactly as many succeeded as
// there was room for, that every loser got 503 (or 409 VM_NOT_READY after
// its twin won), and that no GPU, address, core, GB of RAM or disk is held
// beyond what there is.
func TestRestartVMRace(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	rounds := raceRounds
	if s := os.Getenv("RESTART_RACE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	scenarios := []struct {
		name  string
		world *dataset.File
		wins  int
	}{
		{"one node", raceWorld(), 8},
		{"one fabric, two nodes", fabricRaceWorld(), 3},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		t.Cleanup(client.CloseIdleConnections)
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				var ids []string
				for _, v := range sc.world.VMs {
					ids = append(ids, v.ID)
				}
				for round := range rounds {
					// Reset: every workload stopped or failed where it
					// was, no GPU held.
					servertest.ResetWorld(t, st, sc.world)
					answers := make([]raceAnswer, 2*len(ids))
					var wg sync.WaitGroup
					start := make(chan struct{})
					for i := range answers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							answers[i] = raceRestart(client, env, ids[i%len(ids)])
						}()
					}
					close(start)
					wg.Wait()
					checkRaceRound(t, st, round, sc.wins, answers)
					if t.Failed() {
						return
					}
				}
			})
		}
	})
}

func raceRestart(client *http.Client, env *servertest.Env, id string) raceAnswer {
	a := raceAnswer{vm: id}
	req, _ := http.NewRequest(http.MethodPost, env.Srv.URL+"/v1/vms/"+id+"/restart", nil)
	req.Header.Set("Authorization", "Bearer acme-operator")
	resp, err := client.Do(req)
	if err != nil {
		a.code = "transport: " + err.Error()
		return a
	}
	defer resp.Body.Close()
	a.status, a.retry = resp.StatusCode, resp.Header.Get("Retry-After")
	var body struct {
		Error *struct{ Code, Message string }
		raceVMBody
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		a.code = "body: " + err.Error()
		return a
	}
	if body.Error != nil {
		a.code = body.Error.Code
	}
	if body.NodeID != nil {
		a.node = *body.NodeID
	}
	a.gpus = body.GPUIDs
	return a
}

// raceVMBody is the part of the REST answer the race reads.
type raceVMBody struct {
	Status string   `json:"status"`
	NodeID *string  `json:"nodeId"`
	GPUIDs []string `json:"gpuIds"`
}

func checkRaceRound(t *testing.T, st *store.Store, round, wantWins int, answers []raceAnswer) {
	t.Helper()
	loserCodes := map[string]bool{"VM_NODE_BUSY": true, "POD_NODE_BUSY": true,
		"INSUFFICIENT_IP_CAPACITY": true, "VM_NO_CAPACITY": true}
	won := map[string]raceAnswer{}
	perVM := map[string][]raceAnswer{}
	for _, a := range answers {
		perVM[a.vm] = append(perVM[a.vm], a)
		switch {
		case a.status == 200:
			if _, twice := won[a.vm]; twice {
				t.Errorf("round %d: %s won twice", round, a.vm)
			}
			won[a.vm] = a
		case a.status == 503 && loserCodes[a.code]:
			if a.retry == "" {
				t.Errorf("round %d: %s got 503 %s without Retry-After", round, a.vm, a.code)
			}
		case a.status == 409 && a.code == "VM_NOT_READY":
		default:
			t.Errorf("round %d: %s answered %d %q", round, a.vm, a.status, a.code)
		}
	}
	// Each workload either won once and its twin then saw it deploying,
	// or both lost for want of room.
	for vm, as := range perVM {
		s0, s1 := as[0].status, as[1].status
		if s0 > s1 {
			s0, s1 = s1, s0
		}
		if !(s0 == 200 && s1 == 409) && !(s0 == 503 && s1 == 503) {
			t.Errorf("round %d: %s answered %d %s and %d %s", round, vm, as[0].status, as[0].code, as[1].status, as[1].code)
		}
	}
	if len(won) != wantWins {
		t.Errorf("round %d: %d restarts succeeded, want %d (the room there was)", round, len(won), wantWins)
	}
	checkHoldings(t, st, round, won)
}

// checkHoldings checks the database against the winners and every capacity:
// each winner deploying on the node it was answered with, holding as many
// healthy GPUs of its model there as it asked for; nobody else holding
// anything; and every guarantee of placement (storetest.Violations): no
// node over its CPU, RAM or disk, no fabric over its addresses.
func checkHoldings(t *testing.T, st *store.Store, round int, won map[string]raceAnswer) {
	t.Helper()
	for _, v := range storetest.Violations(t, st) {
		t.Errorf("round %d: %s", round, v)
	}
	var (
		vms  []models.VM
		gpus []models.GPU
	)
	storetest.Scan(t, st, &vms, "SELECT * FROM vms")
	storetest.Scan(t, st, &gpus, "SELECT * FROM gpus")
	gpuByID := map[string]models.GPU{}
	for _, g := range gpus {
		gpuByID[g.ID] = g
	}
	h := servertest.Holders(t, st)
	held := 0
	for _, v := range vms {
		mine := servertest.HeldBy(h, v.ID)
		a, winner := won[v.ID]
		if !v.Status.Holds() {
			if winner || len(mine) > 0 {
				t.Errorf("round %d: %s is %s, won %v, holds %v", round, v.ID, v.Status, winner, mine)
			}
			continue
		}
		held += len(mine)
		if !winner || v.Status != models.VMDeploying || v.NodeID == nil || *v.NodeID != a.node ||
			len(mine) != v.GPUCount || !servertest.SameStrings(mine, a.gpus) {
			t.Errorf("round %d: %s %s on %v holding %v; answered %+v", round, v.ID, v.Status, v.NodeID, mine, a)
			continue
		}
		for _, id := range mine {
			if g := gpuByID[id]; g.NodeID != *v.NodeID || g.Health != models.GPUHealthy || g.ModelID != *v.GPUModelID {
				t.Errorf("round %d: %s holds %+v", round, v.ID, g)
			}
		}
	}
	if held != len(h) {
		t.Errorf("round %d: %d GPUs held, %d of them by the deploying winners", round, len(h), held)
	}
}
