package agent_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpugraph/internal/agent"
	"gpugraph/internal/agent/sim"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The node agent binary against the server, end to end, on the simulated
// DGX H100: it registers the fixture's node, GPU 3 fails with XID 79, the
// agent stops and the node goes offline with its VM and pod interrupted,
// the agent starts again and they resume.
func TestAgentEndToEnd(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "gpugraph/cmd/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agent: %v\n%s", err, out)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const grace = time.Second
		if _, err := dataset.LoadFile(context.Background(), st, []byte(e2eFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(context.Background())
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			sweep.NewRunner(sweep.New(st), sweep.Options{Grace: grace, Interval: 100 * time.Millisecond}).Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-swept })
		env := &servertest.Env{T: t, Store: st, Srv: srv}

		// The agent exchanges its bootstrap token at its first start and
		// reports with the credential it kept from then on.
		boot, credFile := servertest.Enroll(t, st, "dgx-e2e", "c-e2e"), filepath.Join(t.TempDir(), "credential.json")
		a := startAgent(t, bin, srv.URL, boot, credFile)
		seen := waitNode(t, env, a, "8 GPUs, GPU 3 failed with XID 79", func(n e2eNode) bool {
			return n.Status == "ONLINE" && len(n.GPUs) == 8 && n.GPUs[3].Health == "FAILED" && n.GPUs[3].Utilization != nil
		})
		for i, g := range seen.GPUs {
			want := "HEALTHY"
			if i == 3 {
				want = "FAILED"
			}
			if g.Index != i || g.Health != want || (i == 3) != (g.FailedReason != nil && *g.FailedReason == "XID 79") {
				t.Errorf("GPU %d: %+v", i, g)
			}
		}
		if seen.AgentVersion != agent.Version || seen.LastHeartbeatAt == nil || seen.vms() != "pod-e2e=RUNNING/ vm-e2e=RUNNING/" {
			t.Errorf("node after the first reports: %+v, vms %s", seen, seen.vms())
		}

		a.stop(t)
		waitNode(t, env, a, "node offline, its VM and pod interrupted node_lost", func(n e2eNode) bool {
			return n.Status == "OFFLINE" && n.vms() == "pod-e2e=INTERRUPTED/node_lost vm-e2e=INTERRUPTED/node_lost" &&
				n.Vms[0].InterruptedAt != nil && n.Vms[1].InterruptedAt != nil
		})

		// The new agent's inventory reports GPU 3 healthy until the
		// simulated XID comes again; the server never heals it.
		a = startAgent(t, bin, srv.URL, boot, credFile)
		waitNode(t, env, a, "node online, its VM and pod running again", func(n e2eNode) bool {
			if len(n.GPUs) == 8 && n.GPUs[3].Health != "FAILED" {
				t.Fatalf("GPU 3 healed by a report: %+v", n.GPUs[3])
			}
			return n.Status == "ONLINE" && n.vms() == "pod-e2e=RUNNING/ vm-e2e=RUNNING/" &&
				n.Vms[0].InterruptedAt == nil && n.Vms[1].InterruptedAt == nil
		})
		a.stop(t)
	})
}

// e2eFixture holds the node the agent will report as, with the GPU UUIDs
// the simulated server derives from its name, a VM and a pod on it, and
// a reader's key.
func e2eFixture(t *testing.T) string {
	m, err := sim.NewServer("dgxh100", "dgx-e2e")
	if err != nil {
		t.Fatal(err)
	}
	var gpus []string
	for i := range 8 {
		gpus = append(gpus, fmt.Sprintf(`{"id": "e2e-g%d", "index": %d, "uuid": %q, "modelId": "h100"}`, i, i, m.Device(i).UUID))
	}
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-e2e", "name": "E2E", "tenantId": 77}],
 "apiKeys": [{"token": "e2e-reader", "organizationId": "o-e2e", "permissions": ["compute.read"]}],
 "nodes": [{"id": "n-e2e", "name": "dgx-e2e", "clusterId": "c-e2e", "status": "online", "agentVersion": "2.5.0", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
            "gpus": [` + strings.Join(gpus, ",") + `]}],
 "vms": [{"id": "vm-e2e", "name": "train", "organizationId": "o-e2e", "nodeId": "n-e2e", "status": "running",
          "gpuModelId": "h100", "gpuCount": 2, "gpuIds": ["e2e-g0", "e2e-g1"], "cpuCores": 32, "ramGb": 256, "diskSizeGb": 500},
         {"id": "pod-e2e", "name": "notebook", "organizationId": "o-e2e", "nodeId": "n-e2e", "status": "running", "capabilityTier": "pod",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["e2e-g3"], "volumeGb": 100}]
}`
}

type e2eNode struct {
	Status          string
	AgentVersion    string
	LastHeartbeatAt *string
	GPUs            []struct {
		Index        int
		UUID         string
		Health       string
		FailedReason *string
		Utilization  *int
	}
	Vms []struct {
		ID            string
		Status        string
		StatusReason  string
		InterruptedAt *string
	}
}

func (n e2eNode) vms() string {
	var out []string
	for _, v := range n.Vms {
		out = append(out, v.ID+"="+v.Status+"/"+v.StatusReason)
	}
	return strings.Join(out, " ")
}

// waitNode polls the node through GraphQL until ok holds, for at most 20s.
func waitNode(t *testing.T, env *servertest.Env, a *agentProc, what string, ok func(e2eNode) bool) e2eNode {
	t.Helper()
	const q = `{ node(id: "n-e2e") { status agentVersion lastHeartbeatAt
		gpus { index uuid health failedReason utilization }
		vms { id status statusReason interruptedAt } } }`
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for {
		r := env.GraphQL("e2e-reader", q, nil)
		var got struct{ Node e2eNode }
		env.Decode(r, &got)
		if ok(got.Node) {
			return got.Node
		}
		last = string(r.Data)
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s; last seen:\n%s\nagent output:\n%s", what, last, a.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type agentProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done

	out lockedbuf.Buffer // its stdout and stderr
}

func (a *agentProc) Write(p []byte) (int, error) { return a.out.Write(p) }

func (a *agentProc) output() string {
	s := a.out.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// startAgent runs the agent as dgx-e2e with its bootstrap token, keeping
// its credential in credFile.
func startAgent(t *testing.T, bin, url, bootstrapToken, credFile string) *agentProc {
	t.Helper()
	return runAgent(t, bin, withBootstrapToken(bootstrapToken), "--server", url, "--node-name", "dgx-e2e", "--interval", "200ms",
		"--credential-file", credFile, "--mock", "dgxh100", "--mock-xid", "3:79")
}

// withBootstrapToken is this process's environment with only the agent's
// bootstrap token (kept off the process list).
func withBootstrapToken(token string) []string {
	return append(withoutTokens(os.Environ()), "GPUGRAPH_BOOTSTRAP_TOKEN="+token)
}

// runAgent starts the agent binary with env and args, and kills it when the
// test ends if it has not stopped by then.
func runAgent(t *testing.T, bin string, env []string, args ...string) *agentProc {
	t.Helper()
	a := &agentProc{done: make(chan struct{})}
	a.cmd = exec.Command(bin, args...)
	a.cmd.Env = env
	a.cmd.Stdout, a.cmd.Stderr = a, a
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
		default:
			_ = a.cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

// stop sends SIGTERM and expects a clean exit.
func (a *agentProc) stop(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
		if a.err != nil {
			t.Fatalf("agent exit after SIGTERM: %v\n%s", a.err, a.output())
		}
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		t.Fatalf("agent still running 20s after SIGTERM\n%s", a.output())
	}
}
