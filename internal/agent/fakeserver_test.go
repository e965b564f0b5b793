package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"gpugraph/internal/agent/agentapi"
)

// fakeServer records every request and answers through respond, which
// gets the path and how many requests that path has seen (from 1).
type fakeServer struct {
	*httptest.Server
	respond func(path string, n int) int

	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	Path   string
	Auth   string
	CT     string
	Body   []byte
	Status int
}

func newFakeServer(t *testing.T, respond func(path string, n int) int) *fakeServer {
	f := &fakeServer{respond: respond}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

// newFakeServerOn listens on addr, to bring back a server that was down.
func newFakeServerOn(t *testing.T, addr string, respond func(path string, n int) int) *fakeServer {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("re-listening on %s: %v", addr, err)
	}
	f := &fakeServer{respond: respond}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.handle))
	f.Listener.Close()
	f.Listener = l
	f.Start()
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := 1
	for _, q := range f.reqs {
		if q.Path == r.URL.Path {
			n++
		}
	}
	status := http.StatusOK
	if f.respond != nil {
		status = f.respond(r.URL.Path, n)
	}
	if r.Method != http.MethodPost {
		status = http.StatusMethodNotAllowed
	}
	f.reqs = append(f.reqs, recorded{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), CT: r.Header.Get("Content-Type"), Body: body, Status: status})
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch {
	case status != http.StatusOK:
		io.WriteString(w, `{"error":"nope"}`)
	case r.URL.Path == agentapi.InventoryPath:
		io.WriteString(w, `{"nodeId":"node-123"}`)
	default:
		io.WriteString(w, `{"status":"ok"}`)
	}
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// accepted returns the bodies of the 200-answered requests to path.
func (f *fakeServer) accepted(path string) []recorded {
	var out []recorded
	for _, r := range f.requests() {
		if r.Path == path && r.Status == http.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

func decode[T any](t *testing.T, r recorded) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s body %s: %v", r.Path, r.Body, err)
	}
	return v
}
