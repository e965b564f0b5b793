package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client speaks to one server over loopback as one API key.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
}

// NewHTTPClient keeps enough idle connections for clients concurrent callers.
func NewHTTPClient(clients int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = clients * 2
	t.MaxIdleConnsPerHost = clients * 2
	return &http.Client{Transport: t}
}

// As is the same client with another key.
func (c *Client) As(token string) *Client {
	cp := *c
	cp.Token = token
	return &cp
}

// gqlAnswer is a GraphQL response.
type gqlAnswer struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// GraphQL posts query and decodes its data into into (nil: discard). Any
// GraphQL error is an error.
func (c *Client) GraphQL(ctx context.Context, query string, vars map[string]any, into any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, b, err := c.Do(ctx, http.MethodPost, "/graphql", body)
	if err != nil {
		return err
	}
	var a gqlAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("graphql answer %d is not JSON: %.200s", status, b)
	}
	if len(a.Errors) > 0 {
		return fmt.Errorf("graphql: %s (%v)", a.Errors[0].Message, a.Errors[0].Extensions["code"])
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(a.Data, into)
}

// Get reads path and decodes a 200 answer into into (nil: discard).
func (c *Client) Get(ctx context.Context, path string, into any) error {
	status, b, err := c.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: %d %.200s", path, status, b)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(b, into)
}

// Do sends one request and reads the whole answer.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
