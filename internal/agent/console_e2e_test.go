package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/sim"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The simulated runtime keeps VMs' consoles.
var _ agent.ConsoleReader = (*sim.Runtime)(nil)

// The real agent binary with the simulated runtime, both engines: a VM
// created with two SSH public keys runs on its node, whose runtime is
// handed the keys (its console says how many cloud-init authorized), and
// the agent pushes the console, which GET /v1/vms/{id}/console shows:
// the boot lines of the run, then the login prompt. A stop's power-off
// line follows it.
func TestAgentPushesTheConsole(t *testing.T) {
	t.Parallel() // builds and runs its own agent, server and store
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	var keys []string
	for i := range 2 {
		keys = append(keys, testSSHKeyNamed(t, fmt.Sprintf("key-%d", i)))
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(workloadsFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Handler(st, servertest.Options{}, servertest.Config{}))
		t.Cleanup(srv.Close)
		a := startAgentArgs(t, bin, srv.URL, "dgx-wl", servertest.Enroll(t, st, "dgx-wl", "c-wl"), "--interval", "200ms", "--mock", "dgxh100",
			"--mock-start-delay", "0s")
		defer a.stop(t)

		body, _ := json.Marshal(map[string]any{"name": "console", "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 4, "ramGb": 32,
			"diskSizeGb": 50, "sshPublicKeys": keys})
		code, created := servertest.PostAs(t, srv.URL+"/v1/vms", "wl-op", string(body))
		var vm struct{ ID string }
		if err := json.Unmarshal([]byte(created), &vm); code != 201 || err != nil {
			t.Fatalf("create: %d %s", code, created)
		}
		servertest.WaitVM(t, st, a.output, vm.ID, models.VMRunning)

		console := func() string {
			t.Helper()
			code, b := getAs(t, srv.URL+"/v1/vms/"+vm.ID+"/console", "wl-op")
			var c struct {
				Output []byte
				Bytes  int
			}
			if err := json.Unmarshal([]byte(b), &c); code != 200 || err != nil || c.Bytes != len(c.Output) {
				t.Fatalf("GET console: %d %s", code, b)
			}
			return string(c.Output)
		}
		waitConsole := func(want string) {
			t.Helper()
			deadline := time.Now().Add(20 * time.Second)
			for got := console(); got != want; got = console() {
				if time.Now().After(deadline) {
					t.Fatalf("console %q, want %q\nagent output:\n%s", got, want, a.output())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		boot := fmt.Sprintf("SeaBIOS (simulated)\r\nBooting %s, generation 1: 4 vCPUs, 32 GB RAM, 1 GPUs\r\n"+
			"cloud-init: 2 SSH public keys authorized for the default user\r\n%s login: ", vm.ID, vm.ID)
		waitConsole(boot)

		if code, b := servertest.PostAs(t, srv.URL+"/v1/vms/"+vm.ID+"/stop", "wl-op", ""); code != 200 {
			t.Fatalf("stop: %d %s", code, b)
		}
		waitConsole(boot + "ACPI: power button pressed; the system is going down for poweroff\r\n")
	})
}
