package servertest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/httpapi/rest/openapitest"
)

// The requests and answer checks the suites beside each service share:
// each sends through a running server (an Env, or any URL) and fails the
// test when the exchange is not what it should be.

// Post sends body as a POST as token (body encoded as JSON unless it is
// already []byte) and answers the status and the body, trimmed.
func Post(t testing.TB, env *Env, path, token string, body any) (int, string) {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	status, out := env.Do(http.MethodPost, path, token, b, nil)
	return status, strings.TrimSpace(string(out))
}

var (
	postClient = &http.Client{Timeout: 10 * time.Second}
	postMu     sync.Mutex
)

// PostAs sends a POST to url (a whole URL: a server that is not an Env's,
// such as one an agent reports to) with a bearer token and a JSON body (""
// for none), one at a time, and answers the status and the body.
func PostAs(t testing.TB, url, token, body string) (int, string) {
	t.Helper()
	postMu.Lock()
	defer postMu.Unlock()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := postClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// Call sends a JSON request (body "" for none), fails unless it answers
// want, and decodes the answer into out (nil for none); it answers the body.
func Call(t testing.TB, env *Env, method, path, token, body string, want int, out any) []byte {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	status, got := env.Do(method, path, token, b, nil)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, got)
		}
	}
	return got
}

// Data answers r's data as compact JSON, failing on any error.
func Data(t testing.TB, r *Response) string {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	var v any
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// PodsGET sends a GET of the pods API as token and checks the answer
// against the official schema: a 200 against its operation's response
// (PodsOperation), an error against Error with code equal to the status.
func PodsGET(t testing.TB, env *Env, token, pathAndQuery string) (int, []byte) {
	t.Helper()
	status, body := env.Do(http.MethodGet, pathAndQuery, token, nil, nil)
	if status == http.StatusOK {
		openapitest.Validate(t, "GET "+PodsOperation(pathAndQuery)+" 200", body)
		return status, body
	}
	openapitest.Validate(t, "#/components/schemas/Error", body)
	var e struct{ Code int }
	if err := json.Unmarshal(body, &e); err != nil || e.Code != status {
		t.Errorf("GET %s: error body code %d, status %d: %s", pathAndQuery, e.Code, status, body)
	}
	return status, body
}

// PodsOperation is the OpenAPI path of a request path of the pods API.
func PodsOperation(pathAndQuery string) string {
	p, _, _ := strings.Cut(pathAndQuery, "?")
	switch {
	case p == "/api/v1/workloads/pods", p == "/api/v1/workloads/pods/count":
		return p
	case strings.HasPrefix(p, "/api/v1/workloads/inferences/revisions/"):
		return "/api/v1/workloads/inferences/revisions/{revisionId}/pods"
	}
	return "/api/v1/workloads/{workloadId}/pods"
}

// Expect checks an answer's status and that its body holds wantIn,
// naming what when it does not (the test goes on).
func Expect(t testing.TB, what string, status int, body string, wantStatus int, wantIn string) {
	t.Helper()
	if status != wantStatus || !strings.Contains(body, wantIn) {
		t.Errorf("%s: got %d %s, want %d with %q", what, status, body, wantStatus, wantIn)
	}
}

// ErrorMessage is an error answer's message: Run:ai's message, or
// OpenRelay's "CODE: message".
func ErrorMessage(t testing.TB, body []byte) string {
	t.Helper()
	var e struct {
		Message string `json:"message"`
		Error   struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if e.Message != "" {
		return e.Message
	}
	return e.Error.Code + ": " + e.Error.Message
}

// ErrorCode is an OpenRelay error answer's code.
func ErrorCode(t testing.TB, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an OpenRelay error: %s", body)
	}
	return e.Error.Code
}

// RunaiError reads a Run:ai error answer's message, and fails unless it
// is one with status want.
func RunaiError(t testing.TB, what string, status int, body string, want int) string {
	t.Helper()
	var e struct {
		Code    int
		Message string
	}
	if status != want || json.Unmarshal([]byte(body), &e) != nil || e.Code != want {
		t.Errorf("%s: got %d %s, want a %d in Run:ai's shape", what, status, body, want)
	}
	return e.Message
}

// OpenRelayError reads an OpenRelay error answer's message, and fails
// unless it is one with status want.
func OpenRelayError(t testing.TB, what string, status int, body string, want int) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if status != want || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code == "" {
		t.Errorf("%s: got %d %s, want a %d in OpenRelay's shape", what, status, body, want)
	}
	return e.Error.Message
}

// PostJSON posts v as JSON to path of the server at url as token, and
// answers the status and the body.
func PostJSON(t testing.TB, url, path, token string, v any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes()
}

// GQLDo runs one GraphQL operation on the server at url as token, fails
// on any error, and answers its data.
func GQLDo(t testing.TB, url, token, query string, vars map[string]any) json.RawMessage {
	t.Helper()
	status, body := PostJSON(t, url, "/graphql", token, map[string]any{"query": query, "variables": vars})
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(body, &r); err != nil || status != 200 || len(r.Errors) > 0 {
		t.Fatalf("%s: %d %s", query, status, body)
	}
	return r.Data
}
