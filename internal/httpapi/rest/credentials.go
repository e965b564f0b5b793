package rest

import (
	"errors"
	"net/http"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/credentials"
	"gpugraph/models"
)

// Run:ai's token path and the credential administrator's paths (admin),
// the latter in OpenRelay's error shape as the other /v1/admin paths.
func (api *API) credentialRoutes() []endpoint {
	admin := api.Services.Credentials.MayAdminister
	return []endpoint{
		{"POST /api/v1/token", Costs(route.Policy{API: route.Runai}, http.HandlerFunc(api.token))},
		{"GET /v1/admin/keys", openRelay(admin, api.listKeys)},
		{"POST /v1/admin/keys", openRelay(admin, api.createKey)},
		{"POST /v1/admin/keys/{id}/revoke", openRelay(admin, api.revokeKey)},
		{"GET /v1/admin/applications", openRelay(admin, api.listApplications)},
		{"POST /v1/admin/applications", openRelay(admin, api.createApplication)},
		{"POST /v1/admin/applications/{id}/revoke", openRelay(admin, api.revokeApplication)},
		{"POST /v1/admin/organizations", openRelay(admin, api.createOrganization)},
	}
}

// token is Run:ai's POST /api/v1/token: it needs no API key (the body
// carries the application's credentials) and answers Run:ai's shapes.
// Field names match in any case, since Run:ai's clients spell them in
// several (clientId, clientID, AppId, appID); two spellings of one name
// in one body are a name given twice, refused.
func (api *API) token(w http.ResponseWriter, r *http.Request) {
	var body struct {
		GrantType    string `json:"grantType"`
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
		AppID        string `json:"appId"`
		AppSecret    string `json:"appSecret"`
	}
	if err := decodeBody(w, r, &body, maxAdminBody, bounds.AnyCaseNames); err != nil {
		if credentialNotText(err) {
			err = credentials.InvalidClient() // names no client, as an unknown one
		}
		route.WriteRunaiError(w, r, err)
		return
	}
	req := credentials.TokenRequest{GrantType: body.GrantType, ClientID: body.ClientID, ClientSecret: body.ClientSecret}
	if req.ClientID == "" && req.ClientSecret == "" {
		req.ClientID, req.ClientSecret = body.AppID, body.AppSecret
	}
	t, err := api.Services.Credentials.Token(r.Context(), req)
	if err != nil {
		route.WriteRunaiError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // RFC 6749 §5.1
	// idToken is the same token: an application has no identity beyond it.
	writeJSON(w, http.StatusOK, map[string]any{"accessToken": t.Token, "idToken": t.Token, "expiresIn": t.ExpiresIn})
}

// credentialNotText reports whether a token request's body was refused
// for a client id or secret (any spelling) that is no text.
func credentialNotText(err error) bool {
	var bad *bounds.BadText
	if !errors.As(err, &bad) {
		return false
	}
	for _, name := range []string{"clientId", "clientSecret", "appId", "appSecret"} {
		if strings.EqualFold(bad.At, name) {
			return true
		}
	}
	return false
}

// credentialJSON is a key or an application as listed; never its secret.
type credentialJSON struct {
	ID             string   `json:"id"`
	OrganizationID string   `json:"organizationId"`
	Name           string   `json:"name"`
	Permissions    []string `json:"permissions"`
	CreatedAt      string   `json:"createdAt"`
	LastUsedAt     *string  `json:"lastUsedAt"`
	ExpiresAt      *string  `json:"expiresAt"`
	RevokedAt      *string  `json:"revokedAt"`
}

func toCredentialJSON(c credentials.Credential) credentialJSON {
	perms := strings.Fields(c.Permissions)
	if perms == nil {
		perms = []string{}
	}
	return credentialJSON{ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, Permissions: perms,
		CreatedAt: models.FormatTime(c.CreatedAt), LastUsedAt: timeOrNil(c.LastUsedAt),
		ExpiresAt: timeOrNil(c.ExpiresAt), RevokedAt: timeOrNil(c.RevokedAt)}
}

// specBody is a new key's or application's request.
type specBody struct {
	OrganizationID string   `json:"organizationId"`
	Name           string   `json:"name"`
	Permissions    []string `json:"permissions"`
	Expires        string   `json:"expires"`
}

func (b specBody) spec() credentials.Spec {
	return credentials.Spec{OrganizationID: b.OrganizationID, Name: b.Name, Permissions: b.Permissions, Expires: b.Expires}
}

func (api *API) createKey(w http.ResponseWriter, r *http.Request) error {
	var body specBody
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	c, err := api.Services.Credentials.CreateKey(r.Context(), auth.FromContext(r.Context()), body.spec())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		credentialJSON
		Key string `json:"key"`
	}{toCredentialJSON(c.Credential), c.Secret})
	return nil
}

func (api *API) createApplication(w http.ResponseWriter, r *http.Request) error {
	var body specBody
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	c, err := api.Services.Credentials.CreateApplication(r.Context(), auth.FromContext(r.Context()), body.spec())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		credentialJSON
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
	}{toCredentialJSON(c.Credential), c.ID, c.Secret})
	return nil
}

func (api *API) listKeys(w http.ResponseWriter, r *http.Request) error {
	cs, err := api.Services.Credentials.ListKeys(r.Context(), auth.FromContext(r.Context()), r.URL.Query().Get("organizationId"))
	return writeCredentials(w, "keys", cs, err)
}

func (api *API) listApplications(w http.ResponseWriter, r *http.Request) error {
	cs, err := api.Services.Credentials.ListApplications(r.Context(), auth.FromContext(r.Context()), r.URL.Query().Get("organizationId"))
	return writeCredentials(w, "applications", cs, err)
}

func writeCredentials(w http.ResponseWriter, key string, cs []credentials.Credential, err error) error {
	if err != nil {
		return err
	}
	out := make([]credentialJSON, len(cs))
	for i, c := range cs {
		out[i] = toCredentialJSON(c)
	}
	writeJSON(w, http.StatusOK, map[string]any{key: out})
	return nil
}

func (api *API) revokeKey(w http.ResponseWriter, r *http.Request) error {
	c, err := api.Services.Credentials.RevokeKey(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toCredentialJSON(*c))
	return nil
}

func (api *API) revokeApplication(w http.ResponseWriter, r *http.Request) error {
	c, err := api.Services.Credentials.RevokeApplication(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toCredentialJSON(*c))
	return nil
}

// createOrganization reads {"id", "name", "tenantId", "infinibandEnabled"}.
func (api *API) createOrganization(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID                string `json:"id"`
		Name              string `json:"name"`
		TenantID          int    `json:"tenantId"`
		InfinibandEnabled bool   `json:"infinibandEnabled"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	o, err := api.Services.Credentials.CreateOrganization(r.Context(), auth.FromContext(r.Context()),
		credentials.Organization{ID: body.ID, Name: body.Name, TenantID: body.TenantID, InfinibandEnabled: body.InfinibandEnabled})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": o.ID, "name": o.Name, "tenantId": o.TenantID,
		"infinibandEnabled": o.InfinibandEnabled, "state": models.OrgStateActive})
	return nil
}
