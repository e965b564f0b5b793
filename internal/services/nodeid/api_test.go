package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// identityFixture: the platform operator (key ops-admin, nodes.admin), an
// organization whose API key holds nodes.report (acme-report, the path
// before node identity), and two nodes of cluster c1: dgx-a runs a VM
// holding its GPU 0 and 32 cores, 256 GB and 500 GB of its host; dgx-b
// holds nothing.
const identityFixture = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "org-ops", "name": "Ops", "tenantId": 9100}, {"id": "org-acme", "name": "Acme", "tenantId": 9101}],
 "apiKeys": [{"token": "ops-admin", "organizationId": "org-ops", "permissions": ["nodes.admin"]},
             {"token": "acme-report", "organizationId": "org-acme", "permissions": ["nodes.report"]}],
 "nodes": [
  {"id": "na", "name": "dgx-a", "clusterId": "c1", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
   "gpus": [{"id": "a0", "index": 0, "uuid": "GPU-a0", "modelId": "h100"}, {"id": "a1", "index": 1, "uuid": "GPU-a1", "modelId": "h100"}]},
  {"id": "nb", "name": "dgx-b", "clusterId": "c1", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224,
   "gpus": [{"id": "b0", "index": 0, "uuid": "GPU-b0", "modelId": "h100"}]}],
 "vms": [{"id": "vm-a", "name": "train", "organizationId": "org-acme", "nodeId": "na", "status": "running",
          "gpuModelId": "h100", "gpuCount": 1, "gpuIds": ["a0"], "cpuCores": 32, "ramGb": 256, "diskSizeGb": 500}]
}`

// enroll enrolls node in cluster c1 as ops-admin and exchanges the
// bootstrap token: the node's credential.
func enroll(t *testing.T, env *servertest.Env, node string) string {
	t.Helper()
	status, body := post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": node, "clusterId": "c1"})
	var e struct{ NodeName, ClusterID, BootstrapToken, ExpiresAt string }
	if err := json.Unmarshal([]byte(body), &e); status != 201 || err != nil || e.NodeName != node || e.ClusterID != "c1" ||
		!strings.HasPrefix(e.BootstrapToken, agentapi.BootstrapTokenPrefix) {
		t.Fatalf("enroll %s: %d %s", node, status, body)
	}
	if at, err := time.Parse(time.RFC3339, e.ExpiresAt); err != nil || at.Sub(time.Now()) < 23*time.Hour {
		t.Errorf("enroll %s: expiresAt %s, want 24 h from now", node, e.ExpiresAt)
	}
	return register(t, env, e.BootstrapToken, node)
}

func register(t *testing.T, env *servertest.Env, token, node string) string {
	t.Helper()
	status, body := post(t, env, agentapi.RegisterPath, token, []byte(`{}`))
	var r agentapi.RegisterResponse
	if err := json.Unmarshal([]byte(body), &r); status != 201 || err != nil || r.NodeName != node || r.ClusterID != "c1" ||
		!strings.HasPrefix(r.Credential, agentapi.CredentialPrefix) {
		t.Fatalf("register %s: %d %s", node, status, body)
	}
	return r.Credential
}

func heartbeatOf(node string, seq int64) agentapi.HeartbeatRequest {
	return agentapi.HeartbeatRequest{NodeName: node, AgentVersion: "2.6.1", Sequence: seq}
}

// identityInventory is dgx-a's whole inventory.
func identityInventory(seq int64) agentapi.InventoryRequest {
	return agentapi.InventoryRequest{NodeName: "dgx-a", AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939, Sequence: seq,
		GPUs: []agentapi.InventoryGPU{{Index: 0, UUID: "GPU-a0", Health: "healthy"}, {Index: 1, UUID: "GPU-a1", Health: "healthy"}}}
}

func expect(t *testing.T, what string, status int, body string, wantStatus int, wantIn string) {
	t.Helper()
	if status != wantStatus || !strings.Contains(body, wantIn) {
		t.Errorf("%s: got %d %s, want %d with %q", what, status, body, wantStatus, wantIn)
	}
}

// Enrollment, the exchange, and what a credential may report.
func TestNodeIdentity(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, identityFixture)

		// Enrolling is the operator's; bad names are 400s naming the field;
		// a known node is enrolled only in its own cluster.
		s, b := post(t, env, "/v1/admin/nodes/enroll", "acme-report", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"})
		expect(t, "enroll without nodes.admin", s, b, 403, "nodes.admin")
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"clusterId": "c1"})
		expect(t, "enroll without a name", s, b, 400, "nodeName")
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx\x00a", "clusterId": "c1"})
		expect(t, "enroll a NUL name", s, b, 400, "nodeName")
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": ""})
		expect(t, "enroll without a cluster", s, b, 400, "clusterId")
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c9"})
		expect(t, "enroll in another cluster", s, b, 409, "NODE_IN_OTHER_CLUSTER")

		// A bootstrap token works once.
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"})
		expect(t, "enroll dgx-a", s, b, 201, "bootstrapToken")
		var e struct{ BootstrapToken string }
		_ = json.Unmarshal([]byte(b), &e)
		credA := register(t, env, e.BootstrapToken, "dgx-a")
		s, b = post(t, env, agentapi.RegisterPath, e.BootstrapToken, []byte(`{}`))
		expect(t, "a bootstrap token exchanged again", s, b, 401, "already exchanged")
		s, b = post(t, env, agentapi.RegisterPath, "acme-report", []byte(`{}`))
		expect(t, "an API key as bootstrap token", s, b, 401, "BOOTSTRAP_TOKEN_REFUSED")
		s, b = post(t, env, agentapi.RegisterPath, agentapi.BootstrapTokenPrefix+"nope", []byte(`{}`))
		expect(t, "an unknown bootstrap token", s, b, 401, "unknown bootstrap token")
		credB := enroll(t, env, "dgx-b")

		// An expired one is refused.
		s, b = post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-new", "clusterId": "c1"})
		expect(t, "enroll dgx-new", s, b, 201, "bootstrapToken")
		_ = json.Unmarshal([]byte(b), &e)
		if err := st.DB.Exec("UPDATE node_enrollments SET expires_at = ? WHERE node_name = ?", time.Now().Add(-time.Minute).UTC(), "dgx-new").Error; err != nil {
			t.Fatal(err)
		}
		s, b = post(t, env, agentapi.RegisterPath, e.BootstrapToken, []byte(`{}`))
		expect(t, "an expired bootstrap token", s, b, 401, "expired")
		// …and deleted at the next enrollment.
		enroll(t, env, "dgx-c")
		var left int64
		st.DB.Table("node_enrollments").Where("node_name = ?", "dgx-new").Count(&left)
		if left != 0 {
			t.Errorf("an expired enrollment was kept after the next one")
		}

		// A credential of node A cannot report node B, nor another cluster.
		for _, path := range []string{agentapi.HeartbeatPath, agentapi.InventoryPath} {
			var body any = heartbeatOf("dgx-b", 1)
			if path == agentapi.InventoryPath {
				inv := identityInventory(1)
				inv.NodeName = "dgx-b"
				body = inv
			}
			s, b = post(t, env, path, credA, body)
			expect(t, "dgx-a's credential reporting dgx-b at "+path, s, b, 403, `"code":"NODE_IDENTITY_MISMATCH","message":"this node credential is node dgx-a's; it cannot report node dgx-b"`)
		}
		inv := identityInventory(1)
		inv.ClusterID = "c2"
		s, b = post(t, env, agentapi.InventoryPath, credA, inv)
		expect(t, "dgx-a's credential reporting cluster c2", s, b, 403, "bound to cluster")
		s, b = post(t, env, agentapi.HeartbeatPath, agentapi.CredentialPrefix+"forged", heartbeatOf("dgx-a", 1))
		expect(t, "an unknown credential", s, b, 401, "NODE_CREDENTIAL_REFUSED")
		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 0))
		expect(t, "a credential's report without a sequence", s, b, 400, "sequence is missing")

		// Its own node it reports, with sequences that grow.
		s, b = post(t, env, agentapi.InventoryPath, credA, identityInventory(100))
		expect(t, "dgx-a's inventory", s, b, 200, `"nodeId":"na"`)
		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 101))
		expect(t, "dgx-a's heartbeat", s, b, 200, `"nodeId":"na"`)
		s, b = post(t, env, agentapi.HeartbeatPath, credB, heartbeatOf("dgx-b", 5))
		expect(t, "dgx-b's heartbeat (sequences are per node)", s, b, 200, `"nodeId":"nb"`)

		// A replay (same or lower sequence) is refused and cannot revive an
		// offline node.
		if err := st.DB.Exec("UPDATE nodes SET status = ? WHERE id = ?", models.NodeOffline, "na").Error; err != nil {
			t.Fatal(err)
		}
		for _, seq := range []int64{101, 100, 7} {
			s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", seq))
			expect(t, fmt.Sprintf("a replayed heartbeat %d", seq), s, b, 409,
				fmt.Sprintf(`"code":"STALE_REPORT","message":"report sequence %d is not greater than 101`, seq))
		}
		s, b = post(t, env, agentapi.InventoryPath, credA, identityInventory(101))
		expect(t, "a replayed inventory", s, b, 409, "STALE_REPORT")
		var status []string
		st.DB.Table("nodes").Where("id = ?", "na").Pluck("status", &status)
		if len(status) != 1 || status[0] != string(models.NodeOffline) {
			t.Errorf("a replay revived the node: %v", status)
		}
		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 102))
		expect(t, "the next heartbeat", s, b, 200, `"status":"online"`)

		// API keys report nothing (legacy mode aside: TestLegacyModeKeys).
		s, b = post(t, env, agentapi.HeartbeatPath, "acme-report", heartbeatOf("dgx-a", 0))
		expect(t, "an API key reporting an enrolled node", s, b, 403, "NODE_CREDENTIAL_REQUIRED")

		// A name the database would refuse is a 400 before any lookup.
		s, b = post(t, env, agentapi.HeartbeatPath, credB, heartbeatOf("dgx\x00b", 9))
		expect(t, "a credential reporting a NUL name", s, b, 400, "nodeName")

		// Enrolling again replaces the credential: the old one stops working.
		credA2 := enroll(t, env, "dgx-a")
		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 200))
		expect(t, "a replaced credential", s, b, 401, "NODE_CREDENTIAL_REFUSED")
		s, b = post(t, env, agentapi.HeartbeatPath, credA2, heartbeatOf("dgx-a", 3))
		expect(t, "the new credential, whose sequence starts afresh", s, b, 200, `"nodeId":"na"`)
		s, b = post(t, env, agentapi.HeartbeatPath, credA2, heartbeatOf("dgx-a", 3))
		expect(t, "the new credential's replay", s, b, 409, "STALE_REPORT")

		// Nothing of either secret is stored in the clear.
		var stored int64
		st.DB.Raw("SELECT count(*) FROM node_credentials WHERE secret_hash = ? OR secret_hash = ?", credA2, credB).Scan(&stored)
		if stored != 0 {
			t.Errorf("a credential is stored in the clear")
		}
	})
}

// An inventory that would shrink or move a node under its workloads is
// refused whole, naming what, and nothing of it is applied.
func TestInventoryMayNotShrinkHeld(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, identityFixture)
		cred := enroll(t, env, "dgx-a")
		seq := int64(1)
		send := func(inv agentapi.InventoryRequest) (int, string) {
			seq++
			inv.Sequence = seq
			return post(t, env, agentapi.InventoryPath, cred, inv)
		}
		inv := identityInventory(0)
		inv.GPUs = inv.GPUs[1:]
		inv.CPUCores, inv.RAMGb, inv.DiskGb = 16, 128, 100
		s, b := send(inv)
		expect(t, "an inventory shrinking the node", s, b, 409,
			`"code":"INVENTORY_SHRINKS_HELD","message":"the inventory of node dgx-a would take what its workloads hold: `+
				`cpuCores 16 is below the 32 its VMs hold; ramGb 128 is below the 256 its VMs hold; diskGb 100 is below the 500 its VMs hold; `+
				`GPU GPU-a0 (index 0), which a workload holds, is missing from it; nothing of this inventory was applied`)
		n := nodeRow(t, st, "na")
		var health []string
		st.DB.Table("gpus").Where("id = ?", "a0").Pluck("health", &health)
		if n.CPUCores != 224 || n.RAMGb != 2048 || n.DiskGb != 27939 || health[0] != string(models.GPUHealthy) {
			t.Errorf("a refused inventory was applied: %+v, GPU a0 %v", n, health)
		}

		// Shrinking what is free is fine: a free GPU vanishes, figures
		// drop to what the VM holds.
		inv = identityInventory(0)
		inv.GPUs = inv.GPUs[:1]
		inv.CPUCores, inv.RAMGb, inv.DiskGb = 32, 256, 500
		s, b = send(inv)
		expect(t, "an inventory shrinking only what is free", s, b, 200, `"nodeId":"na"`)

		// Once the VM is stopped, the node may shrink under it.
		if code, body := post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-a", "clusterId": "c1"}); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
		if err := st.DB.Exec("UPDATE vms SET status = ? WHERE id = ?", models.VMStopped, "vm-a").Error; err != nil {
			t.Fatal(err)
		}
		inv.GPUs, inv.CPUCores = nil, 8
		s, b = send(inv)
		expect(t, "an inventory of a node that holds nothing", s, b, 200, `"nodeId":"na"`)
	})
}

func nodeRow(t *testing.T, st *store.Store, id string) models.Node {
	t.Helper()
	var n models.Node
	if err := st.DB.Where("id = ?", id).Take(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// enrollNode, GraphQL's face of POST /v1/admin/nodes/enroll.
func TestEnrollNodeGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, identityFixture)
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
		cred := register(t, env, got.EnrollNode.BootstrapToken, "dgx-b")
		s, b := post(t, env, agentapi.HeartbeatPath, cred, heartbeatOf("dgx-b", 1))
		expect(t, "the credential of a GraphQL enrollment", s, b, 200, `"nodeId":"nb"`)
	})
}

// By default no API key reports any node, enrolled or not, and nothing of
// its report is written, while a node credential still reports.
func TestNodeCredentialsRequired(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, identityFixture)
		credA := enroll(t, env, "dgx-a")

		inv := identityInventory(0)
		inv.NodeName, inv.GPUs = "dgx-new", nil
		s, b := post(t, env, agentapi.InventoryPath, "acme-report", inv)
		expect(t, "an API key registering a new node", s, b, 403,
			`"code":"NODE_CREDENTIAL_REQUIRED","message":"this server accepts agent reports only with a node credential`)
		s, b = post(t, env, agentapi.HeartbeatPath, "acme-report", heartbeatOf("dgx-b", 0))
		expect(t, "an API key reporting a node without a credential", s, b, 403, "NODE_CREDENTIAL_REQUIRED")
		var n int64
		st.DB.Table("nodes").Where("name = ?", "dgx-new").Count(&n)
		if n != 0 {
			t.Errorf("a refused key report registered its node")
		}
		if nb := nodeRow(t, st, "nb"); nb.LastHeartbeatAt != nil {
			t.Errorf("a refused key heartbeat was recorded: %+v", nb)
		}
		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 1))
		expect(t, "dgx-a's credential", s, b, 200, `"nodeId":"na"`)
	})
}

// In legacy mode (--node-credentials-required=false) a nodes.report key
// still reports a node that has no credential, as before node identity,
// and is refused for one that has; a credential reports as by default.
func TestLegacyModeKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithOptions(t, st, identityFixture, servertest.Options{Services: services.Config{NodeReportKeys: true}}, httpapi.Config{})
		credA := enroll(t, env, "dgx-a")

		s, b := post(t, env, agentapi.HeartbeatPath, "acme-report", heartbeatOf("dgx-a", 0))
		expect(t, "an API key reporting an enrolled node", s, b, 403,
			`"code":"NODE_CREDENTIAL_REQUIRED","message":"node dgx-a has a node credential; its reports must be made with it, not with an API key: an operator enrolls the node`)
		inv := identityInventory(0)
		inv.NodeName, inv.GPUs = "dgx-legacy", nil
		s, b = post(t, env, agentapi.InventoryPath, "acme-report", inv)
		expect(t, "an API key registering a node", s, b, 201, `"nodeId":"dgx-legacy"`)
		s, b = post(t, env, agentapi.HeartbeatPath, "acme-report", heartbeatOf("dgx-b", 0))
		expect(t, "an API key reporting a node without a credential", s, b, 200, `"nodeId":"nb"`)

		// A name the database would refuse is a 400 before any lookup.
		s, b = post(t, env, agentapi.HeartbeatPath, "acme-report", heartbeatOf("dgx\x00a", 0))
		expect(t, "an API key reporting a NUL name", s, b, 400, "nodeName")

		s, b = post(t, env, agentapi.HeartbeatPath, credA, heartbeatOf("dgx-a", 1))
		expect(t, "dgx-a's credential", s, b, 200, `"nodeId":"na"`)
	})
}
