package qemu

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gpugraph/internal/agent/qemu/qemutest"
)

// TestQMP: the client against a real QEMU with no machine: the greeting
// and capabilities, a query, an error in QEMU's words, and quit.
func TestQMP(t *testing.T) {
	bin := qemutest.Binary(t)
	sock := filepath.Join(t.TempDir(), "q.sock")
	cmd := exec.Command(bin, "-machine", "none", "-S", "-nodefaults", "-display", "none", "-qmp", "unix:"+sock+",server=on,wait=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	gone := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(gone) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-gone })
	var q *qmp
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if q, err = dialQMP(sock, time.Second); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if st, err := q.status(time.Second); st != "prelaunch" || err != nil {
		t.Errorf("status %q, %v; want prelaunch", st, err)
	}
	if _, err := q.run("no-such-command", nil, time.Second); err == nil || err.Error() != "QMP no-such-command: CommandNotFound: The command no-such-command has not been found" {
		t.Errorf("an unknown command: %v", err)
	}
	if st, err := q.status(time.Second); st != "prelaunch" || err != nil {
		t.Errorf("status after an error %q, %v; want prelaunch", st, err)
	}
	if _, err := q.run("quit", nil, time.Second); err != nil {
		t.Errorf("quit: %v", err)
	}
	select {
	case <-q.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the socket stayed open after quit")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("QEMU after quit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("QEMU did not quit")
	}
}
