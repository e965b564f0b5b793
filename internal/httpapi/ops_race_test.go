package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Stop, terminate and restart race on one VM from several clients, and the
// node's agent reports running whatever it is told to run while they do:
// the VM ends in a status the table allows, no GPU is held twice, and the
// log has one event per transition that happened, chained (each event's
// from is the previous one's to) from the status the VM started in to the
// one it ends in, and every event not by a user is its agent's report.
func TestStopTerminateRestartRace(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		t.Cleanup(client.CloseIdleConnections)
		ops := []struct{ method, suffix string }{
			{"POST", "/restart"}, {"POST", "/stop"}, {"POST", "/restart"}, {"POST", "/restart"}, {"POST", "/stop"}, {"POST", "/restart"},
		}
		terminate := struct{ method, suffix string }{"DELETE", ""}
		agentMoves := 0 // agent-running events over all rounds
		for round := range 6 {
			from := []string{"running", "stopped"}[round%2]
			f := newWorld()
			spec := vmSpec{id: "vm-x", node: "n6", status: from, model: h100, gpus: 2, cpu: 4, ram: 16, disk: 50}
			if from == "running" {
				spec.held = []string{"n6-g0", "n6-g1"}
			}
			addVM(f, spec)
			addVM(f, vmSpec{id: "vm-y", node: "n6", status: "stopped", model: h100, gpus: 2, cpu: 4, ram: 16, disk: 50})
			resetOps(t, st, f)
			cred := servertest.NodeCredential(t, st, "gpu-node-6", "c1")

			const clients = 3
			var wg sync.WaitGroup
			start := make(chan struct{})
			ok := make([]int, len(ops)*clients)
			for i := range ok {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Several operations each, so that the agent's
					// heartbeats fall between them.
					for k := range 4 {
						op := ops[(i+k)%len(ops)]
						if k == 3 && i%6 == 5 {
							op = terminate // late, so that the agent has runs to report first
						}
						id := "vm-x"
						if i%5 == 4 {
							id = "vm-y" // another VM claiming on the same node
						}
						req, _ := http.NewRequest(op.method, env.Srv.URL+"/v1/vms/"+id+op.suffix, nil)
						req.Header.Set("Authorization", "Bearer acme-operator")
						resp, err := client.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						switch resp.StatusCode {
						case 200, 409, 503:
						default:
							t.Errorf("%s %s: %d %s", op.method, id, resp.StatusCode, b)
						}
						if resp.StatusCode == 200 && id == "vm-x" {
							ok[i]++
						}
						time.Sleep(time.Duration(i%3+1) * 20 * time.Millisecond)
					}
				}()
			}
			// The node's agent: each heartbeat reports running what the
			// previous answer told it to run, at that answer's generation.
			agentDone := make(chan struct{})
			agentOK := make(chan int, 1)
			go func() {
				<-start
				var told []agentapi.Assignment
				moved := 0
				for {
					var ws []agentapi.WorkloadReport
					for _, a := range told {
						ws = append(ws, agentapi.WorkloadReport{ID: a.ID, Generation: a.Generation, State: agentapi.StateRunning})
					}
					body, _ := json.Marshal(agentapi.HeartbeatRequest{NodeName: "gpu-node-6", AgentVersion: "2.6.1", Workloads: ws,
						Sequence: servertest.Sequence()})
					req, _ := http.NewRequest("POST", env.Srv.URL+agentapi.HeartbeatPath, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+cred)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						t.Error(err)
						agentOK <- moved
						return
					}
					var ans agentapi.HeartbeatResponse
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || json.Unmarshal(b, &ans) != nil {
						t.Errorf("heartbeat: %d %s", resp.StatusCode, b)
						agentOK <- moved
						return
					}
					told = ans.Workloads
					moved++
					select {
					case <-agentDone:
						agentOK <- moved
						return
					default:
					}
				}
			}()
			close(start)
			wg.Wait()
			close(agentDone)
			if n := <-agentOK; n == 0 {
				t.Errorf("round %d: the agent sent no heartbeat", round)
			}

			for _, id := range []string{"vm-x", "vm-y"} {
				v := vmRow(t, st, id)
				if !slices.Contains(models.VMStatuses, v.Status) {
					t.Fatalf("round %d: %s ends %q", round, id, v.Status)
				}
				held := heldBy(holders(t, st), id)
				if v.Status.Holds() != (len(held) == 2) {
					t.Errorf("round %d: %s is %s and holds %v", round, id, v.Status, held)
				}
				evs := eventsOf(t, st, id)
				first := models.VMStatus(from)
				if id == "vm-y" {
					first = models.VMStopped
				}
				for _, msg := range storetest.LogViolations(t, st, id, first) {
					t.Errorf("round %d: %s", round, msg)
				}
				if id == "vm-x" {
					n := 0
					for _, o := range ok {
						n += o
					}
					byUsers := 0
					for _, e := range evs {
						if e.ActorKind == models.ActorUser {
							byUsers++
						} else if e.Transition == models.AgentRunning {
							agentMoves++
						}
						agentReport := e.Transition == models.AgentRunning || e.Transition == models.AgentRestarted || e.Transition == models.AgentGone || e.Transition == models.AgentStage
						if e.ActorKind != models.ActorUser && (!agentReport || e.ActorKind != models.ActorAgent) {
							t.Errorf("round %d: vm-x event %+v is neither a user's nor its agent's report", round, e)
						}
					}
					if n != byUsers {
						t.Errorf("round %d: %d successes on vm-x, %d events by users", round, n, byUsers)
					}
				}
			}
			// No GPU is held twice: the holder column holds one VM; and the
			// two VMs never hold more than the node has.
			h := holders(t, st)
			if len(h) > 4 {
				t.Errorf("round %d: %d GPUs held on a 4-GPU node: %v", round, len(h), h)
			}
			if t.Failed() {
				t.Log(fmt.Sprint(eventsOf(t, st, "vm-x")))
				return
			}
		}
		// Whether a report lands inside a deploying window depends on the
		// scheduler; the checks above hold either way, and the log says
		// how often it happened.
		t.Logf("the agent's reports moved vm-x %d times over the rounds", agentMoves)
	})
}
