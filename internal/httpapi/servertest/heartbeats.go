package servertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/agent/agentapi"
)

// HeartbeatBody is node's heartbeat, with the next sequence.
func HeartbeatBody(node string, gpus []agentapi.HeartbeatGPU, ws ...agentapi.WorkloadReport) string {
	b, _ := json.Marshal(agentapi.HeartbeatRequest{NodeName: node, AgentVersion: "2.6.1", GPUs: gpus, Workloads: ws, Sequence: Sequence()})
	return string(b)
}

// HeartbeatAs sends node's heartbeat with its credential cred.
func HeartbeatAs(t testing.TB, url, cred, node string, gpus []agentapi.HeartbeatGPU, ws ...agentapi.WorkloadReport) agentapi.HeartbeatResponse {
	t.Helper()
	code, body := PostAs(t, url+agentapi.HeartbeatPath, cred, HeartbeatBody(node, gpus, ws...))
	if code != 200 {
		t.Fatalf("heartbeat of %s: %d %s", node, code, body)
	}
	var resp agentapi.HeartbeatResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// Assigned is what a heartbeat answer assigns the node: each workload as
// id@generation[gpus], in its order.
func Assigned(resp agentapi.HeartbeatResponse) string {
	var out []string
	for _, a := range resp.Workloads {
		out = append(out, fmt.Sprintf("%s@%d%v", a.ID, a.Generation, a.GPUs))
	}
	return strings.Join(out, " ")
}
