package agent_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/agent/qemu/qemutest"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The restart seed's VM sentences on a node that runs VMs for real, on
// both engines: the real server and the real agent binary with --runtime
// qemu (the test guest under TCG, --mock NVML, whose simulated GPUs are
// held but passed through to no VM). A VM created with POST /v1/vms
// passes its provisioning stages and is running once its guest is up, its
// SSH key in its cloud-init seed, its endpointUrl the forwarded SSH port and
// its console readable through the API;
// restartVm of it is a reboot of the same QEMU, acknowledged on vmEvents
// with its generation, its disk's marker kept; a stop is stopped with
// tearingDown until QEMU is gone; a restart boots the same disk; a QEMU
// killed is failed with how it ended, and restarts on the same disk; a
// guest that powers itself off is stopped with vm_exited; an image the node's
// catalog lacks fails the start naming it. Each sentence is one step of
// qemuSteps, run in order on one VM and node.
func TestAgentRunsVMsInQEMU(t *testing.T) {
	t.Parallel() // beside the package's other end-to-end tests (own servers, stores, ports and state directory)
	if testing.Short() {
		t.Skip("boots QEMU guests through the agent binary")
	}
	qemutest.Binary(t)
	images := qemuCatalog(t, qemutest.Build(t))
	bin := buildAgent(t)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if _, err := dataset.LoadFile(context.Background(), st, []byte(qemuFixture(t))); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(servertest.Checked(t, servertest.Handler(st, servertest.Options{}, servertest.Config{})))
		t.Cleanup(srv.Close)
		state := qemutest.StateDir(t)
		a := startAgentArgs(t, bin, srv.URL, "dgx-qe", servertest.Enroll(t, st, "dgx-qe", "c-qe"), "--interval", "200ms",
			"--mock", "dgxh100", "--runtime", "qemu", "--qemu-state-dir", state, "--vm-images", images,
			"--qemu-accel", "tcg", "--qemu-stop-grace", "30s")
		defer a.stop(t)
		waitAgentReported(t, st, a, "n-qe")
		q := &qemuRun{st: st, url: srv.URL, a: a, state: state}
		for _, s := range qemuSteps {
			if !t.Run(s.name, func(t *testing.T) { s.run(t, q) }) {
				return // each step needs the one before
			}
		}
		if v := storetest.Violations(t, st); v != nil {
			t.Errorf("violations: %v", v)
		}
	})
}

// qemuRun is what the steps share: the server, the agent, its state
// directory and the VM they drive.
type qemuRun struct {
	st    *store.Store
	url   string
	a     *agentProc
	state string
	vm    string // the VM the first step created
	key   string // the SSH public key it was created with
	pid   int    // its QEMU's pid, while it runs
}

// qemuSteps are the end-to-end test's steps, in order; a step sees what
// the ones before it did.
var qemuSteps = []struct {
	name string
	run  func(t *testing.T, q *qemuRun)
}{
	{"create boots to running", func(t *testing.T, q *qemuRun) {
		q.key = testSSHKey(t)
		q.vm = q.create(t, "qe", "tiny", q.key)
		v := q.wait(t, q.vm, models.VMRunning)
		servertest.CheckVM(t, q.st, v, "", 1)
		servertest.CheckEvents(t, q.st, q.vm, "create-placed:pending>deploying:user:*", "agent-running:deploying>running:agent:dgx-qe")
		// The stages the agent reported, each once and in order: booting
		// lasts the guest's boot, creating_volume only as long as qemu-img
		// runs (a heartbeat may miss it); running is ready.
		var stages []string
		for _, e := range servertest.EventsOf(t, q.st, q.vm) {
			if e.Transition == models.AgentStage || e.Transition == models.AgentRunning {
				stages = append(stages, e.ProvisioningStage)
			}
		}
		if s := strings.Join(stages, " "); s != "creating_volume booting ready" && s != "booting ready" {
			t.Errorf("stages reported %q, want creating_volume (maybe), booting, ready", s)
		}
		if v.ProvisioningStage != agentapi.StageReady {
			t.Errorf("provisioningStage %q, want ready", v.ProvisioningStage)
		}
		q.console(t, qemutest.ReadyLine, qemutest.BootsPrefix+"0\n")
		q.pid = q.qemuPid(t)
	}},
	{"the API shows where it answers and its console", func(t *testing.T, q *qemuRun) {
		// Its SSH key reached the guest through the cloud-init seed.
		q.console(t, qemutest.SeedPrefix, qemutest.SeedFilePrefix+"user-data: ", strings.TrimSpace(q.key))
		// The node reported its forwarded SSH port; the server keeps it as
		// the VM's endpointUrl.
		v := q.wait(t, q.vm, models.VMRunning, func(v *models.VM) bool { return strings.HasPrefix(v.EndpointURL, "ssh://") })
		if u, err := url.Parse(v.EndpointURL); err != nil || u.Port() == "" {
			t.Errorf("endpointUrl %q, want ssh://HOST:PORT", v.EndpointURL)
		}
		// The console its node pushed, as a tenant reads it: REST and GraphQL.
		deadline := time.Now().Add(time.Minute)
		for {
			req, _ := http.NewRequest(http.MethodGet, q.url+"/v1/vms/"+q.vm+"/console", nil)
			req.Header.Set("Authorization", "Bearer qe-op")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var c struct{ Output string }
			err = json.NewDecoder(resp.Body).Decode(&c)
			resp.Body.Close()
			out, _ := base64.StdEncoding.DecodeString(c.Output)
			if err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(out), qemutest.ReadyLine) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET console: %d %v, output %q, want the guest's ready line", resp.StatusCode, err, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		data := servertest.GQLDo(t, q.url, "qe-op", `query($id: ID!) { vm(id: $id) { endpointUrl console { text } } }`, map[string]any{"id": q.vm})
		var got struct {
			VM struct {
				EndpointURL string
				Console     struct{ Text string }
			}
		}
		if err := json.Unmarshal(data, &got); err != nil || got.VM.EndpointURL != v.EndpointURL ||
			!strings.Contains(got.VM.Console.Text, qemutest.BootsPrefix+"0") {
			t.Errorf("vm { endpointUrl console } answered %s, want %s and the first boot's lines", data, v.EndpointURL)
		}
	}},
	{"restartVm reboots in place", func(t *testing.T, q *qemuRun) {
		// From the VM's last event on: the restart's are the next,
		// however soon the subscription is live.
		evs := servertest.EventsOf(t, q.st, q.vm)
		ws := servertest.Subscribe(t, q.url, "qe-op", `subscription($ids: [ID!], $after: ID) {
			vmEvents(ids: $ids, after: $after) { vmId from to transition generation } }`,
			map[string]any{"ids": []string{q.vm}, "after": strconv.FormatInt(evs[len(evs)-1].Seq, 10)})
		data := servertest.GQLDo(t, q.url, "qe-op", `mutation($id: ID!) { restartVm(id: $id) { id status } }`, map[string]any{"id": q.vm})
		if got := string(data); got != fmt.Sprintf(`{"restartVm":{"id":%q,"status":"RUNNING"}}`, q.vm) {
			t.Fatalf("restartVm answered %s, want it running (a reboot in place)", got)
		}
		type event struct {
			VMID, From, To, Transition string
			Generation                 *int
		}
		var got []string
		for {
			e := servertest.NextData(ws, 1, func(d struct{ VMEvents event }) event { return d.VMEvents })[0]
			if e.Transition == string(models.AgentStage) {
				continue
			}
			gen := "null"
			if e.Generation != nil {
				gen = strconv.Itoa(*e.Generation)
			}
			got = append(got, fmt.Sprintf("%s %s>%s gen %s", e.Transition, e.From, e.To, gen))
			if e.Transition == string(models.AgentRestarted) || len(got) == 3 {
				break
			}
		}
		if want := []string{"restart-reboot RUNNING>RUNNING gen 2", "agent-restarted RUNNING>RUNNING gen 2"}; !slices.Equal(got, want) {
			t.Fatalf("vmEvents after restartVm: %q, want %q", got, want)
		}
		servertest.CheckVM(t, q.st, q.wait(t, q.vm, models.VMRunning, func(vm *models.VM) bool { return vm.Action == models.ActionRun }),
			models.ReasonUserRestarted, 1)
		// The same QEMU, its guest booted again on the same disk.
		if pid := q.qemuPid(t); pid != q.pid {
			t.Errorf("QEMU pid %d after the reboot, %d before: want the same process", pid, q.pid)
		}
		q.console(t, qemutest.BootsPrefix+"1\n")
	}},
	{"stop tears down until QEMU is gone", func(t *testing.T, q *qemuRun) {
		code, body := servertest.PostAs(t, q.url+"/v1/vms/"+q.vm+"/stop", "qe-op", "")
		if code != http.StatusOK || !strings.Contains(body, `"status":"stopped"`) || !strings.Contains(body, `"tearingDown":true`) {
			t.Fatalf("stop: %d %s, want stopped with tearingDown true", code, body)
		}
		// The agent hears of the stop at its next heartbeat: its QEMU
		// still runs while the row reads tearingDown.
		if running := qemutest.Running(q.state); !slices.Contains(running, q.pid) {
			t.Errorf("QEMU %d gone as the stop answered (running: %v)", q.pid, running)
		}
		v := q.wait(t, q.vm, models.VMStopped, func(vm *models.VM) bool { return !vm.TearingDown })
		if running := qemutest.Running(q.state); len(running) != 0 {
			t.Errorf("tearingDown false while QEMU %v runs", running)
		}
		servertest.CheckVM(t, q.st, v, models.ReasonUserStopped, 0)
		servertest.CheckEvents(t, q.st, q.vm, "user-stop:running>stopped:user:*", "agent-gone:stopped>stopped:agent:dgx-qe")
		// The guest powered off through ACPI (the power button), its disk kept.
		q.console(t, "gpugraph-guest: power button")
		if _, err := os.Stat(filepath.Join(q.state, "disks", q.volume(t)+".qcow2")); err != nil {
			t.Errorf("the stopped VM's disk: %v, want it kept", err)
		}
	}},
	{"restart boots the same disk", func(t *testing.T, q *qemuRun) {
		vol := q.volume(t)
		if code, body := servertest.PostAs(t, q.url+"/v1/vms/"+q.vm+"/restart", "qe-op", ""); code != http.StatusOK {
			t.Fatalf("restart: %d %s", code, body)
		}
		v := q.wait(t, q.vm, models.VMRunning)
		servertest.CheckVM(t, q.st, v, models.ReasonUserRestarted, 1)
		servertest.CheckEvents(t, q.st, q.vm, "restart-deploy:stopped>deploying:user:*", "agent-running:deploying>running:agent:dgx-qe")
		if got := q.volume(t); got != vol {
			t.Errorf("restarted on volume %s, want %s (its disk on this node)", got, vol)
		}
		// Two boots before this one: the first and the reboot.
		q.console(t, qemutest.BootsPrefix+"2\n")
		q.pid = q.qemuPid(t)
	}},
	{"a crashed QEMU is failed, and restarts on its disk", func(t *testing.T, q *qemuRun) {
		if err := syscall.Kill(q.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		v := q.wait(t, q.vm, models.VMFailed)
		if want := models.ReasonVMFailedPrefix + "QEMU was killed by signal 9 (killed)"; !strings.HasPrefix(v.StatusReason, want) || v.TearingDown {
			t.Errorf("after its QEMU was killed: %q, tearingDown %v; want %q… (and QEMU's last log line), false", v.StatusReason, v.TearingDown, want)
		}
		servertest.CheckVM(t, q.st, v, v.StatusReason, 0)
		servertest.CheckEvents(t, q.st, q.vm, "agent-running:deploying>running:agent:dgx-qe", "vm-crashed:running>failed:agent:dgx-qe")
		if code, body := servertest.PostAs(t, q.url+"/v1/vms/"+q.vm+"/restart", "qe-op", ""); code != http.StatusOK {
			t.Fatalf("restart after the crash: %d %s", code, body)
		}
		servertest.CheckVM(t, q.st, q.wait(t, q.vm, models.VMRunning), models.ReasonUserRestarted, 1)
		servertest.CheckEvents(t, q.st, q.vm, "restart-deploy:failed>deploying:user:*", "agent-running:deploying>running:agent:dgx-qe")
		q.console(t, qemutest.BootsPrefix+"3\n")
		q.pid = q.qemuPid(t)
	}},
	{"the guest's own poweroff is vm_exited", func(t *testing.T, q *qemuRun) {
		id := q.create(t, "qe-off", "tiny-off")
		q.wait(t, id, models.VMRunning)
		v := q.wait(t, id, models.VMStopped)
		if v.TearingDown {
			t.Error("tearingDown after the guest's own poweroff: nothing is left to tear down")
		}
		servertest.CheckVM(t, q.st, v, models.ReasonVMExited, 0)
		servertest.CheckEvents(t, q.st, id, "create-placed:pending>deploying:user:*", "agent-running:deploying>running:agent:dgx-qe",
			"vm-exited:running>stopped:agent:dgx-qe")
		// Only the first VM's QEMU is left.
		if running := qemutest.Running(q.state); !slices.Equal(running, []int{q.pid}) {
			t.Errorf("QEMUs running %v, want only %d", running, q.pid)
		}
	}},
	{"an unknown image fails the start", func(t *testing.T, q *qemuRun) {
		id := q.create(t, "qe-bad", "no-such-image")
		v := q.wait(t, id, models.VMFailed)
		servertest.CheckVM(t, q.st, v, models.ReasonFailedToStartPrefix+`the VM image "no-such-image" is not in this node's catalog.`, 0)
		servertest.CheckEvents(t, q.st, id, "create-placed:pending>deploying:user:*", "agent-failed-start:deploying>failed:agent:dgx-qe")
	}},
}

// create makes a one-GPU VM booting image, with these SSH public keys,
// and answers its id.
func (q *qemuRun) create(t *testing.T, name, image string, keys ...string) string {
	t.Helper()
	ks, _ := json.Marshal(append([]string{}, keys...))
	code, body := servertest.PostAs(t, q.url+"/v1/vms", "qe-op", fmt.Sprintf(
		`{"name": %q, "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 1, "ramGb": 1, "diskSizeGb": 1, "imageUrl": %q, "sshPublicKeys": %s}`,
		name, image, ks))
	var vm struct{ ID, Status string }
	if err := json.Unmarshal([]byte(body), &vm); err != nil || code != http.StatusCreated || vm.Status != "deploying" {
		t.Fatalf("create %s: %d %s, want 201 deploying", name, code, body)
	}
	return vm.ID
}

// wait polls VM id until it is in status want (and every extra check
// holds), for at most 2 minutes (a guest boots in seconds under TCG on an
// idle machine, many times that on a busy one); a row that ended
// otherwise (failed, or stopped and torn down) ends the wait at once.
func (q *qemuRun) wait(t *testing.T, id string, want models.VMStatus, extra ...func(*models.VM) bool) *models.VM {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		vm := servertest.ReadVM(t, q.st, id)
		ok := vm.Status == want
		for _, f := range extra {
			ok = ok && f(vm)
		}
		if ok {
			return vm
		}
		ended := (vm.Status == models.VMFailed || vm.Status == models.VMStopped && !vm.TearingDown) && vm.Status != want
		if time.Now().After(deadline) || ended {
			t.Fatalf("%s: want %s (within 2 minutes); it is %s (%q, generation %d, tearingDown %v)\nagent output:\n%s",
				id, want, vm.Status, vm.StatusReason, vm.Generation, vm.TearingDown, q.a.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// console checks that the first VM's serial console, as the node keeps
// it, holds each of lines, waiting up to 2 minutes for them.
func (q *qemuRun) console(t *testing.T, lines ...string) {
	t.Helper()
	// The VM is running once its QEMU is; its guest boots after that, and
	// slower on a loaded machine (TCG), so its lines may come later.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(q.state, "vms", q.vm, "console.log"))
		if err != nil {
			t.Fatalf("console of %s: %v", q.vm, err)
		}
		text := strings.ReplaceAll(string(b), "\r\n", "\n") // a serial console ends its lines in CR LF
		var missing []string
		for _, l := range lines {
			if !strings.Contains(text, l) {
				missing = append(missing, l)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("console of %s lacks %q (within 2 minutes):\n%s", q.vm, missing, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// qemuPid is the pid of the first VM's QEMU, which must be running.
func (q *qemuRun) qemuPid(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(q.state, "vms", q.vm, "qemu.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("QEMU pid file of %s: %q %v, want a running process", q.vm, b, err)
	}
	return pid
}

// volume is the disk the first VM's last run was placed with.
func (q *qemuRun) volume(t *testing.T) string {
	t.Helper()
	vol := ""
	for _, e := range servertest.EventsOf(t, q.st, q.vm) {
		if e.To == models.VMDeploying && e.VolumeID != "" {
			vol = e.VolumeID
		}
	}
	if vol == "" {
		t.Fatalf("no event of %s names its volume", q.vm)
	}
	return vol
}

// qemuCatalog is a VM image catalog of the test guest: tiny boots and
// stays up; tiny-off powers itself off five seconds after it is up (time
// for the agent's heartbeats to report it running first).
func qemuCatalog(t *testing.T, g qemutest.Guest) string {
	t.Helper()
	dir := t.TempDir()
	for name, cmdline := range map[string]string{"tiny": "", "tiny-off": qemutest.PowerOffCmdline + "=5"} {
		d := filepath.Join(dir, name)
		for _, err := range []error{os.MkdirAll(d, 0o755), os.Symlink(g.Kernel, filepath.Join(d, "vmlinuz")),
			os.Symlink(g.Initrd, filepath.Join(d, "initrd")),
			os.WriteFile(filepath.Join(d, "ready-line"), []byte(qemutest.ReadyLine+"\n"), 0o644),
			os.WriteFile(filepath.Join(d, "cmdline"), []byte(cmdline+"\n"), 0o644)} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// qemuFixture is one simulated DGX H100 (8 GPUs) running nothing and an
// organization with an operator key.
func qemuFixture(t *testing.T) string {
	return `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100 80GB HBM3", "manufacturer": "NVIDIA", "memoryGb": 80}],
 "organizations": [{"id": "o-qe", "name": "QE", "tenantId": 83}],
 "apiKeys": [{"token": "qe-op", "organizationId": "o-qe", "permissions": ["compute.read", "compute.operate"]}],
 "nodes": [{"id": "n-qe", "name": "dgx-qe", "clusterId": "c-qe", "status": "online", "agentVersion": "2.6.1", "cpuCores": 224, "ramGb": 2048, "diskGb": 27939,
            "gpus": [` + simGPUs(t, "dgx-qe", "qe-g") + `]}]
}`
}

// testSSHKey is a fresh ed25519 public key as an authorized_keys line
// with comment e2e@gpugraph.
func testSSHKey(t *testing.T) string { return testSSHKeyNamed(t, "e2e@gpugraph") }

// testSSHKeyNamed is a fresh ed25519 public key as an authorized_keys
// line with comment.
func testSSHKeyNamed(t *testing.T, comment string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) + " " + comment
}
