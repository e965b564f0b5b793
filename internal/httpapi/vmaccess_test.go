package httpapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// baseCluster is Base's cluster (its nodes gpu-node-1, online, and
// gpu-node-2, offline).
const baseCluster = "71f69d83-ba66-4822-adf5-55ce55efd210"

// authorizedKey is key's authorized_keys line with comment.
func authorizedKey(t *testing.T, key any, comment string) string {
	t.Helper()
	pub, err := ssh.NewPublicKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " " + comment
}

// testKeys are an ed25519, an ECDSA P-384 and an RSA 2048-bit key, and an
// RSA 1024-bit one (too small).
func testKeys(t *testing.T) (ed, ec, rsa2048, rsa1024 string) {
	t.Helper()
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := rsa.GenerateKey(rand.Reader, 1024) //nolint:gosec // the size refused
	if err != nil {
		t.Fatal(err)
	}
	return authorizedKey(t, edPub, "ada@laptop"), authorizedKey(t, &ecKey.PublicKey, "ec"),
		authorizedKey(t, &r2.PublicKey, "rsa user"), authorizedKey(t, &r1.PublicKey, "old")
}

// assignedKeys is what node gpu-node-1's next heartbeat (through url) is
// told of VM id: its generation and SSH public keys.
func assignedKeys(t *testing.T, url, cred, id string) (int, []string) {
	t.Helper()
	for _, a := range servertest.HeartbeatAs(t, url, cred, "gpu-node-1", nil).Workloads {
		if a.ID == id {
			return a.Generation, a.SSHPublicKeys
		}
	}
	t.Fatalf("%s is not assigned to gpu-node-1", id)
	return 0, nil
}

func countRows(t *testing.T, st *store.Store, table string) int64 {
	t.Helper()
	var n int64
	if err := st.DB.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// sshPublicKeys on POST /v1/vms and createVm, both engines: valid keys of
// each kind are kept in order and handed to the VM's node in its
// assignment (through another server over the same database too, and
// again after a stop and start); each bad entry is a 400 naming its index
// and what is wrong, never echoing the key, with nothing written; 17 keys
// are refused; a pod takes none; the Idempotency-Key's body rule covers
// them.
func TestCreateVMSSHPublicKeys(t *testing.T) {
	ed, ec, r2, r1 := testKeys(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cred := servertest.NodeCredential(t, st, "gpu-node-1", baseCluster)
		keys := []string{ed, ec, r2}
		create := func(name string, keys any) []byte {
			b, _ := json.Marshal(map[string]any{"name": name, "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64,
				"diskSizeGb": 100, "sshPublicKeys": keys})
			return b
		}
		idem := http.Header{"Idempotency-Key": {"keys-1"}}
		status, body := env.Do(http.MethodPost, "/v1/vms", "acme-operator", create("keyed", keys), idem)
		var vm struct{ ID, Status string }
		if err := json.Unmarshal(body, &vm); err != nil || status != http.StatusCreated || vm.Status != "deploying" {
			t.Fatalf("create: %d %s", status, body)
		}
		for _, k := range keys {
			if strings.Contains(string(body), strings.Fields(k)[1]) {
				t.Errorf("the VM object shows a key: %s", body)
			}
		}
		if gen, got := assignedKeys(t, env.Srv.URL, cred, vm.ID); gen != 1 || !slices.Equal(got, keys) {
			t.Errorf("assignment: generation %d keys %q, want 1 and %q", gen, got, keys)
		}
		// Another server over the same database (a replica, or this one
		// restarted) hands over the same keys.
		other := httptest.NewServer(servertest.Handler(st, servertest.Options{}, servertest.Config{}))
		defer other.Close()
		if _, got := assignedKeys(t, other.URL, cred, vm.ID); !slices.Equal(got, keys) {
			t.Errorf("assignment through another server: %q, want %q", got, keys)
		}
		// The idempotency key: the same body replays, other keys are another request.
		if s, again := env.Do(http.MethodPost, "/v1/vms", "acme-operator", create("keyed", keys), idem); s != http.StatusCreated || string(again) != string(body) {
			t.Errorf("replay: %d %s, want the first answer", s, again)
		}
		if s, b := env.Do(http.MethodPost, "/v1/vms", "acme-operator", create("keyed", []string{ed}), idem); s != http.StatusUnprocessableEntity ||
			servertest.ErrorCode(t, b) != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("same key, other keys: %d %s, want 422 IDEMPOTENCY_KEY_REUSED", s, b)
		}

		// Stopped and started again on its node: the same keys, the next run.
		if s, b := env.Do(http.MethodPost, "/v1/vms/"+vm.ID+"/stop", "acme-operator", nil, nil); s != 200 {
			t.Fatalf("stop: %d %s", s, b)
		}
		servertest.HeartbeatAs(t, env.Srv.URL, cred, "gpu-node-1", nil) // an agent before 2.7.0: not listing it is gone
		if s, b := env.Do(http.MethodPost, "/v1/vms/"+vm.ID+"/restart", "acme-operator", nil, nil); s != 200 {
			t.Fatalf("restart: %d %s", s, b)
		}
		if gen, got := assignedKeys(t, env.Srv.URL, cred, vm.ID); gen != 2 || !slices.Equal(got, keys) {
			t.Errorf("after stop and start: generation %d keys %q, want 2 and %q", gen, got, keys)
		}

		vms, keyRows := countRows(t, st, "vms"), countRows(t, st, "vm_ssh_keys")
		seventeen := make([]string, 17)
		for i := range seventeen {
			seventeen[i] = ed
		}
		for _, c := range []struct {
			name string
			keys any
			want string
		}{
			{"empty", []string{ed, ""}, "sshPublicKeys[1] is empty: give an OpenSSH public key, such as the line of ~/.ssh/id_ed25519.pub"},
			{"small RSA", []string{r1}, "sshPublicKeys[0] is an ssh-rsa key of 1024 bits; at least 2048 are needed"},
			{"options", []string{ed, `from="10.0.0.1" ` + ec}, "sshPublicKeys[1] does not start with a key type this platform takes " +
				"(ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa, sk-ssh-ed25519@openssh.com, " +
				`sk-ecdsa-sha2-nistp256@openssh.com): an OpenSSH public key is "type base64 [comment]", with no options before it`},
			{"two in one", []string{ed + "\n" + ec}, "sshPublicKeys[0] holds a line break: one key per entry, one line each"},
			{"not base64", []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI!!!! x"}, "sshPublicKeys[0] is not a valid ssh-ed25519 public key: its base64 part does not decode to one"},
			{"type and blob differ", []string{"ssh-rsa " + strings.Fields(ed)[1]}, "sshPublicKeys[0] is not a valid ssh-rsa public key: its base64 part does not decode to one"},
			{"DSA", []string{"ssh-dss AAAAB3NzaC1kc3MAAACBAP"}, "sshPublicKeys[0] does not start with a key type this platform takes " +
				"(ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-rsa, sk-ssh-ed25519@openssh.com, " +
				`sk-ecdsa-sha2-nistp256@openssh.com): an OpenSSH public key is "type base64 [comment]", with no options before it`},
			{"twice", []string{ed, ec, strings.Fields(ed)[0] + " " + strings.Fields(ed)[1] + " another comment"}, "sshPublicKeys[2] is the same key as sshPublicKeys[0]"},
			{"spaces", []string{" " + ed}, "sshPublicKeys[0] starts or ends with spaces"},
			{"long", []string{ed + " " + strings.Repeat("c", 8192)}, "sshPublicKeys[0] is longer than 8192 bytes"},
			{"17", seventeen, "sshPublicKeys holds 17 keys; a VM takes at most 16"},
		} {
			s, b := env.Do(http.MethodPost, "/v1/vms", "acme-operator", create("refused", c.keys), nil)
			msg := openRelayMessage(b)
			if s != http.StatusBadRequest || msg != c.want {
				t.Errorf("%s: %d %q, want 400 %q", c.name, s, msg, c.want)
			}
			for _, k := range []string{ed, ec, r1} {
				if strings.Contains(msg, strings.Fields(k)[1][20:40]) {
					t.Errorf("%s: the refusal echoes a key: %s", c.name, msg)
				}
			}
		}
		pod := []byte(`{"name": "p", "capabilityTier": "pod", "imageUrl": "busybox", "volumeGb": 1, "gpuModelId": "h100-80gb", "gpuCount": 1, "sshPublicKeys": [` +
			fmt.Sprintf("%q", ed) + `]}`)
		if s, b := env.Do(http.MethodPost, "/v1/vms", "acme-operator", pod, nil); s != 400 ||
			openRelayMessage(b) != `sshPublicKeys is a VM's (its guest's cloud-init authorizes them); a pod (capabilityTier "pod") takes none` {
			t.Errorf("a pod's keys: %d %s", s, b)
		}
		if s, b := env.Do(http.MethodPost, "/v1/vms", "acme-operator", create("refused", []any{ed, 7}), nil); s != 400 ||
			!strings.HasPrefix(openRelayMessage(b), "sshPublicKeys[1]") {
			t.Errorf("a number: %d %s, want a 400 naming sshPublicKeys[1]", s, b)
		}
		if v, k := countRows(t, st, "vms"), countRows(t, st, "vm_ssh_keys"); v != vms || k != keyRows || k != 3 {
			t.Errorf("refusals wrote rows: %d VMs and %d keys, want %d and 3", v, k, vms)
		}

		// createVm: the same service.
		const m = `mutation($in: CreateVmInput!) { createVm(input: $in) { id status } }`
		in := func(keys []string) map[string]any {
			return map[string]any{"in": map[string]any{"name": "gql", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 8, "ramGb": 64,
				"diskSizeGb": 100, "sshPublicKeys": keys}}
		}
		r := env.GraphQL("acme-operator", m, in([]string{ec, r1}))
		if r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "sshPublicKeys[1] is an ssh-rsa key of 1024 bits; at least 2048 are needed" || string(r.Data) != "null" {
			t.Errorf("createVm with a small key: %+v %s", r.Errors, r.Data)
		}
		var got struct {
			CreateVM struct{ ID, Status string } `json:"createVm"`
		}
		env.Decode(env.GraphQL("acme-operator", m, in([]string{ec})), &got)
		if _, keys := assignedKeys(t, env.Srv.URL, cred, got.CreateVM.ID); !slices.Equal(keys, []string{ec}) {
			t.Errorf("createVm's keys in the assignment: %q", keys)
		}
		// createVm's Idempotency-Key: the keys are argument values, so other
		// keys under the same key are another request.
		gqlBody := func(keys []string) []byte {
			b, _ := json.Marshal(map[string]any{"query": m, "variables": in(keys)})
			return b
		}
		gkey := http.Header{"Idempotency-Key": {"gql-keys-1"}, "Content-Type": {"application/json"}}
		s1, first := env.Do(http.MethodPost, "/graphql", "acme-operator", gqlBody([]string{ed}), gkey)
		s2, again := env.Do(http.MethodPost, "/graphql", "acme-operator", gqlBody([]string{ed}), gkey)
		s3, otherKeys := env.Do(http.MethodPost, "/graphql", "acme-operator", gqlBody([]string{ec}), gkey)
		if s1 != 200 || s2 != 200 || string(again) != string(first) || s3 != http.StatusUnprocessableEntity ||
			!strings.Contains(string(otherKeys), `"code":"IDEMPOTENCY_KEY_REUSED"`) {
			t.Errorf("createVm with an Idempotency-Key: %d %s; again %d %s; other keys %d %s", s1, first, s2, again, s3, otherKeys)
		}
	})
}

// consoleJSON is GET /v1/vms/{id}/console's answer.
type consoleJSON struct {
	VMID       string  `json:"vmId"`
	Output     []byte  `json:"output"`
	Text       string  `json:"text"`
	Bytes      int     `json:"bytes"`
	CapturedAt *string `json:"capturedAt"`
}

func putConsole(t *testing.T, url, cred, id string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+agentapi.ConsolePath(id), strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The serial console, both engines: a node pushes the tail of its VM's
// console and the VM's organization reads those bytes exactly, on REST
// and GraphQL, from any replica; the last 64 KiB of a longer push are
// kept; nothing pushed yet reads empty; another organization's VM is a
// 404, a pod has none, a caller without compute.read is refused; a node
// cannot write a VM that is not on it, nor an API key any.
func TestVMConsole(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		url := env.Srv.URL
		n1 := servertest.NodeCredential(t, st, "gpu-node-1", baseCluster)
		n2 := servertest.NodeCredential(t, st, "gpu-node-2", baseCluster)
		read := func(srv, token, id string) (int, []byte) {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, srv+"/v1/vms/"+id+"/console", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, b
		}
		console := func(srv, id string) consoleJSON {
			t.Helper()
			s, b := read(srv, "acme-reader", id)
			var c consoleJSON
			if err := json.Unmarshal(b, &c); s != 200 || err != nil {
				t.Fatalf("GET console of %s: %d %s", id, s, b)
			}
			return c
		}

		// Nothing captured yet.
		if s, b := read(url, "acme-reader", "vm-acme-1"); s != 200 || string(b) != `{"vmId":"vm-acme-1","output":"","text":"","bytes":0,"capturedAt":null}`+"\n" {
			t.Errorf("before any push: %d %s", s, b)
		}

		boot := []byte("SeaBIOS\r\n\x1b[0mLinux version 6.1\r\n\xff\xfe not UTF-8\r\nlogin: ")
		if s, b := putConsole(t, url, n1, "vm-acme-1", boot); s != http.StatusNoContent {
			t.Fatalf("push: %d %s", s, b)
		}
		c := console(url, "vm-acme-1")
		if string(c.Output) != string(boot) || c.Bytes != len(boot) || c.VMID != "vm-acme-1" || c.CapturedAt == nil {
			t.Errorf("console: %+v, want the %d bytes pushed", c, len(boot))
		}
		asText := "SeaBIOS\r\n\x1b[0mLinux version 6.1\r\n\uFFFD not UTF-8\r\nlogin: "
		if c.Text != asText {
			t.Errorf("console text %q, want %q (invalid UTF-8 replaced)", c.Text, asText)
		}
		// Accept: text/plain ranked above JSON: the text alone.
		for accept, plain := range map[string]bool{"text/plain": true, "text/plain, application/json;q=0.5": true,
			"application/json, text/plain": false, "*/*": false} {
			req, _ := http.NewRequest(http.MethodGet, url+"/v1/vms/vm-acme-1/console", nil)
			req.Header.Set("Authorization", "Bearer acme-reader")
			req.Header.Set("Accept", accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ct := resp.Header.Get("Content-Type")
			if plain && (resp.StatusCode != 200 || ct != "text/plain; charset=utf-8" || string(body) != asText) {
				t.Errorf("Accept %q: %d %s %q, want the text alone", accept, resp.StatusCode, ct, body)
			}
			if !plain && (resp.StatusCode != 200 || !strings.HasPrefix(ct, "application/json")) {
				t.Errorf("Accept %q: %d %s, want JSON", accept, resp.StatusCode, ct)
			}
		}
		other := httptest.NewServer(servertest.Handler(st, servertest.Options{}, servertest.Config{}))
		defer other.Close()
		_, mine := read(url, "acme-reader", "vm-acme-1")
		if _, theirs := read(other.URL, "acme-reader", "vm-acme-1"); string(theirs) != string(mine) {
			t.Errorf("another replica reads %s, want %s", theirs, mine)
		}

		// GraphQL: the same bytes, base64 and as text; a pod's is null.
		var g struct {
			VM struct {
				Console struct {
					Output, Text string
					Bytes        int
					CapturedAt   *string
				}
			}
			Pod struct{ Console *struct{ Bytes int } }
		}
		env.Decode(env.GraphQL("acme-reader", `{ vm(id: "vm-acme-1") { console { output text bytes capturedAt } } pod: vm(id: "pod-acme-1") { console { bytes } } }`, nil), &g)
		if g.VM.Console.Output != c.outputBase64() || g.VM.Console.Text != strings.ToValidUTF8(string(boot), "\uFFFD") ||
			g.VM.Console.Bytes != len(boot) || g.VM.Console.CapturedAt == nil || *g.VM.Console.CapturedAt != *c.CapturedAt || g.Pod.Console != nil {
			t.Errorf("GraphQL: %+v", g)
		}

		// The last 64 KiB of a longer push.
		long := make([]byte, 100<<10)
		for i := range long {
			long[i] = byte('a' + i%26)
		}
		if s, b := putConsole(t, url, n1, "vm-acme-1", long); s != http.StatusNoContent {
			t.Fatalf("push 100 KiB: %d %s", s, b)
		}
		if c := console(url, "vm-acme-1"); string(c.Output) != string(long[len(long)-65536:]) || c.Bytes != 65536 {
			t.Errorf("after 100 KiB: %d bytes, want the last 65536 exactly", c.Bytes)
		}

		// Refusals. A node writes only its own VMs: n2 is not vm-acme-1's
		// node; a pod has no console; an API key names no node.
		for _, c := range []struct {
			what, cred, id string
			status         int
			code           string
		}{
			{"another node's VM", n2, "vm-acme-1", 404, "VM_NOT_ON_NODE"},
			{"a pod", n1, "pod-acme-1", 404, "VM_NOT_ON_NODE"},
			{"no such VM", n1, "vm-nope", 404, "VM_NOT_ON_NODE"},
			{"an API key", "acme-agent", "vm-acme-1", 403, "NODE_CREDENTIAL_REQUIRED"},
			{"a tenant's key", "acme-operator", "vm-acme-1", 403, "NODE_CREDENTIAL_REQUIRED"},
			{"no credential", "", "vm-acme-1", 401, "NODE_CREDENTIAL_REQUIRED"},
		} {
			s, b := putConsole(t, url, c.cred, c.id, []byte("overwritten"))
			if s != c.status || servertest.ErrorCode(t, []byte(b)) != c.code {
				t.Errorf("push by %s: %d %s, want %d %s", c.what, s, b, c.status, c.code)
			}
		}
		if c := console(url, "vm-acme-1"); c.Bytes != 65536 {
			t.Errorf("a refused push changed the console: %d bytes", c.Bytes)
		}
		for _, c := range []struct {
			what, token, id string
			status          int
			code            string
		}{
			{"another organization's VM", "globex-operator", "vm-acme-1", 404, "VM_NOT_FOUND"},
			{"a missing VM", "acme-reader", "vm-nope", 404, "VM_NOT_FOUND"},
			{"a pod", "acme-reader", "pod-acme-1", 404, "CONSOLE_NOT_FOUND"},
			{"no compute.read", "acme-workloads", "vm-acme-1", 403, "FORBIDDEN"},
		} {
			s, b := read(url, c.token, c.id)
			if s != c.status || servertest.ErrorCode(t, b) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.what, s, b, c.status, c.code)
			}
		}
		r := env.GraphQL("globex-operator", `{ vm(id: "vm-acme-1") { console { bytes } } }`, nil)
		if len(r.Errors) != 0 || string(r.Data) != `{"vm":null}` {
			t.Errorf("another organization's VM on GraphQL: %+v %s", r.Errors, r.Data)
		}
		if c, _ := st.ConsolesOf(context.Background(), "org-globex", []string{"vm-acme-1"}); len(c) != 0 {
			t.Errorf("the store read another organization's console: %d", len(c))
		}
	})
}

func (c consoleJSON) outputBase64() string {
	b, _ := json.Marshal(c.Output)
	return strings.Trim(string(b), `"`)
}

// openRelayMessage is the message of an OpenRelay error body.
func openRelayMessage(b []byte) string {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Message
}
