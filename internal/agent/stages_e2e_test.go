package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The real agent binary with the simulated runtime reports every
// provisioning stage of a run in order, and the server keeps each in the
// event log and shows the last on both faces: a restarted pod is
// scheduled, then pulling_image, creating_volume, booting and ready (with
// running). Both engines.
func TestAgentReportsStages(t *testing.T) {
	t.Parallel() // builds and runs its own agent, server and store
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(workloadsFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Handler(st, servertest.Options{}, servertest.Config{}))
		t.Cleanup(srv.Close)
		a := startAgentArgs(t, bin, srv.URL, "dgx-wl", servertest.Enroll(t, st, "dgx-wl", "c-wl"), "--interval", "200ms", "--mock", "dgxh100",
			"--mock-start-delay", "0s")
		defer a.stop(t)

		// pod-lost runs on the node (this test makes it exit nowhere);
		// stop it and start it again: a new run on its node.
		servertest.WaitVM(t, st, a.output, "pod-lost", models.VMRunning, func(vm *models.VM) bool { return vm.ProvisioningStage == "ready" })
		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/pod-lost/stop", "wl-op", ""); code != 200 {
			t.Fatalf("stop: %d %s", code, body)
		}
		servertest.WaitVM(t, st, a.output, "pod-lost", models.VMStopped, func(vm *models.VM) bool { return !vm.TearingDown })
		if code, body := servertest.PostAs(t, srv.URL+"/v1/vms/pod-lost/restart", "wl-op", ""); code != 200 || !strings.Contains(body, `"provisioningStage":"scheduled"`) {
			t.Fatalf("restart: %d %s, want the pod scheduled", code, body)
		}
		vm := servertest.WaitVM(t, st, a.output, "pod-lost", models.VMRunning)
		if vm.ProvisioningStage != "ready" {
			t.Errorf("running pod's stage %q, want ready", vm.ProvisioningStage)
		}

		evs, err := st.EventsAfter(context.Background(), "o-wl", []string{"pod-lost"}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			if e.Transition == models.RestartDeploy {
				got = nil
			}
			got = append(got, fmt.Sprintf("%s:%s>%s:%s", e.Transition, e.From, e.To, e.ProvisioningStage))
		}
		want := []string{
			"restart-deploy:stopped>deploying:scheduled",
			"agent-stage:deploying>deploying:pulling_image",
			"agent-stage:deploying>deploying:creating_volume",
			"agent-stage:deploying>deploying:booting",
			"agent-running:deploying>running:ready",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events from the restart on:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}

		// Both faces show where it stands.
		code, body := getAs(t, srv.URL+"/v1/vms/pod-lost", "wl-op")
		var rest struct{ ProvisioningStage string }
		if err := json.Unmarshal([]byte(body), &rest); code != 200 || err != nil || rest.ProvisioningStage != "ready" {
			t.Errorf("GET /v1/vms/pod-lost: %d %s, want provisioningStage ready", code, body)
		}
		code, body = servertest.PostAs(t, srv.URL+"/graphql", "wl-op", `{"query": "{ vm(id: \"pod-lost\") { provisioningStage } }"}`)
		if code != 200 || body != `{"data":{"vm":{"provisioningStage":"ready"}}}` {
			t.Errorf("GraphQL: %d %s", code, body)
		}
	})
}

// getClient is getAs's client: a request that hangs fails the test.
var getClient = &http.Client{Timeout: 10 * time.Second}

// getAs sends a GET with a bearer token.
func getAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := getClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
