package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"gpugraph/fixtures"
	"gpugraph/models"
	"gpugraph/server/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// raceWorld: one online node with 8 H100s, 64 cores and an InfiniBand fabric
// of 4 addresses, and a removed node. 32 stopped or failed workloads of one
// InfiniBand-enabled organization want one GPU each:
//
//   - 12 plain VMs on the node and 4 on the removed node (placed afresh,
//     so onto the same node), 16 cores each: CPU lets 4 of them in;
//   - 12 pods on the node and 4 on the removed node: the fabric lets 4 in.
//
// Whatever the order, exactly 8 fit: the VMs stop at 4 only when the GPUs
// ran out, and so do the pods.
func raceWorld() *fixtures.File {
	f := &fixtures.File{
		GpuModels:     []models.GpuModel{{ID: h100, Name: "NVIDIA H100 80GB HBM3", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Fabrics:       []models.Fabric{{ID: "ib-r", IPCapacity: 4}},
		Organizations: []models.Organization{{ID: "org-acme", Name: "Acme", TenantID: 1001, InfinibandEnabled: true}},
		APIKeys:       []fixtures.APIKey{{Token: "acme-operator", OrganizationID: "org-acme", Permissions: []string{"compute.operate"}}},
	}
	addNode(f, "n1", "online", "2.6.1", "ib-r", 64, 1024, 10000, h100, 8)
	addNode(f, "n9", "removed", "2.6.1", "", 64, 1024, 10000, h100, 4)
	for i := range 16 {
		node, reason := "n1", "user_stopped"
		if i >= 12 {
			node, reason = "n9", "node_removed"
		}
		addVM(f, vmSpec{id: fmt.Sprintf("vm-%02d", i), node: node, status: "stopped", reason: reason,
			model: h100, gpus: 1, cpu: 16, ram: 128, disk: 500})
		addVM(f, vmSpec{id: fmt.Sprintf("pod-%02d", i), pod: true, node: node, status: "failed", reason: reason,
			model: h100, gpus: 1})
	}
	return f
}

const (
	raceGPUs   = 8
	raceCPU    = 64
	raceRAM    = 1024
	raceDisk   = 10000
	raceIPs    = 4
	raceRounds = 12 // per engine; RESTART_RACE_ROUNDS overrides
)

type raceAnswer struct {
	vm     string
	status int
	code   string
	retry  string
	node   string
	gpus   []string
}

func TestRestartVMRace(t *testing.T) {
	rounds := raceRounds
	if s := os.Getenv("RESTART_RACE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		f := raceWorld()
		var ids []string
		for _, v := range f.VMs {
			ids = append(ids, v.ID)
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		t.Cleanup(client.CloseIdleConnections)

		for round := range rounds {
			// Reset: every workload stopped or failed where it was, no
			// GPU held.
			if _, err := fixtures.Load(context.Background(), st, f); err != nil {
				t.Fatal(err)
			}
			if n := len(holders(t, st)); n != 0 {
				t.Fatalf("round %d starts with %d GPUs held", round, n)
			}

			// Two restarts of each workload, all at once.
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
			checkRaceRound(t, st, round, answers)
			if t.Failed() {
				return
			}
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
	a.gpus = body.GpuIDs
	return a
}

// raceVMBody is the part of the REST answer the race reads.
type raceVMBody struct {
	Status string   `json:"status"`
	NodeID *string  `json:"nodeId"`
	GpuIDs []string `json:"gpuIds"`
}

func checkRaceRound(t *testing.T, st *store.Store, round int, answers []raceAnswer) {
	t.Helper()
	loserCodes := map[string]bool{"VM_NODE_BUSY": true, "POD_NODE_BUSY": true,
		"INSUFFICIENT_IP_CAPACITY": true, "VM_NO_CAPACITY": true}
	won := map[string]int{}
	perVM := map[string][]raceAnswer{}
	for _, a := range answers {
		perVM[a.vm] = append(perVM[a.vm], a)
		switch {
		case a.status == 200:
			won[a.vm]++
			if a.node != "n1" || len(a.gpus) != 1 {
				t.Errorf("round %d: %s won with node %q GPUs %v", round, a.vm, a.node, a.gpus)
			}
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
	if len(won) != raceGPUs {
		t.Errorf("round %d: %d restarts succeeded, want %d (the room there was)", round, len(won), raceGPUs)
	}

	// The database agrees, and nothing is over capacity.
	var vms []models.VM
	if err := st.DB.Find(&vms).Error; err != nil {
		t.Fatal(err)
	}
	h := holders(t, st)
	deploying, cpu, ram, disk, ips := 0, 0, 0, 0, 0
	for _, v := range vms {
		held := heldBy(h, v.ID)
		if v.Status != models.VMDeploying {
			if won[v.ID] > 0 || len(held) > 0 {
				t.Errorf("round %d: %s is %s, won %d, holds %v", round, v.ID, v.Status, won[v.ID], held)
			}
			continue
		}
		deploying++
		if won[v.ID] != 1 || len(held) != 1 || v.NodeID == nil || *v.NodeID != "n1" {
			t.Errorf("round %d: %s deploying, won %d, holds %v on %v", round, v.ID, won[v.ID], held, v.NodeID)
		}
		if v.IsPod() {
			ips++
		} else {
			cpu, ram, disk = cpu+v.CPUCores, ram+v.RAMGb, disk+v.DiskSizeGb
		}
	}
	if deploying != raceGPUs || len(h) != raceGPUs {
		t.Errorf("round %d: %d deploying, %d GPUs held, want %d", round, deploying, len(h), raceGPUs)
	}
	for g, v := range h {
		if g[:3] != "n1-" {
			t.Errorf("round %d: %s holds %s, not on n1", round, v, g)
		}
	}
	if cpu > raceCPU || ram > raceRAM || disk > raceDisk || ips > raceIPs {
		t.Errorf("round %d: over capacity: %d cores, %d GB RAM, %d GB disk, %d addresses", round, cpu, ram, disk, ips)
	}
}
