package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23, finding 11: an organization created with another
// organization's Run:ai tenant would read that tenant's pods. Every face
// that creates organizations answers 409 TENANT_ID_TAKEN naming the
// holder, and nothing is stored.
func TestOrganizationTenantIsUnique(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		const want = "TENANT_ID_TAKEN: Run:ai tenant 1001 is held by organization org-acme (Acme): a tenant's pods are read by one organization's keys; give org-evil a tenant of its own"
		body := servertest.Call(t, env, "POST", "/v1/admin/organizations", "platform-admin",
			`{"id": "org-evil", "name": "Evil", "tenantId": 1001}`, 409, nil)
		if got := servertest.ErrorMessage(t, body); got != want {
			t.Errorf("REST: %s", got)
		}
		r := env.GraphQL("platform-admin", `mutation { createOrganization(id: "org-evil", name: "Evil", tenantId: 1001) { id } }`, nil)
		if r.Code() != "TENANT_ID_TAKEN" || r.Errors[0].Extensions["status"] != float64(409) ||
			"TENANT_ID_TAKEN: "+r.Errors[0].Message != want {
			t.Errorf("GraphQL: %+v", r.Errors)
		}
		if ok, err := st.OrganizationExists(context.Background(), "org-evil"); ok || err != nil {
			t.Errorf("a refused organization was stored (%v)", err)
		}
		// Its keys would have read org-acme's pods: there are none to make.
		servertest.Call(t, env, "POST", "/v1/admin/keys", "platform-admin", `{"organizationId": "org-evil", "permissions": ["workloads.read"]}`, 404, nil)
	})
}

// Two operators creating organizations with one tenant at once: one is
// created, the other told which holds it (the unique index decides, on
// both engines).
func TestOrganizationTenantRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		const n = 6
		var wg sync.WaitGroup
		statuses := make([]int, n)
		bodies := make([]string, n)
		for i := range n {
			wg.Go(func() {
				s, b := env.Do("POST", "/v1/admin/organizations", "platform-admin",
					[]byte(fmt.Sprintf(`{"id": "org-race-%d", "name": "Race %d", "tenantId": 4242}`, i, i)), nil)
				statuses[i], bodies[i] = s, string(b)
			})
		}
		wg.Wait()
		created := -1
		for i, s := range statuses {
			if s == 201 {
				if created >= 0 {
					t.Fatalf("org-race-%d and org-race-%d both hold tenant 4242", created, i)
				}
				created = i
			}
		}
		if created < 0 {
			t.Fatalf("none was created: %v %v", statuses, bodies)
		}
		for i, s := range statuses {
			if i != created && (s != 409 || !strings.Contains(bodies[i], fmt.Sprintf("held by organization org-race-%d (Race %d)", created, created))) {
				t.Errorf("org-race-%d: %d %s", i, s, bodies[i])
			}
		}
	})
}
