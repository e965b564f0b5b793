package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// runapyTokenRequest is the request runapy's ApiClient sends before
// anything else (runai/api_client.py, ApiClient._make_token_request, in
// run-ai's runapy 1.224): POST {base}/api/v1/token with exactly these two
// headers and its json.dumps body (", " and ": " separators), the
// deprecated app_token grant with AppId/AppSecret.
func runapyTokenRequest(t *testing.T, env *servertest.Env, clientID, secret string) (int, []byte) {
	t.Helper()
	body := `{"grantType": "app_token", "AppId": "` + clientID + `", "AppSecret": "` + secret + `"}`
	return env.Do("POST", "/api/v1/token", "", []byte(body),
		http.Header{"Accept": {"*/*"}, "Content-Type": {"application/json"}})
}

// runapyHeaders are the default headers runapy's ApiClient sends on every
// call after the token (param_serialize: its User-Agent, then
// set_default_header("content-type") and ("authorization")).
func runapyHeaders() http.Header {
	return http.Header{"User-Agent": {"runai-api-client-python/1.224.0 python/3.12.3 Linux/x86_64"},
		"Content-Type": {"application/json"}}
}

// runapy's flow, as it sends it: the token, then pods with it.
func TestTokenFlowAsRunapy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		app := servertest.NewApplication(t, env, `{"name": "runapy", "permissions": ["workloads.read"]}`)

		status, body := runapyTokenRequest(t, env, app.ClientID, app.ClientSecret)
		var tok servertest.TokenAnswer
		if status != 200 || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
			t.Fatalf("token: %d %s", status, body)
		}
		if tok.ExpiresIn != 3600 || tok.IDToken != tok.AccessToken {
			t.Fatalf("token answer %+v", tok)
		}
		// What a client reads without the key: exp (runapy's refresh), and
		// the organization and permissions it carries.
		parts := strings.Split(tok.AccessToken, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims struct {
			Exp, Iat    int64
			Sub, Iss    string
			Org         string
			Permissions []string
		}
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatal(err)
		}
		if claims.Exp-claims.Iat != 3600 || claims.Sub != app.ClientID || claims.Iss != "gpugraph" || claims.Org != "org-acme" ||
			strings.Join(claims.Permissions, ",") != "workloads.read" || time.Until(time.Unix(claims.Exp, 0)) > time.Hour {
			t.Fatalf("claims %s", payload)
		}

		h := runapyHeaders()
		h.Set("Authorization", "Bearer "+tok.AccessToken)
		status, body = env.Do("GET", "/api/v1/workloads/pods?limit=10&sortBy=name", "", nil, h)
		var pods struct {
			Pods []struct{ Name string }
		}
		if status != 200 || json.Unmarshal(body, &pods) != nil {
			t.Fatalf("pods: %d %s", status, body)
		}
		var names []string
		for _, p := range pods.Pods {
			names = append(names, p.Name)
		}
		if strings.Join(names, ",") != "llm-serve-0,resnet-train-0,resnet-train-1" {
			t.Fatalf("pods %v", names)
		}
		// GraphQL takes the token as it takes a key; the permissions are the token's.
		var count struct{ PodsCount int }
		env.Decode(env.GraphQL(tok.AccessToken, `{ podsCount }`, nil), &count)
		if count.PodsCount != 3 {
			t.Fatalf("podsCount %d", count.PodsCount)
		}
		if r := env.GraphQL(tok.AccessToken, `{ vms { total } }`, nil); r.Code() != "FORBIDDEN" {
			t.Fatalf("vms with a workloads.read token: %+v", r.Errors)
		}
	})
}

// Run:ai's documented shape (client_credentials, clientId) and its
// schema's spelling (clientID) answer the same; refusals are in Run:ai's
// error shape.
func TestTokenRequestShapes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		app := servertest.NewApplication(t, env, `{"permissions": ["workloads.read"]}`)
		for _, body := range []string{
			`{"grantType":"client_credentials","clientId":"` + app.ClientID + `","clientSecret":"` + app.ClientSecret + `"}`,
			`{"grantType":"client_credentials","clientID":"` + app.ClientID + `","clientSecret":"` + app.ClientSecret + `"}`,
			`{"grantType":"app_token","appID":"` + app.ClientID + `","appSecret":"` + app.ClientSecret + `"}`,
		} {
			var tok servertest.TokenAnswer
			servertest.Call(t, env, "POST", "/api/v1/token", "", body, 200, &tok)
			servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", tok.AccessToken, "", 200, nil)
		}
		for _, c := range []struct {
			body   string
			status int
			want   string
		}{
			{`{"grantType":"client_credentials","clientId":"` + app.ClientID + `","clientSecret":"gpgapp_wrong"}`, 401, "invalid client credentials"},
			{`{"grantType":"client_credentials","clientId":"app-nope","clientSecret":"` + app.ClientSecret + `"}`, 401, "invalid client credentials"},
			// A client id or secret that is no text (PostgreSQL's text holds no
			// NUL, no invalid UTF-8) names no client: the same 401, on both engines.
			{`{"grantType":"client_credentials","clientId":"a\u0000b","clientSecret":"` + app.ClientSecret + `"}`, 401, "invalid client credentials"},
			{`{"grantType":"app_token","AppId":"` + app.ClientID + `\u0000","AppSecret":"` + app.ClientSecret + `"}`, 401, "invalid client credentials"},
			{`{"grantType":"client_credentials","clientId":"` + app.ClientID + `","clientSecret":"\u0000"}`, 401, "invalid client credentials"},
			{"{\"grantType\":\"client_credentials\",\"clientID\":\"\xff\",\"clientSecret\":\"s\"}", 401, "invalid client credentials"},
			{`{"grantType":"client_credentials\u0000","clientId":"a","clientSecret":"s"}`, 400, "grantType contains a NUL character"},
			{`{"grantType":"password","username":"u","password":"p"}`, 400,
				`grantType "password" is not supported: use client_credentials (with clientId and clientSecret) or app_token`},
			{`{"clientId":"x","clientSecret":"y"}`, 400, "grantType is required: client_credentials (with clientId and clientSecret) or app_token"},
			{`{"grantType":"client_credentials"}`, 400, "clientId and clientSecret are required (AppId and AppSecret are read too)"},
			{`not json`, 400, "the request body is not valid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 1)"},
			// Names match in any case here (Run:ai's clients spell them in
			// several), so two spellings of one are a name given twice.
			{`{"grantType":"client_credentials","clientId":"a","clientID":"b","clientSecret":"c"}`, 400,
				"clientID is given twice: a name appears at most once in an object"},
			{`{"grantType":"client_credentials","clientId":"a","clientSecret":"c"} {}`, 400,
				"the request body holds data after its JSON value, which ends at byte 68"},
		} {
			body := servertest.Call(t, env, "POST", "/api/v1/token", "", c.body, c.status, nil)
			var e struct {
				Code    int
				Message string
			}
			if json.Unmarshal(body, &e) != nil || e.Code != c.status || e.Message != c.want {
				t.Errorf("%s: %s", c.body, body)
			}
		}
	})
}

// A revoked application's secret and its tokens stop at once; a token past
// its exp (capped at the application's expiry) says so; a token signed
// with another key is refused.
func TestAccessTokenRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		app := servertest.NewApplication(t, env, `{"permissions": ["workloads.read"]}`)
		var tok servertest.TokenAnswer
		servertest.Call(t, env, "POST", "/api/v1/token", "",
			`{"grantType":"client_credentials","clientId":"`+app.ClientID+`","clientSecret":"`+app.ClientSecret+`"}`, 200, &tok)
		var revoked servertest.Credential
		servertest.Call(t, env, "POST", "/v1/admin/applications/"+app.ID+"/revoke", "acme-admin", "", 200, &revoked)
		want := "application " + app.ID + " revoked at " + *revoked.RevokedAt
		if got := servertest.ErrorMessage(t, servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", tok.AccessToken, "", 401, nil)); got != want {
			t.Fatalf("revoked app's token: %q, want %q", got, want)
		}
		if got := servertest.ErrorMessage(t, servertest.Call(t, env, "POST", "/api/v1/token", "",
			`{"grantType":"client_credentials","clientId":"`+app.ClientID+`","clientSecret":"`+app.ClientSecret+`"}`, 401, nil)); got != want {
			t.Fatalf("revoked app's token request: %q, want %q", got, want)
		}

		short := servertest.NewApplication(t, env, `{"permissions": ["workloads.read"], "expires": "2s"}`)
		servertest.Call(t, env, "POST", "/api/v1/token", "",
			`{"grantType":"client_credentials","clientId":"`+short.ClientID+`","clientSecret":"`+short.ClientSecret+`"}`, 200, &tok)
		if tok.ExpiresIn > 2 {
			t.Fatalf("expiresIn %d past the application's expiry", tok.ExpiresIn)
		}
		exp, _ := time.Parse(time.RFC3339, *short.ExpiresAt)
		time.Sleep(time.Until(exp) + 50*time.Millisecond)
		if got := servertest.ErrorMessage(t, servertest.Call(t, env, "GET", "/api/v1/workloads/pods/count", tok.AccessToken, "", 401, nil)); got !=
			"access token expired at "+*short.ExpiresAt+"; request a new one at POST /api/v1/token" {
			t.Fatalf("expired token: %q", got)
		}

		forged, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "gpugraph", "sub": app.ID, "org": "org-acme",
			"permissions": []string{"admin"}, "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(strings.Repeat("k", 32)))
		if got := servertest.ErrorMessage(t, servertest.Call(t, env, "GET", "/v1/admin/keys", forged, "", 401, nil)); got != "UNAUTHENTICATED: invalid access token" {
			t.Fatalf("forged token: %q", got)
		}
	})
}
