package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// Node identity end to end with the real agent binary on the simulated DGX
// H100: the operator enrolls dgx-enr; the agent, given only the bootstrap
// token, exchanges it, keeps the credential in --credential-file and
// registers the node in the enrollment's cluster; restarted with the spent
// token it reports with the kept credential; without the file the spent
// token stops it; and no API key may report the node.
func TestAgentEnrollmentEndToEnd(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)
		s, b := servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-enr", "clusterId": "c1"})
		var e struct{ BootstrapToken string }
		if err := json.Unmarshal([]byte(b), &e); s != 201 || err != nil {
			t.Fatalf("enroll: %d %s", s, b)
		}
		credFile := filepath.Join(t.TempDir(), "credential.json")
		run := func(extra ...string) *agentProc {
			args := append([]string{"--server", env.Srv.URL, "--node-name", "dgx-enr", "--interval", "200ms", "--mock", "dgxh100"}, extra...)
			return runAgent(t, bin, withoutTokens(os.Environ()), args...)
		}

		a := run("--bootstrap-token", e.BootstrapToken, "--credential-file", credFile)
		first := waitReported(t, st, a, 0)
		if first.ClusterID != "c1" || first.Status != models.NodeOnline || first.gpus != 8 {
			t.Errorf("node after the first reports: %+v", first)
		}
		info, err := os.Stat(credFile)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("credential file: %v %v", info, err)
		}
		raw, _ := os.ReadFile(credFile)
		var cred agentapi.RegisterResponse
		if err := json.Unmarshal(raw, &cred); err != nil || cred.NodeName != "dgx-enr" || !strings.HasPrefix(cred.Credential, agentapi.CredentialPrefix) {
			t.Fatalf("credential file holds %s", raw)
		}
		a.stop(t)

		// Restarted with the spent token: the kept credential reports, with
		// sequences above the first run's.
		a = run("--bootstrap-token", e.BootstrapToken, "--credential-file", credFile)
		waitReported(t, st, a, first.sequence)
		if !strings.Contains(a.output(), "reporting with the node credential") {
			t.Errorf("the restarted agent did not use its kept credential:\n%s", a.output())
		}
		a.stop(t)

		// Without the file, the spent token is refused and the agent stops.
		a = run("--bootstrap-token", e.BootstrapToken, "--credential-file", filepath.Join(t.TempDir(), "none.json"))
		select {
		case <-a.done:
			if a.err == nil || !strings.Contains(a.output(), "already exchanged") {
				t.Errorf("agent with a spent token: %v\n%s", a.err, a.output())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("agent with a spent token still running\n%s", a.output())
		}

		// The node's credential cannot report another node, and an API key
		// cannot report this one.
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, cred.Credential, servertest.HeartbeatOf("dgx-a", time.Now().UnixNano()))
		servertest.Expect(t, "dgx-enr's credential reporting dgx-a", s, b, 403, "NODE_IDENTITY_MISMATCH")
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx-enr", 0))
		servertest.Expect(t, "an API key reporting dgx-enr", s, b, 403, "NODE_CREDENTIAL_REQUIRED")
	})
}

type reportedNode struct {
	ClusterID string
	Status    models.NodeStatus
	sequence  int64
	gpus      int
}

// waitReported waits, for at most 20 s, until dgx-enr is online with a
// report sequence above after and a heartbeat after its inventory.
func waitReported(t *testing.T, st *store.Store, a *agentProc, after int64) reportedNode {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var n reportedNode
	for {
		var rows []struct {
			ClusterID      string
			Status         models.NodeStatus
			ReportSequence int64
		}
		storetest.Scan(t, st, &rows, "SELECT cluster_id, status, report_sequence FROM nodes WHERE name = ?", "dgx-enr")
		if len(rows) == 1 {
			n = reportedNode{ClusterID: rows[0].ClusterID, Status: rows[0].Status, sequence: rows[0].ReportSequence}
			g := storetest.Count(t, st, "gpus", "node_id = (SELECT id FROM nodes WHERE name = ?)", "dgx-enr")
			n.gpus = int(g)
			// Two sequences past after: the inventory and a heartbeat.
			if n.sequence > after+1 && strings.Count(a.output(), "inventory accepted") >= 1 && n.Status == models.NodeOnline {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for dgx-enr's reports; last seen %+v\nagent output:\n%s", n, a.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withoutTokens drops the agent's token variables from env, so only the
// flags given say how it authenticates.
func withoutTokens(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GPUGRAPH_TOKEN=") && !strings.HasPrefix(kv, "GPUGRAPH_BOOTSTRAP_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}

// The agent binary with --token (an API key holding nodes.report): against
// a server started as by default it stops at its first report, saying
// that the server requires a node credential and how to get one; against
// a server in legacy mode it reports as it always did.
func TestAgentTokenOnlyInLegacyMode(t *testing.T) {
	t.Parallel() // the slowest of the package: they overlap each other (own servers, stores and ports)
	if testing.Short() {
		t.Skip("builds and runs the agent binary")
	}
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		args := []string{"--node-name", "dgx-enr", "--interval", "200ms", "--mock", "dgxh100"}
		env := servertest.New(t, st, servertest.IdentityFixture)
		a := runAgent(t, bin, append(withoutTokens(os.Environ()), "GPUGRAPH_TOKEN=acme-report"), append([]string{"--server", env.Srv.URL}, args...)...)
		select {
		case <-a.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("the agent with --token still runs against a server requiring node credentials\n%s", a.output())
		}
		const want = "gpugraph-agent: the server requires a node credential and refuses API keys (--token): 403 Forbidden on POST /v1/agent/inventory. " +
			"Ask an operator to enroll this node (POST /v1/admin/nodes/enroll, GraphQL enrollNode or gpugraph nodes enroll) " +
			"and start the agent with the one-time token it gives: --bootstrap-token TOKEN --credential-file FILE " +
			"(--token works only against a server started with --node-credentials-required=false, for a node never enrolled)\n"
		if code := a.cmd.ProcessState.ExitCode(); code != 1 || !strings.HasSuffix(a.output(), want) {
			t.Errorf("exit %d, output\n%s\nwant exit 1 ending with\n%s", code, a.output(), want)
		}
		n := storetest.Count(t, st, "nodes", "name = ?", "dgx-enr")
		if n != 0 {
			t.Errorf("the refused agent registered its node")
		}

		legacy := servertest.NewWithOptions(t, st, "", servertest.Options{Services: services.Config{NodeReportKeys: true}}, servertest.Config{})
		a = runAgent(t, bin, append(withoutTokens(os.Environ()), "GPUGRAPH_TOKEN=acme-report"), append([]string{"--server", legacy.Srv.URL}, args...)...)
		if n := waitReported(t, st, a, 0); n.Status != models.NodeOnline || n.gpus != 8 {
			t.Errorf("the agent with --token in legacy mode: %+v", n)
		}
		a.stop(t)
	})
}
