package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	"gpugraph/httpapi/servertest"
	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// Stop, terminate and restart race on one VM from several clients: the VM
// ends in a status the table allows, no GPU is held twice, and the log has
// one event per transition that happened, chained (each event's from is
// the previous one's to) from the status the VM started in to the one it
// ends in.
func TestStopTerminateRestartRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		t.Cleanup(client.CloseIdleConnections)
		ops := []struct{ method, suffix string }{
			{"POST", "/restart"}, {"POST", "/stop"}, {"DELETE", ""}, {"POST", "/restart"}, {"POST", "/stop"}, {"POST", "/restart"},
		}
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

			const clients = 3
			var wg sync.WaitGroup
			start := make(chan struct{})
			ok := make([]int, len(ops)*clients)
			for i := range ok {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					op := ops[i%len(ops)]
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
						ok[i] = 1
					}
				}()
			}
			close(start)
			wg.Wait()

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
				prev := models.VMStatus(from)
				if id == "vm-y" {
					prev = models.VMStopped
				}
				for _, e := range evs {
					tr := models.Step(e.Transition)
					if e.From != prev || e.To != tr.To || !slices.Contains(tr.From, e.From) {
						t.Errorf("round %d: %s event %+v does not follow %s or its row of the table", round, id, e, prev)
					}
					prev = e.To
				}
				if prev != v.Status {
					t.Errorf("round %d: %s's log ends at %s, the row is %s", round, id, prev, v.Status)
				}
				if id == "vm-x" {
					n := 0
					for _, o := range ok {
						n += o
					}
					if n != len(evs) {
						t.Errorf("round %d: %d successes on vm-x, %d events", round, n, len(evs))
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
	})
}
