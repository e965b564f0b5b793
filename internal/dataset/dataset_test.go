package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func count(t *testing.T, st *store.Store, table string) int64 {
	t.Helper()
	n := storetest.Count(t, st, table, "")
	return n
}

func TestLoadBase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		stats, err := dataset.LoadFile(ctx, st, []byte(datasettest.Base))
		if err != nil {
			t.Fatal(err)
		}
		if stats != (dataset.Stats{Nodes: 2, GPUs: 12, VMs: 4, Pods: 4, Samples: 3}) {
			t.Fatalf("stats = %+v", stats)
		}
		// Loading again replaces, never duplicates.
		if _, err := dataset.LoadFile(ctx, st, []byte(datasettest.Base)); err != nil {
			t.Fatalf("second load: %v", err)
		}
		for table, want := range map[string]int64{"instance_types": 5, "gpus": 12, "vms": 4, "pods": 4, "api_keys": 6, "metric_samples": 2, "histogram_samples": 1} {
			if got := count(t, st, table); got != want {
				t.Errorf("%s: %d rows, want %d", table, got, want)
			}
		}
		var held []string
		storetest.Scan(t, st, &held, "SELECT id FROM gpus WHERE holder_vm_id = ? ORDER BY idx", "vm-acme-1")
		if strings.Join(held, ",") != "n1-g0,n1-g1" {
			t.Errorf("vm-acme-1 holds %v", held)
		}
		var p models.Pod
		storetest.Take(t, st, &p, "pods", "id = ?", "aaaaaaaa-0000-4000-8000-000000000001")
		if p.WorkloadName == nil || *p.WorkloadName != "resnet-train" || p.ProjectName == nil || *p.ProjectName != "vision" {
			t.Errorf("names not filled from the catalog: %v %v", p.WorkloadName, p.ProjectName)
		}
		if !p.CreatedAt.Equal(time.Date(2024, 6, 2, 3, 49, 52, 531e6, time.UTC)) {
			t.Errorf("createdAt = %v", p.CreatedAt)
		}
		if got := *p.RequestedResources.ExtendedResources[0].Quantity; got != "2" {
			t.Errorf("quantity = %q", got)
		}
	})
}

// mutate applies fn to the decoded base fixture and answers the JSON.
func mutate(t *testing.T, fn func(f map[string]any)) []byte {
	t.Helper()
	var f map[string]any
	if err := json.Unmarshal([]byte(datasettest.Base), &f); err != nil {
		t.Fatal(err)
	}
	fn(f)
	b, _ := json.Marshal(f)
	return b
}

func row(f map[string]any, section string, i int) map[string]any {
	return f[section].([]any)[i].(map[string]any)
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit func(f map[string]any)
		want string
	}{
		{"pod on unknown workload", func(f map[string]any) { row(f, "pods", 2)["workloadId"] = "nope" },
			`fixture refused: pods[2] (id "aaaaaaaa-0000-4000-8000-000000000003"): workloadId "nope" is not in the file nor in the database`},
		{"gpu on unknown model", func(f map[string]any) {
			row(f, "nodes", 1)["gpus"].([]any)[0].(map[string]any)["modelId"] = "b200"
		}, `fixture refused: nodes[1] (id "n2").gpus[0] (id "n2-g0"): modelId "b200" is not in the file nor in the database`},
		{"gpu held twice", func(f map[string]any) { row(f, "vms", 2)["gpuIds"] = []any{"n1-g1"} },
			`fixture refused: vms[2] (id "pod-acme-1"): gpuIds: GPU "n1-g1" is already held by vms[0] (id "vm-acme-1")`},
		{"stopped VM holding", func(f map[string]any) { row(f, "vms", 1)["gpuIds"] = []any{"n1-g5"} },
			`fixture refused: vms[1] (id "vm-acme-2"): a stopped VM holds no GPUs, but gpuIds lists 1`},
		{"gpu on another node", func(f map[string]any) { row(f, "vms", 0)["gpuIds"] = []any{"n1-g0", "n2-g1"} },
			`fixture refused: vms[0] (id "vm-acme-1"): gpuIds: GPU "n2-g1" is on node "n2", not on its node "n1"`},
		{"bad status", func(f map[string]any) { row(f, "vms", 0)["status"] = "sleeping" },
			`fixture refused: vms[0] (id "vm-acme-1"): status "sleeping" is not one of pending, deploying, running, stopped, failed, terminated, interrupted`},
		{"bad permission", func(f map[string]any) { row(f, "apiKeys", 1)["permissions"] = []any{"compute.write"} },
			`fixture refused: apiKeys[1]: permission "compute.write" is not one of [compute.read compute.operate workloads.read billing.read metrics.write nodes.report nodes.admin admin]`},
		{"duplicate id", func(f map[string]any) { row(f, "vms", 1)["id"] = "vm-acme-1" },
			`fixture refused: vms[1] (id "vm-acme-1"): id appears twice in the file`},
		{"bad manufacturer", func(f map[string]any) { row(f, "gpuModels", 0)["manufacturer"] = "Intel" },
			`fixture refused: gpuModels[0] (id "h100-80gb"): manufacturer "Intel" is not NVIDIA or AMD`},
		{"bad sample value", func(f map[string]any) {
			row(f, "podMetrics", 0)["samples"] = []any{[]any{"2024-12-20T14:30:00Z", "high"}}
		}, `fixture refused: podMetrics[0] (pod "aaaaaaaa-0000-4000-8000-000000000001", type "GPU_UTILIZATION_PER_GPU").samples[0]: value "high" is not a number`},
		{"histogram without +Inf", func(f map[string]any) {
			row(f, "podHistograms", 0)["samples"] = []any{map[string]any{"timestamp": "2024-12-20T14:30:00Z", "buckets": map[string]any{"0.1": "3"}}}
		}, `fixture refused: podHistograms[0] (pod "aaaaaaaa-0000-4000-8000-000000000003", type "NIM_TIME_TO_FIRST_TOKEN_SECONDS").samples[0]: buckets lack the "+Inf" bucket`},
		{"unknown node fabric", func(f map[string]any) { row(f, "nodes", 0)["fabricId"] = "ib-9" },
			`fixture refused: nodes[0] (id "n1"): fabricId "ib-9" is not in the file nor in the database`},
		{"instance type of unknown model", func(f map[string]any) { row(f, "instanceTypes", 1)["gpuModelId"] = "b200" },
			`fixture refused: instanceTypes[1] (name "gpu_1x_h100_sxm5"): gpuModelId "b200" is not in the file nor in the database`},
		{"instance type bad name", func(f map[string]any) { row(f, "instanceTypes", 1)["name"] = "GPU-1x-H100" },
			`fixture refused: instanceTypes[1] (name "GPU-1x-H100"): name "GPU-1x-H100" is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)`},
		{"instance type name missing", func(f map[string]any) { delete(row(f, "instanceTypes", 2), "name") },
			`fixture refused: instanceTypes[2]: name is missing`},
		{"instance type name twice", func(f map[string]any) { row(f, "instanceTypes", 2)["name"] = "gpu_1x_h100_sxm5" },
			`fixture refused: instanceTypes[2] (name "gpu_1x_h100_sxm5"): name "gpu_1x_h100_sxm5" is already the name of instanceTypes[1] (name "gpu_1x_h100_sxm5")`},
		{"instance type negative cpu", func(f map[string]any) { row(f, "instanceTypes", 3)["cpuCores"] = -4 },
			`fixture refused: instanceTypes[3] (name "gpu_4x_mi300x"): cpuCores must not be negative, got -4`},
		{"instance type negative price", func(f map[string]any) { row(f, "instanceTypes", 0)["pricePerHourCents"] = -1 },
			`fixture refused: instanceTypes[0] (name "cpu_16c_64gb"): pricePerHourCents must not be negative, got -1`},
		{"instance type GPUs without model", func(f map[string]any) { row(f, "instanceTypes", 0)["gpuCount"] = 2 },
			`fixture refused: instanceTypes[0] (name "cpu_16c_64gb"): gpuModelId is missing: a type with GPUs names their model`},
		{"instance type model without GPUs", func(f map[string]any) { row(f, "instanceTypes", 1)["gpuCount"] = 0 },
			`fixture refused: instanceTypes[1] (name "gpu_1x_h100_sxm5"): gpuCount must be at least 1 for a type of gpuModelId "h100-80gb" (a CPU-only type has no gpuModelId)`},
		{"credit of 0", func(f map[string]any) { f["credits"] = []any{credit("org-acme", "k1", 0, "trial")} },
			`fixture refused: credits[0]: amountCents 0 is not a whole number of cents from 1 to 10000000000`},
		{"credit of unknown organization", func(f map[string]any) { f["credits"] = []any{credit("org-nope", "k1", 500, "trial")} },
			`fixture refused: credits[0]: organizationId "org-nope" is not in the file nor in the database`},
		{"credit without reason", func(f map[string]any) { f["credits"] = []any{credit("org-acme", "k1", 500, "  ")} },
			`fixture refused: credits[0]: reason is missing`},
		{"credit without key", func(f map[string]any) { f["credits"] = []any{credit("org-acme", "", 500, "trial")} },
			`fixture refused: credits[0]: key is missing`},
		{"credit key twice", func(f map[string]any) {
			f["credits"] = []any{credit("org-acme", "k1", 500, "trial"), credit("org-globex", "k1", 500, "trial"), credit("org-acme", "k1", 700, "more")}
		}, `fixture refused: credits[2]: key "k1" appears twice in the file for organization org-acme`},
		{"not json", nil, `fixture refused: file: not a fixture file: unexpected end of JSON input`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				b := []byte(`{"pods": [`)
				if tc.edit != nil {
					b = mutate(t, tc.edit)
				}
				_, err := dataset.LoadFile(context.Background(), st, b)
				if err == nil || err.Error() != tc.want {
					t.Fatalf("err = %v\nwant %s", err, tc.want)
				}
				for _, table := range []string{"gpu_models", "instance_types", "nodes", "gpus", "organizations", "api_keys", "ledger_entries", "vms", "pods", "metric_samples"} {
					if n := count(t, st, table); n != 0 {
						t.Errorf("%s has %d rows after a refused load", table, n)
					}
				}
			})
		})
	}
}

func credit(org, key string, cents int64, reason string) map[string]any {
	return map[string]any{"organizationId": org, "key": key, "amountCents": cents, "reason": reason}
}

// A fixture's credits make their organizations prepaid; loading the file
// again appends none twice, and a credit granted with the same key is it.
func TestLoadCredits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := mutate(t, func(f map[string]any) {
			f["credits"] = []any{credit("org-globex", "welcome", 450, " trial credit "), credit("org-globex", "top-up", 50, "top-up")}
		})
		before := store.Now()
		for i := 0; i < 2; i++ {
			if _, err := dataset.LoadFile(ctx, st, b); err != nil {
				t.Fatalf("load %d: %v", i+1, err)
			}
		}
		if n := count(t, st, "ledger_entries"); n != 2 {
			t.Errorf("%d ledger entries, want 2", n)
		}
		bal, prepaid, err := st.LedgerBalance(ctx, "org-globex")
		if err != nil || bal != 500*models.MicroCentsPerCent || !prepaid {
			t.Errorf("org-globex: balance %d µ¢, prepaid %v, %v; want 500 cents, prepaid", bal, prepaid, err)
		}
		if bal, prepaid, err := st.LedgerBalance(ctx, "org-acme"); err != nil || bal != 0 || prepaid {
			t.Errorf("org-acme: balance %d, prepaid %v, %v; want postpaid", bal, prepaid, err)
		}
		es, err := st.LedgerEntries(ctx, "org-globex", 0, 10)
		if err != nil || len(es) != 2 {
			t.Fatalf("entries %+v, %v", es, err)
		}
		e := es[0]
		if e.Kind != models.LedgerCredit || e.AmountMicroCents != 450*models.MicroCentsPerCent || e.Reason != "trial credit" ||
			e.IdempotencyKey != "credit:welcome" || e.CreatedAt.Before(before) {
			t.Errorf("first entry %+v", e)
		}
	})
}

// A fixture may reference rows an earlier load stored.
func TestReferencesIntoDatabase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.LoadFile(ctx, st, []byte(datasettest.Base)); err != nil {
			t.Fatal(err)
		}
		more := `{"pods": [{"id": "bbbbbbbb-0000-4000-8000-000000000001", "name": "late", "workloadId": "11111111-1111-4111-8111-111111111111",
			"clusterId": "c", "tenantId": 1001, "createdAt": "2024-07-01T00:00:00Z", "k8sPhase": "Pending", "containers": []}]}`
		if _, err := dataset.LoadFile(ctx, st, []byte(more)); err != nil {
			t.Fatal(err)
		}
		var name string
		storetest.Scan(t, st, &name, "SELECT workload_name FROM pods WHERE id = ?", "bbbbbbbb-0000-4000-8000-000000000001")
		if name != "resnet-train" {
			t.Fatalf("workload_name = %q", name)
		}
		// A GPU a stored VM holds cannot be claimed by a VM of a later file.
		steal := `{"vms": [{"id": "vm-new", "name": "thief", "organizationId": "org-acme", "nodeId": "n1", "status": "running",
			"gpuModelId": "h100-80gb", "gpuCount": 1, "gpuIds": ["n1-g0"]}]}`
		_, err := dataset.LoadFile(ctx, st, []byte(steal))
		if err == nil || err.Error() != `fixture refused: vms[0] (id "vm-new"): gpuIds: GPU "n1-g0" is already held by VM "vm-acme-1"` {
			t.Fatalf("steal: %v", err)
		}
	})
}

// Big fixtures load in batches, well inside SQLite's parameter limit.
func TestLoadManyPods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var b strings.Builder
		b.WriteString(`{"organizations":[{"id":"o","name":"O","tenantId":7}],"projects":[{"id":"p","name":"P","tenantId":7}],
			"workloads":[{"id":"w","name":"W","projectId":"p"}],"pods":[`)
		for i := 0; i < 3000; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"pod-%d","name":"p%d","workloadId":"w","tenantId":7,"createdAt":"2024-01-01T00:00:00Z","k8sPhase":"Running","containers":[]}`, i, i)
		}
		b.WriteString("]}")
		if _, err := dataset.LoadFile(context.Background(), st, []byte(b.String())); err != nil {
			t.Fatal(err)
		}
		if n := count(t, st, "pods"); n != 3000 {
			t.Fatalf("%d pods", n)
		}
	})
}

// The catalog loads as the file writes it, by name, a CPU-only type with
// no model; a later file replaces a type of the same name whole.
func TestLoadInstanceTypes(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		types, err := st.InstanceTypes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, it := range types {
			names = append(names, it.Name)
		}
		if got := strings.Join(names, " "); got != "cpu_16c_64gb gpu_1x_h100_sxm5 gpu_2x_h100_sxm5 gpu_4x_mi300x gpu_8x_h100_sxm5" {
			t.Fatalf("types by name: %s", got)
		}
		if cpu := types[0]; cpu.GPUModelID != nil || cpu.GPUCount != 0 || cpu.CPUCores != 16 || cpu.RAMGb != 64 || cpu.DiskSizeGb != 500 || cpu.PricePerHourCents != 40 {
			t.Errorf("cpu_16c_64gb: %+v", cpu)
		}
		h := `{"instanceTypes": [{"name": "gpu_1x_h100_sxm5", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 14,
			"ramGb": 200, "diskSizeGb": 1000, "pricePerHourCents": 199}]}`
		if _, err := dataset.LoadFile(ctx, st, []byte(h)); err != nil {
			t.Fatal(err)
		}
		got, err := st.InstanceType(ctx, "gpu_1x_h100_sxm5")
		want := models.InstanceType{Name: "gpu_1x_h100_sxm5", GPUModelID: got.GPUModelID, GPUCount: 1, CPUCores: 14, RAMGb: 200, DiskSizeGb: 1000, PricePerHourCents: 199}
		if err != nil || got != want || *got.GPUModelID != "h100-80gb" {
			t.Fatalf("replaced type: %+v %v", got, err)
		}
	})
}

// A project id is its tenant's own: one file may give two tenants each a
// project "42". A workload names its project's tenant where the id is
// more than one tenant's (else it takes the one tenant's), and a pod's
// project is its own tenant's project of that id, whose name it takes.
func TestLoadProjectIDsPerTenant(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const head = `"organizations":[{"id":"o7","name":"Seven","tenantId":7},{"id":"o8","name":"Eight","tenantId":8}],
			"projects":[{"id":"42","name":"alpha","tenantId":7},{"id":"42","name":"beta","tenantId":8}]`
		pod := func(id string, tenant int, workload string) string {
			return fmt.Sprintf(`{"id":%q,"name":%q,"workloadId":%q,"projectId":"42","tenantId":%d,"createdAt":"2024-01-01T00:00:00Z","k8sPhase":"Running"}`,
				id, id, workload, tenant)
		}
		file := `{` + head + `,
			"workloads":[{"id":"w7","name":"W7","projectId":"42","tenantId":7},{"id":"w8","name":"W8","projectId":"42","tenantId":8}],
			"pods":[` + pod("p7", 7, "w7") + `,` + pod("p8", 8, "w8") + `]}`
		if _, err := dataset.LoadFile(ctx, st, []byte(file)); err != nil {
			t.Fatal(err)
		}
		var rows []string
		storetest.Scan(t, st, &rows, `SELECT 'project ' || tenant_id || ' ' || id || ' ' || name FROM projects
			UNION ALL SELECT 'workload ' || id || ' ' || tenant_id || ' ' || project_id FROM workloads
			UNION ALL SELECT 'pod ' || id || ' ' || tenant_id || ' ' || project_id || ' ' || project_name FROM pods ORDER BY 1`)
		if want := "[pod p7 7 42 alpha pod p8 8 42 beta project 7 42 alpha project 8 42 beta workload w7 7 42 workload w8 8 42]"; fmt.Sprint(rows) != want {
			t.Errorf("loaded %v\nwant %s", rows, want)
		}
		// Project 43 is tenant 7's alone (stored): a workload of it takes tenant 7.
		if _, err := dataset.LoadFile(ctx, st, []byte(`{"projects":[{"id":"43","name":"gamma","tenantId":7}]}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := dataset.LoadFile(ctx, st, []byte(`{"workloads":[{"id":"w43","name":"W","projectId":"43"}]}`)); err != nil {
			t.Fatal(err)
		}
		var tenant int
		if storetest.Scan(t, st, &tenant, "SELECT tenant_id FROM workloads WHERE id = 'w43'"); tenant != 7 {
			t.Errorf("workload w43 of tenant %d, want 7", tenant)
		}
		for _, c := range []struct{ name, file, want string }{
			{"ambiguous project", `{"workloads":[{"id":"w","name":"W","projectId":"42"}]}`,
				`fixture refused: workloads[0] (id "w"): projectId "42" is a project of tenants 7, 8: give the workload its project's tenantId`},
			{"another tenant's project", `{"workloads":[{"id":"w","name":"W","projectId":"43","tenantId":8}]}`,
				`fixture refused: workloads[0] (id "w"): projectId "43" is not a project of tenant 8 in the file nor in the database`},
			{"unknown project", `{"workloads":[{"id":"w","name":"W","projectId":"44"}]}`,
				`fixture refused: workloads[0] (id "w"): projectId "44" is not in the file nor in the database`},
			{"pod in another tenant's project", `{"pods":[` + pod("p9", 7, "w43") + `,` + pod("p10", 9, "w43") + `]}`,
				`fixture refused: pods[1] (id "p10"): projectId "42" is not a project of tenant 9 in the file nor in the database`},
			{"project twice", `{"projects":[{"id":"42","name":"a","tenantId":7},{"id":"42","name":"b","tenantId":7}]}`,
				`fixture refused: projects[1] (id "42"): id appears twice in the file for tenant 7`},
		} {
			if _, err := dataset.LoadFile(ctx, st, []byte(c.file)); err == nil || err.Error() != c.want {
				t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
			}
		}
	})
}
