package rest

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/httpapi/rest/openapi"
	"gpugraph/internal/lib/rowfield"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// objectKeys are the keys of the JSON object at path in doc, in order.
func objectKeys(t *testing.T, doc []byte, path ...string) []string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	for _, p := range path {
		var m map[string]json.RawMessage
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		dec = json.NewDecoder(bytes.NewReader(m[p]))
	}
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%v: %v %v", path, tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestVMKeys holds the REST VM object to the VM field registry and to the
// OpenAPI document: it writes every registry key and only those, the
// document's VM properties, in the registry's REST order (the seed's keys
// sorted, then gpugraph's own), and the gpu fields only for a VM with a
// GPU model.
func TestVMKeys(t *testing.T) {
	documented := objectKeys(t, openapi.Document(), "components", "schemas", "VM", "properties")
	var want []string
	for _, f := range vmOrder {
		want = append(want, f.Key)
	}
	if !slices.Equal(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(documented))) {
		t.Errorf("the registry writes %v, the OpenAPI document has %v", want, documented)
	}
	if i := slices.Index(want, "nodeId"); i < 0 || !slices.IsSorted(want[:i]) {
		t.Errorf("the seed's keys are not first and sorted: %v", want)
	}
	model := "h100"
	created := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	res := &compute.Result{
		VM:    &models.VM{ID: "vm1", Status: models.VMStatus("running"), GPUModelID: &model, CreatedAt: &created},
		GPUs:  []*models.GPU{{ID: "g1"}, {ID: "g2"}},
		Model: &models.GPUModel{ID: "h100", Name: "NVIDIA H100", Manufacturer: "NVIDIA"},
	}
	b, err := json.Marshal(encodeVM(res))
	if err != nil {
		t.Fatal(err)
	}
	if got := objectKeys(t, b); !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["createdAt"] != "2026-01-02T03:04:05.600Z" || got["status"] != "running" || got["gpuModelName"] != "NVIDIA H100" ||
		got["gpuManufacturer"] != "NVIDIA" || got["interruptedAt"] != nil || len(got["gpuIds"].([]any)) != 2 {
		t.Errorf("wrote %s", b)
	}
	cpuOnly, _ := json.Marshal(encodeVM(&compute.Result{VM: &models.VM{ID: "vm2"}}))
	keys := objectKeys(t, cpuOnly)
	for _, k := range []string{"gpuManufacturer", "gpuModelId", "gpuModelName"} {
		if slices.Contains(keys, k) {
			t.Errorf("a CPU-only VM writes %s: %s", k, cpuOnly)
		}
	}
	if len(keys) != len(want)-3 {
		t.Errorf("a CPU-only VM writes %v", keys)
	}
}

// The recipe of package rowfield's doc, on the REST side: a field of the
// row, one registry entry, and the object writes it where the order says
// (here a field of gpugraph's own, after the seed's), null when unknown,
// left out when it is OmitNull.
func TestRecipeAddingAVMField(t *testing.T) {
	type vm struct {
		ID   string     `json:"id"`
		Zone *string    `json:"zone"`
		Seen *time.Time `json:"seenAt"`
	}
	fields := []rowfield.Field[vm]{
		{Column: "id", Into: func(v *vm) any { return &v.ID }, Seed: true},
		{Column: "seen_at", Into: func(v *vm) any { return &v.Seen }},
	}
	zone := "eu-1"
	row := &vm{ID: "vm1", Zone: &zone}
	write := func(reg *rowfield.Registry[vm], row *vm) string {
		b, err := writeObject(objectOrder(reg), row, func(string) any { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := write(rowfield.New(fields...), row); got != `{"id":"vm1","seenAt":null}` {
		t.Errorf("before: %s", got)
	}
	added := append(slices.Clone(fields), rowfield.Field[vm]{Column: "zone", Into: func(v *vm) any { return &v.Zone }, OmitNull: true})
	if got := write(rowfield.New(added...), row); got != `{"id":"vm1","seenAt":null,"zone":"eu-1"}` {
		t.Errorf("after: %s", got)
	}
	if got := write(rowfield.New(added...), &vm{ID: "vm2"}); got != `{"id":"vm2","seenAt":null}` {
		t.Errorf("after, no zone: %s", got)
	}
}
