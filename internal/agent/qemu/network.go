package qemu

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Networks a VM's NIC is on (Config.Net).
const (
	// NetUser is QEMU's user-mode networking: the guest reaches out
	// through QEMU (NAT), and the guest's SSH port 22 is forwarded from a
	// free port of the host (Config.ForwardAddr), which the VM's endpoint
	// names. Needs nothing on the host.
	NetUser = "user"
	// NetBridge puts the NIC on a tap device QEMU's bridge helper adds to
	// Config.Bridge (a production node's bridge, with its own DHCP and
	// routing): the guest has an address of that network, which the
	// runtime does not know, so it reports no endpoint.
	NetBridge = "bridge"
)

// GuestSSHPort is the guest port user-mode networking forwards to.
const GuestSSHPort = 22

// netArgs are QEMU's arguments for s's NIC: one virtio-net device with a
// MAC of its own (the same across its boots, so a bridge's DHCP keeps its
// address), on user-mode networking forwarding port to the guest's SSH,
// or on the bridge.
func (r *Runtime) netArgs(s Spec, port int) []string {
	var netdev string
	switch r.cfg.Net {
	case NetBridge:
		netdev = "bridge,id=net0,br=" + r.cfg.Bridge
	default:
		netdev = fmt.Sprintf("user,id=net0,hostfwd=tcp:%s:%d-:%d", r.cfg.ForwardAddr, port, GuestSSHPort)
	}
	return []string{"-netdev", netdev, "-device", "virtio-net-pci,netdev=net0,mac=" + macOf(s.ID)}
}

// macOf answers a locally administered MAC for VM id in QEMU's own prefix.
func macOf(id string) string {
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", h[0], h[1], h[2])
}

// forwardPort answers the host port to forward to VM id's SSH: the one
// it had before when it is free (its endpoint stays the same across a
// stop and start), else one the kernel picks; never one this runtime
// gave another VM (whose QEMU may not have bound it yet). 0 with bridged
// networking. The port is free when chosen; another process may take it
// before QEMU binds it, which fails the start (QEMU says so in its last
// line).
func (r *Runtime) forwardPort(id string, before int) (int, error) {
	if r.cfg.Net == NetBridge {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	taken := func(p int) bool {
		for other, q := range r.ports {
			if other != id && q == p {
				return true
			}
		}
		return false
	}
	if before > 0 && !taken(before) {
		if l, err := net.Listen("tcp", net.JoinHostPort(r.cfg.ForwardAddr, strconv.Itoa(before))); err == nil {
			l.Close()
			r.ports[id] = before
			return before, nil
		}
	}
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(r.cfg.ForwardAddr, "0"))
		if err != nil {
			return 0, fmt.Errorf("a host port to forward to the guest's SSH: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !taken(p) {
			r.ports[id] = p
			return p, nil
		}
	}
	return 0, errors.New("a host port to forward to the guest's SSH: the kernel kept offering ports given to other VMs")
}

// endpoint answers the URL where a VM forwarded on port answers, "" for
// none (bridged).
func (r *Runtime) endpoint(port int) string {
	if port == 0 {
		return ""
	}
	return "ssh://" + net.JoinHostPort(r.cfg.EndpointHost, strconv.Itoa(port))
}

// Seeds. A VM gets its SSH keys, instance id and hostname as every cloud
// image expects them: a cloud-init NoCloud seed, a disk labelled cidata
// with meta-data and user-data. The files are written to the VM's seed/
// directory before each boot and QEMU presents that directory as a
// read-only FAT disk (its vvfat driver), so the node needs no image tool.

// SeedLabel is the seed disk's volume label NoCloud looks for.
const SeedLabel = "cidata"

// writeSeed writes s's NoCloud seed into dir/seed and answers that
// directory. The instance id is the VM id and its volume id: the same
// across reboots and stop/start on this node's disk (cloud-init runs its
// once-per-instance steps, host keys among them, once), new after a move
// to a fresh disk.
func writeSeed(dir string, s Spec) (string, error) {
	seed := filepath.Join(dir, "seed")
	if err := os.RemoveAll(seed); err != nil {
		return "", err
	}
	if err := os.MkdirAll(seed, 0o700); err != nil {
		return "", err
	}
	vol := s.Volume.ID
	if vol == "" {
		vol = s.ID
	}
	// JSON strings are YAML's double-quoted scalars: a key's comment may
	// hold anything YAML would otherwise read.
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	meta := "instance-id: " + q(s.ID+"-"+vol) + "\nlocal-hostname: " + q(hostname(s)) + "\n"
	var user strings.Builder
	user.WriteString("#cloud-config\n")
	if len(s.SSHPublicKeys) > 0 {
		user.WriteString("ssh_authorized_keys:\n")
		for _, k := range s.SSHPublicKeys {
			user.WriteString("  - " + q(strings.TrimSpace(k)) + "\n")
		}
	}
	for name, body := range map[string]string{"meta-data": meta, "user-data": user.String()} {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(body), 0o600); err != nil {
			return "", err
		}
	}
	return seed, nil
}

// hostname answers s's guest hostname: its id made a DNS label (the
// assignment carries no name).
func hostname(s Spec) string {
	h := strings.ToLower(s.ID)
	var b strings.Builder
	for _, c := range h {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	if out == "" {
		return "vm"
	}
	return out
}

// seedArgs are QEMU's arguments for the seed directory: a read-only FAT
// disk labelled cidata on virtio, after the VM's own disk.
func seedArgs(seed string) []string {
	return []string{
		"-drive", "if=none,id=seed,driver=vvfat,dir=" + strings.ReplaceAll(seed, ",", ",,") + ",label=" + SeedLabel + ",read-only=on",
		"-device", "virtio-blk-pci,drive=seed,id=vdb",
	}
}
