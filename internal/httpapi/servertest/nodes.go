package servertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/agent/agentapi"
)

// IdentityFixture: the platform operator (key ops-admin, nodes.admin), an
// organization whose API key holds nodes.report (acme-report, the path
// before node identity), and two nodes of cluster c1: dgx-a runs a VM
// holding its GPU 0 and 32 cores, 256 GB and 500 GB of its host; dgx-b
// holds nothing.
const IdentityFixture = `{
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

// EnrollNode enrolls node in cluster c1 as ops-admin (IdentityFixture's
// operator) over REST and exchanges the bootstrap token (RegisterNode):
// the node's credential.
func EnrollNode(t testing.TB, env *Env, node string) string {
	t.Helper()
	status, body := Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": node, "clusterId": "c1"})
	var e struct{ NodeName, ClusterID, BootstrapToken, ExpiresAt string }
	if err := json.Unmarshal([]byte(body), &e); status != 201 || err != nil || e.NodeName != node || e.ClusterID != "c1" ||
		!strings.HasPrefix(e.BootstrapToken, agentapi.BootstrapTokenPrefix) {
		t.Fatalf("enroll %s: %d %s", node, status, body)
	}
	if at, err := time.Parse(time.RFC3339, e.ExpiresAt); err != nil || at.Sub(time.Now()) < 23*time.Hour {
		t.Errorf("enroll %s: expiresAt %s, want 24 h from now", node, e.ExpiresAt)
	}
	return RegisterNode(t, env, e.BootstrapToken, node)
}

// RegisterNode exchanges node's bootstrap token (of cluster c1) as its
// agent does at start, and answers the node credential.
func RegisterNode(t testing.TB, env *Env, token, node string) string {
	t.Helper()
	status, body := Post(t, env, agentapi.RegisterPath, token, []byte(`{}`))
	var r agentapi.RegisterResponse
	if err := json.Unmarshal([]byte(body), &r); status != 201 || err != nil || r.NodeName != node || r.ClusterID != "c1" ||
		!strings.HasPrefix(r.Credential, agentapi.CredentialPrefix) {
		t.Fatalf("register %s: %d %s", node, status, body)
	}
	return r.Credential
}

// HeartbeatOf is a heartbeat of node with sequence seq and nothing else.
func HeartbeatOf(node string, seq int64) agentapi.HeartbeatRequest {
	return agentapi.HeartbeatRequest{NodeName: node, AgentVersion: "2.6.1", Sequence: seq}
}

// CredentialRequired is what a server requiring node credentials answers
// an agent report made with an API key.
const CredentialRequired = `{"error":{"code":"NODE_CREDENTIAL_REQUIRED","message":"this server accepts agent reports only with a node credential, never with an API key or an access token: ` +
	`an operator enrolls the node (POST /v1/admin/nodes/enroll, GraphQL enrollNode or gpugraph nodes enroll) for a one-time bootstrap token, ` +
	`and its agent exchanges it at start (--bootstrap-token)","requestId":"servertest"}}`
