package instancetypes_test

import (
	"context"
	"strings"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// operators adds a platform operator's key to the fixture.
const operators = `{"apiKeys": [{"token": "acme-ops", "organizationId": "org-acme", "permissions": ["nodes.admin"]}]}`

// Any caller of an organization reads the catalog, whatever it holds; an
// unknown name, and one no type could have, is a 404 naming it.
func TestGetAndList(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := instancetypes.New(st)
		for _, key := range []string{"acme-reader", "acme-metrics", "globex-operator"} {
			c := datasettest.Caller(t, st, key)
			got, err := svc.Get(ctx, c, "gpu_2x_h100_sxm5")
			want := models.InstanceType{Name: "gpu_2x_h100_sxm5", GPUModelID: got.GPUModelID, GPUCount: 2, CPUCores: 32, RAMGb: 512,
				DiskSizeGb: 7500, VolumeGb: 500, PricePerHourCents: 498, Description: "2x H100 80GB SXM5, 32 CPU cores, 512 GB RAM, 7.5 TB NVMe"}
			if err != nil || got != want || *got.GPUModelID != "h100-80gb" {
				t.Fatalf("%s: get: %+v %v", key, got, err)
			}
			list, err := svc.List(ctx, c)
			if err != nil || len(list) != 5 || list[0].Name != "cpu_16c_64gb" || list[4].Name != "gpu_8x_h100_sxm5" {
				t.Fatalf("%s: list: %+v %v", key, list, err)
			}
		}
		c := datasettest.Caller(t, st, "acme-reader")
		_, err := svc.Get(ctx, c, "gpu_1x_b200")
		datasettest.WantError(t, err, 404, instancetypes.CodeNotFound, `there is no instance type "gpu_1x_b200"`)
		_, err = svc.Get(ctx, c, "GPU 1x")
		datasettest.WantError(t, err, 404, instancetypes.CodeNotFound, `there is no instance type "GPU 1x"`)
		_, err = svc.Get(ctx, c, strings.Repeat("x", 64)+"-and-more")
		datasettest.WantError(t, err, 404, instancetypes.CodeNotFound, `there is no instance type "`+strings.Repeat("x", 64)+`…"`)
		_, err = svc.List(ctx, nil)
		datasettest.WantError(t, err, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>")
	})
}

// An operator creates (created: true), replaces (false) and deletes a
// type; bad fields answer 400 naming them and write nothing.
func TestOperatorWrites(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, operators)
		svc := instancetypes.New(st)
		ops := datasettest.Caller(t, st, "acme-ops")
		it := models.InstanceType{Name: "gpu_4x_h100_sxm5", GPUModelID: new("h100-80gb"), GPUCount: 4, CPUCores: 64, RAMGb: 1024,
			DiskSizeGb: 15000, VolumeGb: 1000, PricePerHourCents: 996, Description: "4x H100"}
		if _, created, err := svc.Put(ctx, ops, it); err != nil || !created {
			t.Fatalf("create: %v %v", created, err)
		}
		it.PricePerHourCents, it.Description = 899, ""
		if _, created, err := svc.Put(ctx, ops, it); err != nil || created {
			t.Fatalf("replace: %v %v", created, err)
		}
		got, err := svc.Get(ctx, ops, "gpu_4x_h100_sxm5")
		if err != nil || got.PricePerHourCents != 899 || got.Description != "" || got.GPUCount != 4 {
			t.Fatalf("after replace: %+v %v", got, err)
		}
		// A GPU type becomes CPU-only: the model column is cleared too.
		cpu := models.InstanceType{Name: "gpu_4x_h100_sxm5", CPUCores: 8, RAMGb: 32}
		if _, _, err := svc.Put(ctx, ops, cpu); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.Get(ctx, ops, "gpu_4x_h100_sxm5"); got != cpu {
			t.Fatalf("after CPU-only replace: %+v", got)
		}

		for _, c := range []struct {
			t   models.InstanceType
			msg string
		}{
			{models.InstanceType{Name: "Big-One", CPUCores: 1}, `name "Big-One" is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)`},
			{models.InstanceType{Name: "x", CPUCores: 1, RAMGb: -2}, "ramGb must not be negative, got -2"},
			{models.InstanceType{Name: "x", GPUModelID: new("b200"), GPUCount: 1}, `gpuModelId "b200" is not a GPU model of the catalog`},
			{models.InstanceType{Name: "x", GPUCount: 1}, "gpuModelId is missing: a type with GPUs names their model"},
			{models.InstanceType{Name: "x"}, "cpuCores must be at least 1 for a CPU-only type"},
		} {
			_, _, err := svc.Put(ctx, ops, c.t)
			datasettest.WantError(t, err, 400, "BAD_REQUEST", c.msg)
		}
		if _, err := st.InstanceType(ctx, "x"); err != store.ErrNoInstanceType {
			t.Errorf("a refused type was written: %v", err)
		}

		if err := svc.Delete(ctx, ops, "gpu_4x_h100_sxm5"); err != nil {
			t.Fatal(err)
		}
		err = svc.Delete(ctx, ops, "gpu_4x_h100_sxm5")
		datasettest.WantError(t, err, 404, instancetypes.CodeNotFound, `there is no instance type "gpu_4x_h100_sxm5"`)
	})
}

// Writes need nodes.admin: an organization's operator gets the 403 before
// a bad body's 400, and nothing changes.
func TestWritesNeedNodesAdmin(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := instancetypes.New(st)
		c := datasettest.Caller(t, st, "acme-operator")
		_, _, err := svc.Put(ctx, c, models.InstanceType{Name: "BAD"})
		datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
		err = svc.Delete(ctx, c, "gpu_1x_h100_sxm5")
		datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
		if _, err := svc.Get(ctx, c, "gpu_1x_h100_sxm5"); err != nil {
			t.Fatalf("deleted by a refused caller: %v", err)
		}
	})
}
