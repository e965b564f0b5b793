package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/lockedbuf"
)

// consoleRuntime is a Runtime that keeps consoles, set by the test.
type consoleRuntime struct{ consoles map[string][]byte }

func (consoleRuntime) Assign([]agentapi.Assignment)            {}
func (consoleRuntime) Report() []agentapi.WorkloadReport       { return nil }
func (c consoleRuntime) ConsoleTail(id string) ([]byte, error) { return c.consoles[id], nil }

// consoleServer answers console PUTs with status[id] (204 when unset) and
// records them as "id:bytes".
type consoleServer struct {
	mu     sync.Mutex
	status map[string]int
	puts   []string
	bodies map[string][]byte
}

func (s *consoleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/agent/vms/"), "/console")
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "application/octet-stream" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.puts = append(s.puts, id+":"+strconv.Itoa(len(b)))
	s.bodies[id] = b
	st := s.status[id]
	if st == 0 {
		st = http.StatusNoContent
	}
	w.WriteHeader(st)
}

func (s *consoleServer) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Join(s.puts, " ")
	s.puts = nil
	return out
}

// The reporter pushes a VM's console when it changed since the last push
// (its last agentapi.ConsoleBytes), never a pod's; a push the server
// refused with 404 is not sent again until the console changes, one that
// failed otherwise is; a 403 stops the pushes for good.
func TestConsolePushes(t *testing.T) {
	srv := &consoleServer{status: map[string]int{"vm-other": http.StatusNotFound}, bodies: map[string][]byte{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	rt := consoleRuntime{consoles: map[string][]byte{"vm-a": []byte("boot\r\n"), "vm-other": []byte("x"), "pod-c": []byte("log")}}
	r := &reporter{cfg: Config{Runtime: rt}, log: testLogger(t), client: NewClient(hs.URL, "tok", hs.Client())}
	as := []agentapi.Assignment{{ID: "vm-a", Kind: agentapi.KindVM}, {ID: "vm-other", Kind: agentapi.KindVM},
		{ID: "pod-c", Kind: agentapi.KindPod}, {ID: "vm-quiet", Kind: agentapi.KindVM}}
	ctx := context.Background()
	step := func(what, want string) {
		t.Helper()
		r.pushConsoles(ctx, as)
		if got := srv.take(); got != want {
			t.Errorf("%s: pushed %q, want %q", what, got, want)
		}
	}
	step("first", "vm-a:6 vm-other:1")
	step("unchanged", "")

	long := make([]byte, 70<<10)
	for i := range long {
		long[i] = byte(i % 251)
	}
	rt.consoles["vm-a"] = long
	step("grown past the bound", "vm-a:65536")
	if string(srv.bodies["vm-a"]) != string(long[len(long)-agentapi.ConsoleBytes:]) {
		t.Error("the push is not the console's last 64 KiB")
	}

	rt.consoles["vm-a"] = []byte("login: ")
	srv.status["vm-a"] = http.StatusServiceUnavailable
	step("server unavailable", "vm-a:7")
	srv.status["vm-a"] = 0
	step("tried again", "vm-a:7")

	srv.status["vm-a"] = http.StatusForbidden
	rt.consoles["vm-a"] = []byte("login: root")
	step("refused for good", "vm-a:11")
	rt.consoles["vm-a"] = []byte("login: root\r\n#")
	step("after a 403", "")
}

// An agent that is stopping (its context cancelled mid-push) logs no
// failure: nothing failed, and the next agent pushes what changed.
func TestConsolePushStoppingIsQuiet(t *testing.T) {
	srv := &consoleServer{status: map[string]int{}, bodies: map[string][]byte{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var logged lockedbuf.Buffer
	rt := consoleRuntime{consoles: map[string][]byte{"vm-a": []byte("boot\r\n")}}
	r := &reporter{cfg: Config{Runtime: rt}, log: slog.New(slog.NewTextHandler(&logged, nil)), client: NewClient(hs.URL, "tok", hs.Client())}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.pushConsoles(ctx, []agentapi.Assignment{{ID: "vm-a", Kind: agentapi.KindVM}})
	if s := logged.String(); s != "" {
		t.Errorf("a push cut short by the agent's stop logged %q, want nothing", s)
	}
	if _, ok := r.consoles.sent["vm-a"]; ok {
		t.Error("a push cut short was remembered as sent")
	}
}
