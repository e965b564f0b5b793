package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"gpugraph/internal/agent/agentapi"
)

// Client posts reports to the gpugraph server.
type Client struct {
	server string
	token  string
	http   *http.Client
}

// NewClient talks to server (e.g. "https://gpugraph.example:8080") with a
// bearer token: the node credential, a bootstrap token for the exchange,
// or (legacy) an API key holding nodes.report.
func NewClient(server, token string, hc *http.Client) *Client {
	return &Client{server: strings.TrimRight(server, "/"), token: token, http: hc}
}

// AuthError means the server refused the token. Retrying cannot help, so
// the agent stops on it.
type AuthError struct {
	// Method is the request's ("" reads POST, the reports').
	Method string
	Path   string
	Status int
	Body   string
	// Code is the error body's code ("" when it has none).
	Code string
}

func (e *AuthError) Error() string {
	if e.Code == agentapi.CodeNodeCredentialRequired {
		return fmt.Sprintf("the server requires a node credential and refuses API keys (--token): %d %s on %s %s. "+
			"Ask an operator to enroll this node (POST /v1/admin/nodes/enroll, GraphQL enrollNode or gpugraph nodes enroll) "+
			"and start the agent with the one-time token it gives: --bootstrap-token TOKEN --credential-file FILE "+
			"(--token works only against a server started with --node-credentials-required=false, for a node never enrolled)",
			e.Status, http.StatusText(e.Status), methodOr(e.Method), e.Path)
	}
	return fmt.Sprintf("server refused the token with %d %s on %s %s (%s); check --credential-file or --bootstrap-token "+
		"(--token, an API key with the nodes.report permission, only where the server runs with --node-credentials-required=false)",
		e.Status, http.StatusText(e.Status), methodOr(e.Method), e.Path, e.Body)
}

func methodOr(m string) string {
	if m == "" {
		return http.MethodPost
	}
	return m
}

// StatusError is any other non-2xx answer; the agent retries it.
type StatusError struct {
	Method string // as AuthError's
	Path   string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", methodOr(e.Method), e.Path, e.Status, http.StatusText(e.Status), e.Body)
}

// PostJSON sends in as JSON to path and, on a 2xx answer, decodes the body
// into out unless out is nil.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	respBody, err := c.send(ctx, http.MethodPost, path, "application/json", body)
	if err != nil {
		return err
	}
	// An empty answer (an older or minimal server) decodes as nothing.
	if out == nil || len(bytes.TrimSpace(respBody)) == 0 {
		return nil
	}
	if err := json.Unmarshal(respBody, out); err != nil {
		return fmt.Errorf("POST %s: decoding answer: %w", path, err)
	}
	return nil
}

// Put sends body to path with a PUT (a VM's console); any 2xx answer is
// success and its body is ignored.
func (c *Client) Put(ctx context.Context, path, contentType string, body []byte) error {
	_, err := c.send(ctx, http.MethodPut, path, contentType, body)
	return err
}

// send makes one request and answers a 2xx answer's body; a 401 or 403
// is an *AuthError, any other non-2xx a *StatusError.
func (c *Client) send(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", "gpugraph-agent/"+Version)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// Bounded so a misbehaving server cannot make the agent buffer much.
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading answer: %w", method, path, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &AuthError{Method: method, Path: path, Status: resp.StatusCode, Body: snippet(respBody), Code: errorCode(respBody)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, &StatusError{Method: method, Path: path, Status: resp.StatusCode, Body: snippet(respBody)}
	}
	return respBody, nil
}

// errorCode is the code of an OpenRelay-shaped error body,
// {"error": {"code": …}}; "" for any other body.
func errorCode(b []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Code
}

// snippet keeps error bodies to one short log-friendly line.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
