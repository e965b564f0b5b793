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

func mockInventory(node string) agentapi.InventoryRequest {
	inv := agentapi.InventoryRequest{NodeName: node, ClusterID: "c-9", AgentVersion: "2.6.1", CPUCores: 224, RAMGb: 2048, DiskGb: 27939}
	for i := range 2 {
		inv.GPUs = append(inv.GPUs, agentapi.InventoryGPU{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", node, i),
			Address: fmt.Sprintf("0000:%02X:00.0", 0x1B+i), Name: "NVIDIA H200 141GB HBM3e", MemoryBytes: 144384 << 20, Health: "healthy"})
	}
	return inv
}

// sequenced is report with the next sequence, as every report made with a
// node credential carries one.
func sequenced(report any) any {
	switch r := report.(type) {
	case agentapi.InventoryRequest:
		r.Sequence = servertest.Sequence()
		return r
	case agentapi.HeartbeatRequest:
		r.Sequence = servertest.Sequence()
		return r
	}
	panic(fmt.Sprintf("sequenced: %T is not a report", report))
}

func TestAgentReportAuth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, mode := range []struct {
			name string
			o    servertest.Options
			want []struct {
				token  string
				status int
				body   string
			}
		}{
			// By default only a node credential reports: anything else is
			// told how to get one, whatever it holds.
			{"default", servertest.Options{}, []struct {
				token  string
				status int
				body   string
			}{
				{"", 401, servertest.CredentialRequired},
				{"nope", 401, servertest.CredentialRequired},
				{"acme-operator", 403, servertest.CredentialRequired},
				{"acme-agent", 403, servertest.CredentialRequired},
				{agentapi.CredentialPrefix + "nope", 401, `{"error":{"code":"NODE_CREDENTIAL_REFUSED","message":"unknown node credential (it was replaced when the node was enrolled again?)","requestId":"servertest"}}`},
			}},
			// Legacy mode: an API key as on any key path.
			{"legacy", servertest.Options{Services: services.Config{NodeReportKeys: true}}, []struct {
				token  string
				status int
				body   string
			}{
				{"", 401, `{"error":{"code":"UNAUTHENTICATED","message":"missing API key: send Authorization: Bearer <API key>","requestId":"servertest"}}`},
				{"nope", 401, `{"error":{"code":"UNAUTHENTICATED","message":"unknown API key","requestId":"servertest"}}`},
				{"acme-operator", 403, `{"error":{"code":"FORBIDDEN","message":"this API key lacks the nodes.report permission","requestId":"servertest"}}`},
			}},
		} {
			env := servertest.NewWithOptions(t, st, servertest.Base, mode.o, httpapi.Config{})
			for _, path := range []string{agentapi.InventoryPath, agentapi.HeartbeatPath} {
				// Who may report is answered before what was reported.
				for _, tc := range mode.want {
					status, body := servertest.Post(t, env, path, tc.token, []byte(`not json`))
					if status != tc.status || body != tc.body {
						t.Errorf("%s: %s with %q: %d %s\nwant %d %s", mode.name, path, tc.token, status, body, tc.status, tc.body)
					}
				}
			}
		}
	})
}

func TestAgentReports(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cred := servertest.NodeCredential(t, st, "dgx-07", "c-9")
		hb := agentapi.HeartbeatRequest{NodeName: "dgx-07", AgentVersion: "2.6.1", GPUs: []agentapi.HeartbeatGPU{
			{UUID: "GPU-dgx-07-0", Health: "healthy", Utilization: 93, MemoryUsedBytes: 70 << 30},
			{UUID: "GPU-dgx-07-1", Health: "failed", FailedReason: "XID 79"}}}
		status, body := servertest.Post(t, env, agentapi.HeartbeatPath, cred, sequenced(hb))
		if status != 404 || body != `{"error":{"code":"NODE_NOT_FOUND","message":"this node is not registered; send POST /v1/agent/inventory first","requestId":"servertest"}}` {
			t.Fatalf("heartbeat before inventory: %d %s", status, body)
		}

		before := store.Now()
		status, body = servertest.Post(t, env, agentapi.InventoryPath, cred, sequenced(mockInventory("dgx-07")))
		if status != 201 || body != `{"nodeId":"dgx-07","status":"online","workloads":[]}` {
			t.Fatalf("first inventory: %d %s", status, body)
		}
		status, body = servertest.Post(t, env, agentapi.InventoryPath, cred, sequenced(mockInventory("dgx-07")))
		if status != 200 || body != `{"nodeId":"dgx-07","status":"online","workloads":[]}` {
			t.Fatalf("second inventory: %d %s", status, body)
		}
		status, body = servertest.Post(t, env, agentapi.HeartbeatPath, cred, sequenced(hb))
		if status != 200 || body != `{"nodeId":"dgx-07","status":"online","workloads":[]}` {
			t.Fatalf("heartbeat: %d %s", status, body)
		}
		after := store.Now()

		r := env.GraphQL("acme-reader", `{ node(id: "dgx-07") { name clusterId nodePool status agentVersion cpuCores ramGb diskGb lastHeartbeatAt
			gpus { id index uuid address health failedReason utilization memoryUsedBytes model { id name manufacturer memoryGb } } } }`, nil)
		var got struct {
			Node struct {
				LastHeartbeatAt string
				GPUs            json.RawMessage
			}
		}
		env.Decode(r, &got)
		seen, err := models.ParseTime(got.Node.LastHeartbeatAt)
		if err != nil || seen.Before(before.Truncate(time.Millisecond)) || seen.After(after) {
			t.Errorf("lastHeartbeatAt %s, want between %v and %v", got.Node.LastHeartbeatAt, before, after)
		}
		// memoryUsedBytes is a GraphQL Float (bytes outgrow Int's 32
		// bits), written in plain decimal.
		model := `"model":{"id":"nvidia-h200-141gb-hbm3e","name":"NVIDIA H200 141GB HBM3e","manufacturer":"NVIDIA","memoryGb":141}`
		want := `[{"id":"GPU-dgx-07-0","index":0,"uuid":"GPU-dgx-07-0","address":"0000:1B:00.0","health":"HEALTHY","failedReason":null,"utilization":93,"memoryUsedBytes":75161927680,` + model + `},` +
			`{"id":"GPU-dgx-07-1","index":1,"uuid":"GPU-dgx-07-1","address":"0000:1C:00.0","health":"FAILED","failedReason":"XID 79","utilization":0,"memoryUsedBytes":0,` + model + `}]`
		if string(got.Node.GPUs) != want {
			t.Errorf("gpus\n got %s\nwant %s", got.Node.GPUs, want)
		}
		if !strings.Contains(string(r.Data), `"name":"dgx-07","clusterId":"c-9","nodePool":"default","status":"ONLINE","agentVersion":"2.6.1","cpuCores":224,"ramGb":2048,"diskGb":27939`) {
			t.Errorf("node = %s", r.Data)
		}

		// A heartbeat naming a GPU the inventory did not: the agent re-sends it.
		hb.GPUs[1].UUID = "GPU-other"
		status, body = servertest.Post(t, env, agentapi.HeartbeatPath, cred, sequenced(hb))
		if status != 404 || body != `{"error":{"code":"GPU_NOT_FOUND","message":"GPU GPU-other is not in this node's inventory; send POST /v1/agent/inventory again","requestId":"servertest"}}` {
			t.Errorf("unknown GPU: %d %s", status, body)
		}
		// A GPU of another node.
		inv := mockInventory("dgx-08")
		inv.GPUs[1].UUID = "GPU-n1-0003"
		status, body = servertest.Post(t, env, agentapi.InventoryPath, servertest.NodeCredential(t, st, "dgx-08", "c-9"), sequenced(inv))
		if status != 409 || body != `{"error":{"code":"GPU_ON_OTHER_NODE","message":"GPU GPU-n1-0003 is registered on node \"gpu-node-1\"; an operator must remove it there before this node can report it","requestId":"servertest"}}` {
			t.Errorf("GPU of another node: %d %s", status, body)
		}
	})
}

func TestAgentReportValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cred := servertest.NodeCredential(t, st, "dgx-09", "c-9")
		inv := func(edit func(m map[string]any)) []byte {
			b, _ := json.Marshal(mockInventory("dgx-09"))
			var m map[string]any
			json.Unmarshal(b, &m)
			edit(m)
			b, _ = json.Marshal(m)
			return b
		}
		gpu := func(m map[string]any, i int) map[string]any { return m["gpus"].([]any)[i].(map[string]any) }
		for _, tc := range []struct {
			path string
			body []byte
			want string
		}{
			{agentapi.InventoryPath, []byte(``), "the request body is empty; send a JSON object"},
			{agentapi.InventoryPath, []byte(`{"nodeName": "a"} {}`), "the request body holds data after its JSON value, which ends at byte 17"},
			{agentapi.InventoryPath, []byte(`{"nodeName": 7}`), "nodeName: want a string, got number"},
			{agentapi.InventoryPath, []byte(`{"gpus": [{"memoryBytes": -1}]}`), "gpus[0].memoryBytes: want a non-negative whole number, got number -1"},
			// Issue 23, finding 12: a name given twice, a brace too many.
			{agentapi.InventoryPath, []byte(`{"nodeName": "a", "nodeName": "b"}`), "nodeName is given twice: a name appears at most once in an object"},
			{agentapi.InventoryPath, []byte(`{"gpus": [{"uuid": "a", "uuid": "b"}]}`), "gpus[0].uuid is given twice: a name appears at most once in an object"},
			{agentapi.InventoryPath, []byte(`{"nodeName": "a"}}`), "the request body holds data after its JSON value, which ends at byte 17"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { delete(m, "nodeName") }), "nodeName is missing"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { m["nodeName"] = "a b" }), `nodeName "a b" must be at most 253 bytes of printable text without spaces`},
			{agentapi.InventoryPath, inv(func(m map[string]any) { delete(m, "agentVersion") }), "agentVersion is missing"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { m["agentVersion"] = "2.6" }), `agentVersion "2.6" is not a semantic version such as 2.6.1`},
			{agentapi.InventoryPath, inv(func(m map[string]any) { m["ramGb"] = -1 }), "cpuCores, ramGb and diskGb must not be negative"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 1)["uuid"] = "" }), "gpus[1].uuid is missing"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 1)["uuid"] = gpu(m, 0)["uuid"] }), "gpus[1].uuid GPU-dgx-09-0 is also the uuid of gpus[0]"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 1)["index"] = 0 }), "gpus[1].index 0 is also the index of gpus[0]"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 1)["index"] = -1 }), "gpus[1].index must not be negative"},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 0)["health"] = "sick" }), `gpus[0].health "sick" is not healthy or failed`},
			{agentapi.InventoryPath, inv(func(m map[string]any) { gpu(m, 0)["address"] = "00000000:1b:00.0" }), `gpus[0].address "00000000:1b:00.0" is not a PCI bus id such as 0000:3B:00.0`},
			{agentapi.HeartbeatPath, []byte(`{"nodeName": "dgx-09", "gpus": [{"uuid": "u", "health": "healthy", "utilization": 101}]}`), "gpus[0].utilization 101 is not a percentage (0 to 100)"},
			{agentapi.HeartbeatPath, []byte(`{"nodeName": "dgx-09", "gpus": [{"uuid": "u", "health": "healthy", "memoryUsedBytes": 18446744073709551615}]}`), "gpus[0].memoryUsedBytes is out of range"},
			{agentapi.HeartbeatPath, []byte(`{"nodeName": "dgx-09", "agentVersion": "next"}`), `agentVersion "next" is not a semantic version such as 2.6.1`},
		} {
			status, body := servertest.Post(t, env, tc.path, cred, tc.body)
			want, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "BAD_REQUEST", "message": tc.want, "requestId": servertest.RequestID}})
			if status != 400 || body != string(want) {
				t.Errorf("%s %s: %d %s, want 400 %s", tc.path, tc.body, status, body, want)
			}
		}
		big := []byte(`{"nodeName": "` + strings.Repeat("x", 1<<20) + `"}`)
		if status, body := servertest.Post(t, env, agentapi.InventoryPath, cred, big); status != 413 ||
			body != `{"error":{"code":"PAYLOAD_TOO_LARGE","message":"the request body is larger than 1048576 bytes","requestId":"servertest"}}` {
			t.Errorf("large body: %d %s", status, body)
		}
		nodes := storetest.Count(t, st, "nodes", "")
		if nodes != 2 {
			t.Errorf("refused reports wrote nodes: %d", nodes)
		}
	})
}
