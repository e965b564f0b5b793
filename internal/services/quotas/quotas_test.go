package quotas_test

import (
	"context"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/quotas"
	"gpugraph/internal/store"
)

const operators = `{"apiKeys": [{"token": "acme-ops", "organizationId": "org-acme", "permissions": ["nodes.admin"]}]}`

// An operator sets, replaces and lifts a quota; each read shows what the
// organization uses now (acme: vm-acme-1's 2 H100 and pod-acme-1's 1; the
// stopped vm-acme-2 holds none).
func TestSetListDelete(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, operators)
		svc := quotas.New(st)
		ops := datasettest.Caller(t, st, "acme-ops")
		q, created, err := svc.Set(ctx, ops, "org-acme", "h100-80gb", 8)
		if err != nil || !created || q.Limit != 8 || q.Used != 3 || q.Model.Name != "NVIDIA H100 80GB HBM3" || q.OrganizationID != "org-acme" {
			t.Fatalf("set: %+v %v %v", q, created, err)
		}
		if q, created, err = svc.Set(ctx, ops, "org-acme", "h100-80gb", 4); err != nil || created || q.Limit != 4 {
			t.Fatalf("replace: %+v %v %v", q, created, err)
		}
		if _, _, err := svc.Set(ctx, ops, "org-globex", "mi300x", 0); err != nil {
			t.Fatal(err)
		}
		list, err := svc.List(ctx, ops, "org-acme")
		if err != nil || len(list) != 1 || list[0].Limit != 4 || list[0].Used != 3 {
			t.Fatalf("acme's: %+v %v", list, err)
		}
		list, err = svc.List(ctx, ops, "org-globex")
		if err != nil || len(list) != 1 || list[0].Model.ID != "mi300x" || list[0].Limit != 0 || list[0].Used != 0 {
			t.Fatalf("globex's: %+v %v", list, err)
		}
		if err := svc.Delete(ctx, ops, "org-acme", "h100-80gb"); err != nil {
			t.Fatal(err)
		}
		err = svc.Delete(ctx, ops, "org-acme", "h100-80gb")
		datasettest.WantError(t, err, 404, quotas.CodeQuotaNotFound, `organization org-acme has no GPU quota for "h100-80gb"`)
		if list, err := svc.List(ctx, ops, "org-acme"); err != nil || len(list) != 0 {
			t.Fatalf("after lifting: %+v %v", list, err)
		}

		_, _, err = svc.Set(ctx, ops, "org-initech", "h100-80gb", 1)
		datasettest.WantError(t, err, 404, quotas.CodeOrganizationNotFound, `there is no organization "org-initech"`)
		_, _, err = svc.Set(ctx, ops, "org-acme", "b200", 1)
		datasettest.WantError(t, err, 404, quotas.CodeGPUModelNotFound, `there is no GPU model "b200" in the catalog`)
		_, _, err = svc.Set(ctx, ops, "org-acme", "h100-80gb", -1)
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "limit must be between 0 and 2147483647, got -1")
		err = svc.Delete(ctx, ops, "org-acme", "h100\x00")
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "gpuModelId contains a NUL character")
		_, _, err = svc.Set(ctx, ops, "org-acme\xff", "h100-80gb", 1)
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "organization id is not valid UTF-8")
		_, err = svc.List(ctx, ops, "org-initech")
		datasettest.WantError(t, err, 404, quotas.CodeOrganizationNotFound, `there is no organization "org-initech"`)
	})
}

// An organization reads its own quotas and no other's (404, as for one that
// does not exist); only an operator sets or lifts any, its own included.
func TestQuotasBetweenOrganizations(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, operators)
		svc := quotas.New(st)
		ops := datasettest.Caller(t, st, "acme-ops")
		if _, _, err := svc.Set(ctx, ops, "org-globex", "h100-80gb", 6); err != nil {
			t.Fatal(err)
		}
		globex := datasettest.Caller(t, st, "globex-operator")
		list, err := svc.List(ctx, globex, "org-globex")
		if err != nil || len(list) != 1 || list[0].Limit != 6 || list[0].Used != 2 {
			t.Fatalf("globex reads its own: %+v %v", list, err)
		}
		acme := datasettest.Caller(t, st, "acme-operator")
		_, err = svc.List(ctx, acme, "org-globex")
		datasettest.WantError(t, err, 404, quotas.CodeOrganizationNotFound, `there is no organization "org-globex"`)
		if list, err := svc.List(ctx, acme, "org-acme"); err != nil || len(list) != 0 {
			t.Fatalf("acme reads its own: %+v %v", list, err)
		}
		for _, c := range []string{"acme-operator", "globex-operator"} {
			caller := datasettest.Caller(t, st, c)
			_, _, err = svc.Set(ctx, caller, "org-globex", "h100-80gb", 100)
			datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
			err = svc.Delete(ctx, caller, "org-globex", "h100-80gb")
			datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the nodes.admin permission")
		}
		_, err = svc.List(ctx, datasettest.Caller(t, st, "acme-metrics"), "org-acme")
		datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the compute.read permission")
		_, err = svc.List(ctx, nil, "org-acme")
		datasettest.WantError(t, err, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>")
		if list, _ := svc.List(ctx, ops, "org-globex"); len(list) != 1 || list[0].Limit != 6 {
			t.Fatalf("changed by refused callers: %+v", list)
		}
	})
}
