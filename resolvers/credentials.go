package resolvers

import (
	"context"
	"strings"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/services/credentials"
	"gpugraph/models"
)

// Credential administration translates; package credentials checks admin
// and decides. GraphQL issues no access tokens (POST /api/v1/token does).
func (r *Resolver) credentials() *credentials.Service { return r.Services.Credentials }

func (r *queryResolver) APIKeys(ctx context.Context, organizationID *string) ([]*model.Credential, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := r.credentials().ListKeys(ctx, c, deref(organizationID))
	return credentialList(cs), err
}

func (r *queryResolver) Applications(ctx context.Context, organizationID *string) ([]*model.Credential, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := r.credentials().ListApplications(ctx, c, deref(organizationID))
	return credentialList(cs), err
}

func (r *mutationResolver) CreateAPIKey(ctx context.Context, input model.CredentialInput) (*model.CreatedKey, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	k, err := r.credentials().CreateKey(ctx, c, spec(input))
	if err != nil {
		return nil, err
	}
	return &model.CreatedKey{Credential: credential(k.Credential), Secret: k.Secret}, nil
}

func (r *mutationResolver) CreateApplication(ctx context.Context, input model.CredentialInput) (*model.CreatedApplication, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	a, err := r.credentials().CreateApplication(ctx, c, spec(input))
	if err != nil {
		return nil, err
	}
	return &model.CreatedApplication{Credential: credential(a.Credential), ClientID: a.ID, ClientSecret: a.Secret}, nil
}

func (r *mutationResolver) RevokeAPIKey(ctx context.Context, id string) (*model.Credential, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	k, err := r.credentials().RevokeKey(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return credential(*k), nil
}

func (r *mutationResolver) RevokeApplication(ctx context.Context, id string) (*model.Credential, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	a, err := r.credentials().RevokeApplication(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return credential(*a), nil
}

func (r *mutationResolver) CreateOrganization(ctx context.Context, id, name string, tenantID int, infinibandEnabled *bool) (*models.Organization, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	o, err := r.credentials().CreateOrganization(ctx, c, credentials.Organization{ID: id, Name: name, TenantID: tenantID,
		InfinibandEnabled: infinibandEnabled != nil && *infinibandEnabled})
	if err != nil {
		return nil, err
	}
	return &models.Organization{ID: o.ID, Name: o.Name, TenantID: o.TenantID, InfinibandEnabled: o.InfinibandEnabled,
		State: models.OrgStateActive}, nil
}

func spec(in model.CredentialInput) credentials.Spec {
	return credentials.Spec{OrganizationID: deref(in.OrganizationID), Name: deref(in.Name), Permissions: in.Permissions,
		Expires: deref(in.Expires)}
}

func credential(c credentials.Credential) *model.Credential {
	perms := strings.Fields(c.Permissions)
	if perms == nil {
		perms = []string{}
	}
	return &model.Credential{ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, Permissions: perms,
		CreatedAt: c.CreatedAt, LastUsedAt: c.LastUsedAt, ExpiresAt: c.ExpiresAt, RevokedAt: c.RevokedAt}
}

func credentialList(cs []credentials.Credential) []*model.Credential {
	out := make([]*model.Credential, len(cs))
	for i, c := range cs {
		out[i] = credential(c)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (r *queryResolver) Viewer(ctx context.Context) (*models.Viewer, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return r.credentials().Viewer(ctx, c)
}
