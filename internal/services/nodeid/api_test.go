package nodeid_test

import (
	"encoding/json"
	"fmt"
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

// identityInventory is dgx-a's whole inventory.
func identityInventory(seq int64) agentapi.InventoryRequest {
	return agentapi.InventoryRequest{NodeName: "dgx-a", AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939, Sequence: seq,
		GPUs: []agentapi.InventoryGPU{{Index: 0, UUID: "GPU-a0", Health: "healthy"}, {Index: 1, UUID: "GPU-a1", Health: "healthy"}}}
}

// Enrollment, the exchange, and what a credential may report.
func TestNodeIdentity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)

		// Enrolling is the operator's; bad names are 400s naming the field;
		// a known node is enrolled only in its own cluster.
		s, b := servertest.Post(t, env, "/v1/admin/nodes/enroll", "acme-report", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"})
		servertest.Expect(t, "enroll without nodes.admin", s, b, 403, "nodes.admin")
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"clusterId": "c1"})
		servertest.Expect(t, "enroll without a name", s, b, 400, "nodeName")
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx\x00a", "clusterId": "c1"})
		servertest.Expect(t, "enroll a NUL name", s, b, 400, "nodeName")
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": ""})
		servertest.Expect(t, "enroll without a cluster", s, b, 400, "clusterId")
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c9"})
		servertest.Expect(t, "enroll in another cluster", s, b, 409, "NODE_IN_OTHER_CLUSTER")

		// A bootstrap token works once.
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"})
		servertest.Expect(t, "enroll dgx-a", s, b, 201, "bootstrapToken")
		var e struct{ BootstrapToken string }
		_ = json.Unmarshal([]byte(b), &e)
		credA := servertest.RegisterNode(t, env, e.BootstrapToken, "dgx-a")
		s, b = servertest.Post(t, env, agentapi.RegisterPath, e.BootstrapToken, []byte(`{}`))
		servertest.Expect(t, "a bootstrap token exchanged again", s, b, 401, "already exchanged")
		s, b = servertest.Post(t, env, agentapi.RegisterPath, "acme-report", []byte(`{}`))
		servertest.Expect(t, "an API key as bootstrap token", s, b, 401, "BOOTSTRAP_TOKEN_REFUSED")
		s, b = servertest.Post(t, env, agentapi.RegisterPath, agentapi.BootstrapTokenPrefix+"nope", []byte(`{}`))
		servertest.Expect(t, "an unknown bootstrap token", s, b, 401, "unknown bootstrap token")
		credB := servertest.EnrollNode(t, env, "dgx-b")

		// An expired one is refused.
		s, b = servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-new", "clusterId": "c1"})
		servertest.Expect(t, "enroll dgx-new", s, b, 201, "bootstrapToken")
		_ = json.Unmarshal([]byte(b), &e)
		storetest.Exec(t, st, "UPDATE node_enrollments SET expires_at = ? WHERE node_name = ?", time.Now().Add(-time.Minute).UTC(), "dgx-new")
		s, b = servertest.Post(t, env, agentapi.RegisterPath, e.BootstrapToken, []byte(`{}`))
		servertest.Expect(t, "an expired bootstrap token", s, b, 401, "expired")
		// …and deleted at the next enrollment.
		servertest.EnrollNode(t, env, "dgx-c")
		left := storetest.Count(t, st, "node_enrollments", "node_name = ?", "dgx-new")
		if left != 0 {
			t.Errorf("an expired enrollment was kept after the next one")
		}

		// A credential of node A cannot report node B, nor another cluster.
		for _, path := range []string{agentapi.HeartbeatPath, agentapi.InventoryPath} {
			var body any = servertest.HeartbeatOf("dgx-b", 1)
			if path == agentapi.InventoryPath {
				inv := identityInventory(1)
				inv.NodeName = "dgx-b"
				body = inv
			}
			s, b = servertest.Post(t, env, path, credA, body)
			servertest.Expect(t, "dgx-a's credential reporting dgx-b at "+path, s, b, 403, `"code":"NODE_IDENTITY_MISMATCH","message":"this node credential is node dgx-a's; it cannot report node dgx-b"`)
		}
		inv := identityInventory(1)
		inv.ClusterID = "c2"
		s, b = servertest.Post(t, env, agentapi.InventoryPath, credA, inv)
		servertest.Expect(t, "dgx-a's credential reporting cluster c2", s, b, 403, "bound to cluster")
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, agentapi.CredentialPrefix+"forged", servertest.HeartbeatOf("dgx-a", 1))
		servertest.Expect(t, "an unknown credential", s, b, 401, "NODE_CREDENTIAL_REFUSED")
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 0))
		servertest.Expect(t, "a credential's report without a sequence", s, b, 400, "sequence is missing")

		// Its own node it reports, with sequences that grow.
		s, b = servertest.Post(t, env, agentapi.InventoryPath, credA, identityInventory(100))
		servertest.Expect(t, "dgx-a's inventory", s, b, 200, `"nodeId":"na"`)
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 101))
		servertest.Expect(t, "dgx-a's heartbeat", s, b, 200, `"nodeId":"na"`)
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credB, servertest.HeartbeatOf("dgx-b", 5))
		servertest.Expect(t, "dgx-b's heartbeat (sequences are per node)", s, b, 200, `"nodeId":"nb"`)

		// A replay (same or lower sequence) is refused and cannot revive an
		// offline node.
		storetest.Exec(t, st, "UPDATE nodes SET status = ? WHERE id = ?", models.NodeOffline, "na")
		for _, seq := range []int64{101, 100, 7} {
			s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", seq))
			servertest.Expect(t, fmt.Sprintf("a replayed heartbeat %d", seq), s, b, 409,
				fmt.Sprintf(`"code":"STALE_REPORT","message":"report sequence %d is not greater than 101`, seq))
		}
		s, b = servertest.Post(t, env, agentapi.InventoryPath, credA, identityInventory(101))
		servertest.Expect(t, "a replayed inventory", s, b, 409, "STALE_REPORT")
		var status []string
		storetest.Scan(t, st, &status, "SELECT status FROM nodes WHERE id = ?", "na")
		if len(status) != 1 || status[0] != string(models.NodeOffline) {
			t.Errorf("a replay revived the node: %v", status)
		}
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 102))
		servertest.Expect(t, "the next heartbeat", s, b, 200, `"status":"online"`)

		// API keys report nothing (legacy mode aside: TestLegacyModeKeys).
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx-a", 0))
		servertest.Expect(t, "an API key reporting an enrolled node", s, b, 403, "NODE_CREDENTIAL_REQUIRED")

		// A name the database would refuse is a 400 before any lookup.
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credB, servertest.HeartbeatOf("dgx\x00b", 9))
		servertest.Expect(t, "a credential reporting a NUL name", s, b, 400, "nodeName")

		// Enrolling again replaces the credential: the old one stops working.
		credA2 := servertest.EnrollNode(t, env, "dgx-a")
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 200))
		servertest.Expect(t, "a replaced credential", s, b, 401, "NODE_CREDENTIAL_REFUSED")
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA2, servertest.HeartbeatOf("dgx-a", 3))
		servertest.Expect(t, "the new credential, whose sequence starts afresh", s, b, 200, `"nodeId":"na"`)
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA2, servertest.HeartbeatOf("dgx-a", 3))
		servertest.Expect(t, "the new credential's replay", s, b, 409, "STALE_REPORT")

		// Nothing of either secret is stored in the clear.
		var stored int64
		storetest.Scan(t, st, &stored, "SELECT count(*) FROM node_credentials WHERE secret_hash = ? OR secret_hash = ?", credA2, credB)
		if stored != 0 {
			t.Errorf("a credential is stored in the clear")
		}
	})
}

// An inventory that would shrink or move a node under its workloads is
// refused whole, naming what, and nothing of it is applied.
func TestInventoryMayNotShrinkHeld(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)
		cred := servertest.EnrollNode(t, env, "dgx-a")
		seq := int64(1)
		send := func(inv agentapi.InventoryRequest) (int, string) {
			seq++
			inv.Sequence = seq
			return servertest.Post(t, env, agentapi.InventoryPath, cred, inv)
		}
		inv := identityInventory(0)
		inv.GPUs = inv.GPUs[1:]
		inv.CPUCores, inv.RAMGb, inv.DiskGb = 16, 128, 100
		s, b := send(inv)
		servertest.Expect(t, "an inventory shrinking the node", s, b, 409,
			`"code":"INVENTORY_SHRINKS_HELD","message":"the inventory of node dgx-a would take what its workloads hold: `+
				`cpuCores 16 is below the 32 its VMs hold; ramGb 128 is below the 256 its VMs hold; diskGb 100 is below the 500 its VMs hold; `+
				`GPU GPU-a0 (index 0), which a workload holds, is missing from it; nothing of this inventory was applied`)
		n := nodeRow(t, st, "na")
		var health []string
		storetest.Scan(t, st, &health, "SELECT health FROM gpus WHERE id = ?", "a0")
		if n.CPUCores != 224 || n.RAMGb != 2048 || n.DiskGb != 27939 || health[0] != string(models.GPUHealthy) {
			t.Errorf("a refused inventory was applied: %+v, GPU a0 %v", n, health)
		}

		// Shrinking what is free is fine: a free GPU vanishes, figures
		// drop to what the VM holds.
		inv = identityInventory(0)
		inv.GPUs = inv.GPUs[:1]
		inv.CPUCores, inv.RAMGb, inv.DiskGb = 32, 256, 500
		s, b = send(inv)
		servertest.Expect(t, "an inventory shrinking only what is free", s, b, 200, `"nodeId":"na"`)

		// Once the VM is stopped, the node may shrink under it.
		if code, body := servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"}); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
		storetest.Exec(t, st, "UPDATE vms SET status = ? WHERE id = ?", models.VMStopped, "vm-a")
		inv.GPUs, inv.CPUCores = nil, 8
		s, b = send(inv)
		servertest.Expect(t, "an inventory of a node that holds nothing", s, b, 200, `"nodeId":"na"`)
	})
}

func nodeRow(t *testing.T, st *store.Store, id string) models.Node {
	t.Helper()
	var n models.Node
	storetest.Take(t, st, &n, "nodes", "id = ?", id)
	return n
}

// enrollNode, GraphQL's face of POST /v1/admin/nodes/enroll.
func TestEnrollNodeGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)
		const m = `mutation($n: String!, $c: String!) { enrollNode(nodeName: $n, clusterId: $c) { nodeName clusterId bootstrapToken expiresAt } }`
		if r := env.GraphQL("acme-report", m, map[string]any{"n": "dgx-b", "c": "c1"}); r.Code() != "FORBIDDEN" {
			t.Errorf("without nodes.admin: %+v", r.Errors)
		}
		if r := env.GraphQL("ops-admin", m, map[string]any{"n": "dgx-b", "c": "c7"}); r.Code() != "NODE_IN_OTHER_CLUSTER" {
			t.Errorf("in another cluster: %+v", r.Errors)
		}
		var got struct {
			EnrollNode struct{ NodeName, ClusterID, BootstrapToken, ExpiresAt string }
		}
		env.Decode(env.GraphQL("ops-admin", m, map[string]any{"n": "dgx-b", "c": "c1"}), &got)
		if e := got.EnrollNode; e.NodeName != "dgx-b" || e.ClusterID != "c1" || !strings.HasSuffix(e.ExpiresAt, "Z") {
			t.Errorf("enrollNode = %+v", e)
		}
		cred := servertest.RegisterNode(t, env, got.EnrollNode.BootstrapToken, "dgx-b")
		s, b := servertest.Post(t, env, agentapi.HeartbeatPath, cred, servertest.HeartbeatOf("dgx-b", 1))
		servertest.Expect(t, "the credential of a GraphQL enrollment", s, b, 200, `"nodeId":"nb"`)
	})
}

// By default no API key reports any node, enrolled or not, and nothing of
// its report is written, while a node credential still reports.
func TestNodeCredentialsRequired(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)
		credA := servertest.EnrollNode(t, env, "dgx-a")

		inv := identityInventory(0)
		inv.NodeName, inv.GPUs = "dgx-new", nil
		s, b := servertest.Post(t, env, agentapi.InventoryPath, "acme-report", inv)
		servertest.Expect(t, "an API key registering a new node", s, b, 403,
			`"code":"NODE_CREDENTIAL_REQUIRED","message":"this server accepts agent reports only with a node credential`)
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx-b", 0))
		servertest.Expect(t, "an API key reporting a node without a credential", s, b, 403, "NODE_CREDENTIAL_REQUIRED")
		n := storetest.Count(t, st, "nodes", "name = ?", "dgx-new")
		if n != 0 {
			t.Errorf("a refused key report registered its node")
		}
		if nb := nodeRow(t, st, "nb"); nb.LastHeartbeatAt != nil {
			t.Errorf("a refused key heartbeat was recorded: %+v", nb)
		}
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 1))
		servertest.Expect(t, "dgx-a's credential", s, b, 200, `"nodeId":"na"`)
	})
}

// In legacy mode (--node-credentials-required=false) a nodes.report key
// still reports a node that has no credential, as before node identity,
// and is refused for one that has; a credential reports as by default.
func TestLegacyModeKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithOptions(t, st, servertest.IdentityFixture, servertest.Options{Services: services.Config{NodeReportKeys: true}}, servertest.Config{})
		credA := servertest.EnrollNode(t, env, "dgx-a")

		s, b := servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx-a", 0))
		servertest.Expect(t, "an API key reporting an enrolled node", s, b, 403,
			`"code":"NODE_CREDENTIAL_REQUIRED","message":"node dgx-a has a node credential; its reports must be made with it, not with an API key: an operator enrolls the node`)
		inv := identityInventory(0)
		inv.NodeName, inv.GPUs = "dgx-legacy", nil
		s, b = servertest.Post(t, env, agentapi.InventoryPath, "acme-report", inv)
		servertest.Expect(t, "an API key registering a node", s, b, 201, `"nodeId":"dgx-legacy"`)
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx-b", 0))
		servertest.Expect(t, "an API key reporting a node without a credential", s, b, 200, `"nodeId":"nb"`)

		// A name the database would refuse is a 400 before any lookup.
		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, "acme-report", servertest.HeartbeatOf("dgx\x00a", 0))
		servertest.Expect(t, "an API key reporting a NUL name", s, b, 400, "nodeName")

		s, b = servertest.Post(t, env, agentapi.HeartbeatPath, credA, servertest.HeartbeatOf("dgx-a", 1))
		servertest.Expect(t, "dgx-a's credential", s, b, 200, `"nodeId":"na"`)
	})
}
