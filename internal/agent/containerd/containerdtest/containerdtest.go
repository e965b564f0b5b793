// Package containerdtest starts a private containerd for a test and gives
// it an image built by hand, so the containerd runtime's tests run
// containers for real without touching the host's containerd (if any) or
// reaching a registry.
//
// The daemon's config, root, state and socket live in temporary folders
// of the test; the CRI plugin is disabled (the tests speak containerd's
// own API) and the snapshotter is overlayfs. It needs root, containerd
// and runc (Debian: containerd, runc); without them the test skips,
// unless GPUGRAPH_REQUIRE_CONTAINERD=1 makes that a failure (CI sets it).
package containerdtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd"
)

// Namespace is the containerd namespace the tests' containers live in.
const Namespace = "gpugraph-test"

// RequireEnv, set to 1, turns a missing containerd, runc or busybox into a
// failure instead of a skip.
const RequireEnv = "GPUGRAPH_REQUIRE_CONTAINERD"

// startWait bounds the wait for a new daemon to serve; it starts in about
// 0.1 s on an idle machine.
const startWait = 15 * time.Second

// Daemon is a running private containerd.
type Daemon struct {
	Address string // its unix socket
	Client  *containerd.Client
	Dir     string // config, root and state live under it
}

// skip skips t, or fails it when RequireEnv is set, naming what is missing.
func skip(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s; %s=1 requires it", what, RequireEnv)
	}
	t.Skipf("skipped: %s (Debian: apt-get install containerd runc busybox-static, run as root; %s=1 makes this a failure)", what, RequireEnv)
}

// Start runs a private containerd for t and stops it when t ends, after
// removing every container left in Namespace (by id, task first), so no
// shim outlives the test.
func Start(t testing.TB) *Daemon {
	t.Helper()
	bin, err := exec.LookPath("containerd")
	if err != nil {
		skip(t, "containerd is not installed")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		skip(t, "runc is not installed")
	}
	if os.Geteuid() != 0 {
		skip(t, "running containers needs root")
	}
	dir := t.TempDir()
	// A unix socket's path is at most 107 bytes; a test's temporary folder
	// can be longer than that, so the socket gets a short folder of its own.
	sockDir, err := os.MkdirTemp("", "ctrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "c.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "opt"))
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a ^C to the test run reaches the test, whose
	// cleanup stops the daemon after its containers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start containerd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()

	d := &Daemon{Address: sock, Dir: dir}
	stop := func() {
		if d.Client != nil {
			RemoveAll(t, d.Client)
			d.Client.Close()
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(startWait)
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Fatalf("containerd exited at start: %v\n%s", err, log)
		default:
		}
		if _, err := os.Stat(sock); err == nil {
			c, err := containerd.New(sock, containerd.WithDefaultNamespace(Namespace), containerd.WithTimeout(time.Second))
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				ok, _ := c.IsServing(ctx)
				cancel()
				if ok {
					d.Client = c
					break
				}
				c.Close()
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("containerd did not serve on %s within %v", sock, startWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(stop)
	return d
}

// InNamespace is a client of d whose default namespace is ns (the node
// agent's runtime keeps its containers and images in its own). When t
// ends, before the daemon stops, every container left in ns is removed
// (RemoveAll) and the client closed.
func (d *Daemon) InNamespace(t testing.TB, ns string) *containerd.Client {
	t.Helper()
	c, err := containerd.New(d.Address, containerd.WithDefaultNamespace(ns), containerd.WithTimeout(time.Second))
	if err != nil {
		t.Fatalf("containerd client in namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		RemoveAll(t, c)
		c.Close()
	})
	return c
}

// RemoveAll kills and deletes every container in the client's namespace,
// by id: a test that failed half-way leaves none behind.
func RemoveAll(t testing.TB, c *containerd.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Containers(ctx)
	if err != nil {
		t.Logf("list leftover containers: %v", err)
		return
	}
	for _, ctr := range cs {
		if task, err := ctr.Task(ctx, nil); err == nil {
			task.Kill(ctx, syscall.SIGKILL)
			if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil {
				t.Logf("leftover task %s: %v", ctr.ID(), err)
			}
		}
		if err := ctr.Delete(ctx, containerd.WithSnapshotCleanup); err != nil {
			t.Logf("leftover container %s: %v", ctr.ID(), err)
		}
	}
}
