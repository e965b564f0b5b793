package auth_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/fleet"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Lookup answers the caller an API key names: its organization, tenant,
// InfiniBand flag and permissions (compute.operate implying compute.read),
// admitted with an API key.
func TestLookupAnswersTheKeysCaller(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		c := datasettest.Caller(t, st, "acme-operator")
		if c.OrganizationID != "org-acme" || c.TenantID != 1001 || !c.InfinibandEnabled ||
			c.OrganizationState != models.OrgStateActive || c.Credential != auth.APIKey || c.KeyID == "" || c.System {
			t.Errorf("acme-operator: %+v", c)
		}
		if got, want := c.Permissions(), []string{auth.ComputeRead, auth.ComputeOperate, auth.WorkloadsRead}; !slices.Equal(got, want) {
			t.Errorf("acme-operator holds %v, want %v", got, want)
		}
		g := datasettest.Caller(t, st, "globex-operator")
		if g.OrganizationID != "org-globex" || g.TenantID != 1002 || g.InfinibandEnabled {
			t.Errorf("globex-operator: %+v", g)
		}
		if got, want := datasettest.Caller(t, st, "acme-reader").Permissions(), []string{auth.ComputeRead}; !slices.Equal(got, want) {
			t.Errorf("acme-reader holds %v, want %v", got, want)
		}
		if err := datasettest.Caller(t, st, "acme-reader").Require(auth.ComputeOperate); err == nil {
			t.Error("compute.read granted compute.operate")
		} else {
			datasettest.WantError(t, err, 403, "FORBIDDEN", "this API key lacks the compute.operate permission")
		}
	})
}

// Lookup refuses a missing, unknown or agent's secret with a 401 saying
// which, and a suspended or deleted organization's keys with its 403.
func TestLookupRefuses(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := &auth.Authenticator{Store: st}
		defer a.WaitUsage()
		for _, c := range []struct{ token, msg string }{
			{"", "missing API key: send Authorization: Bearer <API key>"},
			{"acme-nobody", "unknown API key"},
			{agentapi.CredentialPrefix + "abc", "a node credential reports to /v1/agent/inventory and /v1/agent/heartbeat only: send an API key or an access token here"},
			{agentapi.BootstrapTokenPrefix + "abc", "a bootstrap token is exchanged for a node credential at POST " + agentapi.RegisterPath + " only: send an API key or an access token here"},
		} {
			c2, err := a.Lookup(ctx, c.token)
			if c2 != nil {
				t.Errorf("%q admitted %+v", c.token, c2)
			}
			datasettest.WantError(t, err, 401, "UNAUTHENTICATED", c.msg)
		}
		ops := fleet.New(st)
		if _, err := ops.SetOrganizationState(ctx, auth.SystemCaller(), "org-globex", models.OrgStateSuspended); err != nil {
			t.Fatal(err)
		}
		_, err := a.Lookup(ctx, "globex-operator")
		datasettest.WantError(t, err, 403, auth.CodeOrganizationSuspended,
			"organization org-globex is suspended; its API keys are refused until an operator reinstates it")
		// The other organization's keys are untouched.
		if _, err := a.Lookup(ctx, "acme-operator"); err != nil {
			t.Errorf("acme-operator after suspending org-globex: %v", err)
		}
		if _, err := ops.SetOrganizationState(ctx, auth.SystemCaller(), "org-globex", models.OrgStateDeleted); err != nil {
			t.Fatal(err)
		}
		_, err = a.Lookup(ctx, "globex-operator")
		datasettest.WantError(t, err, 403, auth.CodeOrganizationDeleted, "organization org-globex is deleted; its API keys no longer work")
	})
}
