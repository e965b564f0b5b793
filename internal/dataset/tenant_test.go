package dataset_test

import (
	"context"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The fixture loader refuses, naming the rows, a file that would give a
// tenant two organizations: within the file, or beside one stored.
func TestFixtureTenantIsUnique(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		// The organizations of the server tests' base fixture.
		if _, err := dataset.LoadFile(context.Background(), st, []byte(`{"organizations": [{"id": "org-acme", "name": "Acme", "tenantId": 1001}, {"id": "org-globex", "name": "Globex", "tenantId": 1002}]}`)); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ file, want string }{
			{`{"organizations": [{"id": "org-a", "name": "A", "tenantId": 7}, {"id": "org-b", "name": "B", "tenantId": 7}]}`,
				`fixture refused: organizations[1] (id "org-b"): tenantId 7 is organizations[0] (id "org-a")'s too: a Run:ai tenant belongs to one organization`},
			{`{"organizations": [{"id": "org-new", "name": "New", "tenantId": 1002}]}`,
				`fixture refused: organizations[0] (id "org-new"): tenantId 1002 is held by organization org-globex (Globex) in the database: a Run:ai tenant belongs to one organization`},
			// Tenants do not move between organizations within one file.
			{`{"organizations": [{"id": "org-acme", "name": "Acme", "tenantId": 1002}, {"id": "org-globex", "name": "Globex", "tenantId": 1001}]}`,
				`fixture refused: organizations[0] (id "org-acme"): tenantId 1002 is held by organization org-globex (Globex) in the database: a Run:ai tenant belongs to one organization`},
		} {
			_, err := dataset.LoadFile(context.Background(), st, []byte(tc.file))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		}
		// Re-loading an organization with its own tenant, or moving it to a
		// free one, is fine.
		if _, err := dataset.LoadFile(context.Background(), st, []byte(`{"organizations": [{"id": "org-acme", "name": "Acme", "tenantId": 1001}, {"id": "org-globex", "name": "Globex", "tenantId": 1099}]}`)); err != nil {
			t.Fatal(err)
		}
	})
}
