package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func TestHardwareQueries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)

		r := env.GraphQL("acme-reader", `{ node(id: "n1") { name status fabricId freeGpuCount gpus { index address health failedReason model { name manufacturer } vm { id } } vms { id gpuIds } } }`, nil)
		var got struct {
			Node struct {
				Name, Status string
				FabricID     *string
				FreeGpuCount int
				GPUs         []struct {
					Index        int
					Address      string
					Health       string
					FailedReason *string
					Model        struct{ Name, Manufacturer string }
					VM           *struct{ ID string }
				}
				Vms []struct {
					ID     string
					GPUIDs []string
				}
			}
		}
		env.Decode(r, &got)
		n := got.Node
		if n.Name != "gpu-node-1" || n.Status != "ONLINE" || n.FabricID == nil || *n.FabricID != "ib-1" || len(n.GPUs) != 8 {
			t.Fatalf("node = %+v", n)
		}
		if g := n.GPUs[7]; g.Health != "FAILED" || g.FailedReason == nil || *g.FailedReason != "XID 79" || g.Address != "0000:DB:00.0" {
			t.Errorf("gpu 7 = %+v", g)
		}
		if g := n.GPUs[0]; g.Model.Name != "NVIDIA H100 80GB HBM3" || g.Model.Manufacturer != "NVIDIA" || g.VM == nil || g.VM.ID != "vm-acme-1" {
			t.Errorf("gpu 0 = %+v", g)
		}
		// GPU 3 is Globex's: Acme sees the GPU, not its holder.
		if n.GPUs[3].VM != nil {
			t.Errorf("another organization's holder is visible: %+v", n.GPUs[3].VM)
		}
		// 8 GPUs: 0–2 Acme's, 3 and 4 Globex's, 7 failed; Acme counts the free
		// ones without learning whose the others are.
		if n.FreeGpuCount != 2 {
			t.Errorf("freeGpuCount %d, want 2", n.FreeGpuCount)
		}
		var ids []string
		for _, v := range n.Vms {
			ids = append(ids, v.ID+"="+strings.Join(v.GPUIDs, "+"))
		}
		if strings.Join(ids, " ") != "vm-acme-1=n1-g0+n1-g1 vm-acme-2= pod-acme-1=n1-g2" {
			t.Errorf("node vms = %v", ids)
		}
	})
}

func TestVMFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		r := env.GraphQL("acme-operator", `{ vm(id: "vm-acme-1") { id name organizationId status statusReason capabilityTier computeClass
			createdAt diskSizeGb endpointUrl gpuCount gpuManufacturer gpuModelId gpuModelName imageUrl managedBy pricePerHourCents
			provisioningStage public resourceSize serviceType tier volumeGb nodeId gpuIds cpuCores ramGb tearingDown interruptedAt
			node { name } gpus { index } gpuModel { memoryGb } } }`, nil)
		want := `{"vm":{"id":"vm-acme-1","name":"train-a","organizationId":"org-acme","status":"RUNNING","statusReason":"","capabilityTier":"","computeClass":"",` +
			`"createdAt":"2024-05-01T10:00:00.000Z","diskSizeGb":500,"endpointUrl":"https://vm-acme-1.example.net","gpuCount":2,"gpuManufacturer":"NVIDIA",` +
			`"gpuModelId":"h100-80gb","gpuModelName":"NVIDIA H100 80GB HBM3","imageUrl":"","managedBy":"","pricePerHourCents":450,"provisioningStage":"ready",` +
			`"public":false,"resourceSize":"2xH100","serviceType":"","tier":"standard","volumeGb":0,"nodeId":"n1","gpuIds":["n1-g0","n1-g1"],"cpuCores":16,` +
			`"ramGb":128,"tearingDown":false,"interruptedAt":null,"node":{"name":"gpu-node-1"},"gpus":[{"index":0},{"index":1}],"gpuModel":{"memoryGb":80}}}`
		if len(r.Errors) > 0 || string(r.Data) != want {
			t.Fatalf("got %s %+v\nwant %s", r.Data, r.Errors, want)
		}
	})
}

func TestVMListPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		r := env.GraphQL("acme-reader", `{ vms(limit: 2) { total next vms { id } } }`, nil)
		if string(r.Data) != `{"vms":{"total":3,"next":2,"vms":[{"id":"pod-acme-1"},{"id":"vm-acme-2"}]}}` {
			t.Fatalf("page 1 = %s %+v", r.Data, r.Errors)
		}
		r = env.GraphQL("acme-reader", `{ vms(limit: 2, offset: 2) { total next vms { id } } }`, nil)
		if string(r.Data) != `{"vms":{"total":3,"next":null,"vms":[{"id":"vm-acme-1"}]}}` {
			t.Fatalf("page 2 = %s", r.Data)
		}
		r = env.GraphQL("acme-reader", `{ vms(status: [STOPPED]) { total vms { id } } }`, nil)
		if string(r.Data) != `{"vms":{"total":1,"vms":[{"id":"vm-acme-2"}]}}` {
			t.Fatalf("stopped = %s", r.Data)
		}
		r = env.GraphQL("acme-reader", `{ vms(limit: 501) { total } }`, nil)
		if r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "limit must be between 1 and 500, got 501" || r.Errors[0].Extensions["status"] != float64(400) {
			t.Fatalf("limit 501 = %+v", r.Errors)
		}
	})
}

func TestAuth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		// No key and unknown keys: HTTP 401 before any query runs.
		for _, token := range []string{"", "not-a-key"} {
			r := env.GraphQL(token, `{ nodes { id } }`, nil)
			if r.Status != 401 || r.Code() != "UNAUTHENTICATED" || r.Errors[0].Extensions["status"] != float64(401) {
				t.Errorf("token %q: %d %+v", token, r.Status, r.Errors)
			}
		}
		// A known key without the permission: 403 on that field.
		r := env.GraphQL("acme-workloads", `{ nodes { id } }`, nil)
		if r.Code() != "FORBIDDEN" || r.Errors[0].Message != "this API key lacks the compute.read permission" || r.Errors[0].Extensions["status"] != float64(403) {
			t.Errorf("forbidden = %+v", r.Errors)
		}
		// compute.operate implies compute.read.
		r = env.GraphQL("acme-operator", `{ nodes { id } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"nodes":[{"id":"n1"},{"id":"n2"}]}` {
			t.Errorf("operator nodes = %s %+v", r.Data, r.Errors)
		}
		// Another organization's VM does not exist, at the root or nested.
		r = env.GraphQL("acme-operator", `{ vm(id: "vm-globex-1") { id } }`, nil)
		if len(r.Errors) > 0 || string(r.Data) != `{"vm":null}` {
			t.Errorf("cross-org vm = %s %+v", r.Data, r.Errors)
		}
		r = env.GraphQL("globex-operator", `{ node(id: "n1") { vms { id } gpus { vm { id } } } }`, nil)
		if strings.Contains(string(r.Data), "acme") || !strings.Contains(string(r.Data), "vm-globex-1") {
			t.Errorf("globex sees %s", r.Data)
		}
		r = env.GraphQL("globex-operator", `{ vms { total vms { id } } }`, nil)
		if string(r.Data) != `{"vms":{"total":1,"vms":[{"id":"vm-globex-1"}]}}` {
			t.Errorf("globex vms = %s", r.Data)
		}
	})
}

func TestErrorsNeverLeakInternals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		// Take the GPU table away under the server: reading GPUs now fails
		// with an engine error that names the table and the SQL.
		storetest.Exec(t, st, "ALTER TABLE gpus RENAME TO gpus_gone")
		leaks := func(face, text string) {
			for _, leak := range []string{"select", "sqlstate", "no such table", "does not exist", "gpus_gone", "goroutine", ".go:"} {
				if strings.Contains(strings.ToLower(text), leak) {
					t.Errorf("%s leaks %q: %s", face, leak, text)
				}
			}
		}
		r := env.GraphQL("acme-reader", `{ node(id: "n1") { gpus { id } } }`, nil)
		if r.Code() != "INTERNAL" || r.Errors[0].Message != "internal error" || r.Errors[0].Extensions["status"] != float64(500) {
			t.Fatalf("errors = %+v", r.Errors)
		}
		b, _ := json.Marshal([]any{r.Errors[0].Message, r.Errors[0].Extensions})
		leaks("GraphQL", string(b))

		status, body := env.Do("POST", "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil)
		if status != 500 || string(body) != `{"error":{"code":"INTERNAL","message":"internal error","requestId":"servertest"}}`+"\n" {
			t.Fatalf("REST = %d %s", status, body)
		}
		leaks("REST", string(body))
	})
}

func TestQueryLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		deep := "{ nodes { " + strings.Repeat("gpus { node { ", 7) + "id" + strings.Repeat(" } }", 7) + " } }"
		r := env.GraphQL("acme-reader", deep, nil)
		if r.Code() != "BAD_REQUEST" || !strings.HasPrefix(r.Errors[0].Message, "query is nested 16 levels deep, more than the limit of 15") {
			t.Fatalf("deep = %+v", r.Errors)
		}
		r = env.GraphQL("acme-reader", `{ nodes { nope } }`, nil)
		if r.Code() != "BAD_REQUEST" || r.Errors[0].Extensions["status"] != float64(400) {
			t.Fatalf("validation = %+v", r.Errors)
		}
	})
}

// Nested fields cost one statement per level, whatever the number of nodes.
func TestNestedLookupsAreBatched(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, fleet(50))
		q := `{ nodes { gpus { model { name } } vms { gpus { address } } } }`
		var r *servertest.Response
		n := env.Statements(func() { r = env.GraphQL("fleet-reader", q, nil) })
		var got struct {
			Nodes []struct {
				GPUs []struct{ Model struct{ Name string } }
				Vms  []struct{ GPUs []struct{ Address string } }
			}
		}
		env.Decode(r, &got)
		if len(got.Nodes) != 50 || len(got.Nodes[49].GPUs) != 8 || len(got.Nodes[49].Vms) != 1 || len(got.Nodes[49].Vms[0].GPUs) != 2 {
			t.Fatalf("answer shape: %d nodes", len(got.Nodes))
		}
		// key lookup + nodes + gpus + models + vms + vm gpus
		if n != 6 {
			t.Fatalf("%d statements for 50 nodes, want 6", n)
		}
		small := servertest.New(t, storetest.Open(t, st.Dialect), fleet(5))
		if m := small.Statements(func() { small.GraphQL("fleet-reader", q, nil) }); m != n {
			t.Fatalf("%d statements for 5 nodes, %d for 50", m, n)
		}
	})
}

// fleet is a fixture of n nodes of 8 GPUs, each with one VM holding two.
func fleet(n int) string {
	var nodes, vms []string
	for i := 0; i < n; i++ {
		var gpus []string
		for g := 0; g < 8; g++ {
			gpus = append(gpus, fmt.Sprintf(`{"id":"n%d-g%d","index":%d,"uuid":"GPU-%d-%d","address":"0000:%02X:00.0","modelId":"h100"}`, i, g, g, i, g, g+16))
		}
		nodes = append(nodes, fmt.Sprintf(`{"id":"n%d","name":"node-%03d","status":"online","cpuCores":64,"ramGb":512,"diskGb":1000,"gpus":[%s]}`, i, i, strings.Join(gpus, ",")))
		vms = append(vms, fmt.Sprintf(`{"id":"vm%d","name":"vm%d","organizationId":"o","nodeId":"n%d","status":"running","gpuModelId":"h100","gpuCount":2,"gpuIds":["n%d-g0","n%d-g1"]}`, i, i, i, i, i))
	}
	return `{"gpuModels":[{"id":"h100","name":"NVIDIA H100","manufacturer":"NVIDIA","memoryGb":80}],
		"organizations":[{"id":"o","name":"Fleet","tenantId":9},{"id":"ops","name":"Operator","tenantId":10}],
		"apiKeys":[{"token":"fleet-reader","organizationId":"o","permissions":["compute.read"]},
		           {"token":"fleet-operator","organizationId":"ops","permissions":["compute.read","nodes.admin"]}],
		"nodes":[` + strings.Join(nodes, ",") + `],"vms":[` + strings.Join(vms, ",") + `]}`
}

// A GPU's holder, whichever organization's, is the fleet operator's
// (nodes.admin) to read; any other key reads null, its own holders
// included (it reads those in vm), and counts of the rest.
func TestGPUHolderIsTheOperators(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, fleet(2))
		const q = `{ node(id: "n1") { freeGpuCount gpus { index holder { organizationId vmId } vm { id } } } }`
		holders := func(token string) string {
			t.Helper()
			var got struct {
				Node struct {
					FreeGpuCount int
					GPUs         []struct {
						Index  int
						Holder *struct{ OrganizationID, VMID string }
						VM     *struct{ ID string }
					}
				}
			}
			env.Decode(env.GraphQL(token, q, nil), &got)
			out := []string{fmt.Sprintf("free=%d", got.Node.FreeGpuCount)}
			for _, g := range got.Node.GPUs {
				h, v := "-", "-"
				if g.Holder != nil {
					h = g.Holder.OrganizationID + "/" + g.Holder.VMID
				}
				if g.VM != nil {
					v = g.VM.ID
				}
				out = append(out, fmt.Sprintf("%d:%s:%s", g.Index, h, v))
			}
			return strings.Join(out, " ")
		}
		if got, want := holders("fleet-operator"), "free=6 0:o/vm1:- 1:o/vm1:- 2:-:- 3:-:- 4:-:- 5:-:- 6:-:- 7:-:-"; got != want {
			t.Errorf("operator:\n got %s\nwant %s", got, want)
		}
		if got, want := holders("fleet-reader"), "free=6 0:-:vm1 1:-:vm1 2:-:- 3:-:- 4:-:- 5:-:- 6:-:- 7:-:-"; got != want {
			t.Errorf("tenant:\n got %s\nwant %s", got, want)
		}
		// The same through a planned list (nodes), which answers without
		// gqlgen's resolvers.
		r := env.GraphQL("fleet-operator", `{ nodes { name gpus { holder { organizationId vmId } } } }`, nil)
		if want := `{"name":"node-001","gpus":[{"holder":{"organizationId":"o","vmId":"vm1"}},{"holder":{"organizationId":"o","vmId":"vm1"}},{"holder":null}`; !strings.Contains(string(r.Data), want) {
			t.Errorf("nodes as the operator: %s", r.Data)
		}
		if r := env.GraphQL("fleet-reader", `{ nodes { gpus { holder { vmId } } } }`, nil); strings.Contains(string(r.Data), "vmId\":\"") {
			t.Errorf("nodes as a tenant: %s", r.Data)
		}
	})
}

func TestIntrospectionFlagAndPersistedQueries(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	on := servertest.New(t, st, servertest.Base)
	if r := on.GraphQL("acme-reader", `{ __schema { queryType { name } } }`, nil); string(r.Data) != `{"__schema":{"queryType":{"name":"Query"}}}` {
		t.Fatalf("introspection on = %s %+v", r.Data, r.Errors)
	}
	off := servertest.NewWithConfig(t, st, "", httpapi.Config{DisableIntrospection: true})
	if r := off.GraphQL("acme-reader", `{ __schema { queryType { name } } }`, nil); r.Code() != "FORBIDDEN" || r.Errors[0].Message != "introspection is disabled on this server" {
		t.Fatalf("introspection off = %s %+v", r.Data, r.Errors)
	}
	if r := off.GraphQL("acme-reader", `{ ...F } fragment F on Query { __type(name: "Node") { name } }`, nil); r.Code() != "FORBIDDEN" {
		t.Fatalf("introspection through a fragment = %s %+v", r.Data, r.Errors)
	}
	if r := off.GraphQL("acme-reader", `{ nodes { id } }`, nil); len(r.Errors) > 0 {
		t.Fatalf("plain query with introspection off = %+v", r.Errors)
	}

	// Automatic persisted queries: the hash alone is enough once the query was sent with it.
	q := `{ nodes { id } }`
	sum := sha256.Sum256([]byte(q))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	body := func(withQuery bool) []byte {
		m := map[string]any{"extensions": ext}
		if withQuery {
			m["query"] = q
		}
		b, _ := json.Marshal(m)
		return b
	}
	if status, b := on.Do("POST", "/graphql", "acme-reader", body(false), nil); status != 200 || !strings.Contains(string(b), "PersistedQueryNotFound") {
		t.Fatalf("unknown hash = %d %s", status, b)
	}
	on.Do("POST", "/graphql", "acme-reader", body(true), nil)
	if status, b := on.Do("POST", "/graphql", "acme-reader", body(false), nil); status != 200 || string(b) != `{"data":{"nodes":[{"id":"n1"},{"id":"n2"}]}}` {
		t.Fatalf("by hash = %d %s", status, b)
	}
}
