package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/store"
)

// A fleet of node agents heartbeating as they do between changes: every
// node of 8 healthy GPUs runs one VM on 2 of them, and every heartbeat
// says the same (the same samples, the VM running and ready). Figure 12
// and BenchmarkHeartbeatFleet (bench/heartbeat_bench_test.go) send them through the
// whole HTTP surface with each node's own credential.

// HeartbeatAgent is one node of the fleet as its agent knows it.
type HeartbeatAgent struct {
	Node       string
	Credential string
	// body is the heartbeat without its sequence, which each send sets.
	body agentapi.HeartbeatRequest
	// mu holds one heartbeat at a time, as an agent sends them, with the
	// last sequence sent.
	mu       sync.Mutex
	sequence int64
}

// HeartbeatAgentVersion is what the fleet's agents run: one that is told
// teardowns (nodes.MinAgentTeardown), as agents now are.
const HeartbeatAgentVersion = "2.7.0"

// heartbeatNode names node i of the fleet.
func heartbeatNode(i int) string { return fmt.Sprintf("hb-node-%05d", i) }

// InsertHeartbeatFleet writes nodes online nodes of 8 H100s (agent
// HeartbeatAgentVersion, last heard from at now), each with a node
// credential and one running VM holding its first two GPUs, by SQL on the
// database itself, and answers their agents.
func InsertHeartbeatFleet(ctx context.Context, st *store.Store, nodes int, now time.Time) ([]HeartbeatAgent, error) {
	d := dialectOf(st.Dialect)
	db := st.DB.WithContext(ctx)
	node := "'hb-node-' || " + d.pad("i", 5)
	stmts := []struct {
		what string
		sql  string
		args []any
	}{
		{"model", `INSERT INTO gpu_models (id, name, manufacturer, memory_gb) VALUES ('hb-h100', 'NVIDIA H100 80GB HBM3', 'NVIDIA', 80)`, nil},
		{"organization", `INSERT INTO organizations (id, name, tenant_id) VALUES ('hb-org', 'heartbeats', 900)`, nil},
		{"nodes", d.series + ` INSERT INTO nodes (id, name, cluster_id, node_pool, status, agent_version, cpu_cores, ram_gb, disk_gb,
			last_heartbeat_at, agent_reported_at, report_sequence)
			SELECT ` + node + `, ` + node + `, 'hb-cluster', 'default', 'online', ?, 224, 2048, 27939, ?, ?, 0 FROM g`,
			[]any{nodes, HeartbeatAgentVersion, now, now}},
		{"VMs", d.series + ` INSERT INTO vms (id, name, organization_id, status, created_at, disk_size_gb, gpu_count,
			gpu_model_id, image_url, node_id, generation, provisioning_stage)
			SELECT 'hb-vm-' || ` + d.pad("i", 5) + `, 'hb-vm-' || ` + d.pad("i", 5) + `, 'hb-org', 'running', ?, 100, 2,
			'hb-h100', 'ubuntu-22.04', ` + node + `, 1, 'ready' FROM g`,
			[]any{nodes, now}},
		{"GPUs", d.series + ` INSERT INTO gpus (id, node_id, idx, uuid, model_id, health, holder_vm_id)
			SELECT 'hb-gpu-' || ` + d.pad("i", 6) + `, 'hb-node-' || ` + d.pad("i / 8", 5) + `, i % 8,
			'GPU-hb-' || ` + d.pad("i", 6) + `, 'hb-h100', 'healthy',
			CASE WHEN i % 8 < 2 THEN 'hb-vm-' || ` + d.pad("i / 8", 5) + ` END FROM g`,
			[]any{8 * nodes}},
	}
	for _, s := range stmts {
		if err := db.Exec(s.sql, s.args...).Error; err != nil {
			return nil, fmt.Errorf("heartbeat fleet, %s: %w", s.what, err)
		}
	}
	agents := make([]HeartbeatAgent, nodes)
	creds := make([]map[string]any, 0, nodes)
	for i := range agents {
		name := heartbeatNode(i)
		a := &agents[i]
		a.Node, a.Credential = name, fmt.Sprintf("%shb%027d", agentapi.CredentialPrefix, i)
		a.body = agentapi.HeartbeatRequest{NodeName: name, AgentVersion: HeartbeatAgentVersion,
			Workloads: []agentapi.WorkloadReport{{ID: fmt.Sprintf("hb-vm-%05d", i), Generation: 1,
				State: agentapi.StateRunning, ProvisioningStage: agentapi.StageReady}}}
		for g := range 8 {
			a.body.GPUs = append(a.body.GPUs, agentapi.HeartbeatGPU{UUID: fmt.Sprintf("GPU-hb-%06d", 8*i+g),
				Health: "healthy", Utilization: 50 * min(g/2, 1), MemoryUsedBytes: uint64(min(g/2, 1)) << 34})
		}
		creds = append(creds, map[string]any{"node_name": name, "cluster_id": "hb-cluster",
			"secret_hash": auth.HashToken(a.Credential), "created_at": now})
	}
	if err := db.Table("node_credentials").CreateInBatches(creds, 500).Error; err != nil {
		return nil, fmt.Errorf("heartbeat fleet, credentials: %w", err)
	}
	// As autovacuum would after a large load.
	return agents, db.Exec("ANALYZE").Error
}

// Body is the agent's heartbeat with sequence seq, as JSON.
func (a *HeartbeatAgent) Body(seq int64) []byte {
	hb := a.body
	hb.Sequence = seq
	b, _ := json.Marshal(hb)
	return b
}

// Heartbeat sends the agent's heartbeat with sequence seq to the server
// at base, and checks that it was taken: a 200 naming the node online and
// its one VM.
func (a *HeartbeatAgent) Heartbeat(ctx context.Context, hc *http.Client, base string, seq int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+agentapi.HeartbeatPath, bytes.NewReader(a.Body(seq)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.Credential)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var out agentapi.HeartbeatResponse
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil ||
		out.Status != "online" || len(out.Workloads) != 1 || out.Workloads[0].ID != a.body.Workloads[0].ID {
		return fmt.Errorf("heartbeat of %s: %d %.300s", a.Node, resp.StatusCode, raw)
	}
	return nil
}

// DriveHeartbeats sends requests heartbeats from clients concurrent
// agents' connections: heartbeat i is agent i mod len(agents)'s, sent
// once that agent's previous one is answered, with the next sequence.
func DriveHeartbeats(ctx context.Context, hc *http.Client, base string, agents []HeartbeatAgent, clients, requests int) Load {
	return Drive(ctx, clients, requests, func(ctx context.Context, i int) error {
		a := &agents[i%len(agents)]
		a.mu.Lock()
		defer a.mu.Unlock()
		a.sequence++
		return a.Heartbeat(ctx, hc, base, a.sequence)
	})
}
