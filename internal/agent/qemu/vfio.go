package qemu

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpugraph/internal/agent"
)

// vfioPCI is the kernel driver a passed-through function is bound to.
const vfioPCI = "vfio-pci"

// moved is a PCI function the runtime moved to vfio-pci itself (with
// Config.VFIORebind) from Driver ("" when it had none): recorded in the
// VM's state before it is moved, so that this agent or the next gives it
// back when the VM is gone.
type moved struct {
	Function string `json:"function"`
	Driver   string `json:"driver,omitempty"`
	GPU      string `json:"gpu,omitempty"` // the UUID of the GPU whose group it is in
}

// vfioDevices answers the PCI functions to pass through for the GPUs
// uuids: each GPU's whole IOMMU group (its audio function and the like),
// bridges left to the host, and those of them not bound to vfio-pci. A
// function bound to another driver (nvidia) is refused with a reason
// unless Config.VFIORebind lets the runtime move it (rebind); the node's
// operator otherwise binds GPUs to vfio-pci (README says how).
func (r *Runtime) vfioDevices(uuids []string) ([]string, []moved, error) {
	var out []string
	var move []moved
	seen := map[string]bool{}
	for _, u := range uuids {
		if r.cfg.GPUBusIDs == nil {
			return nil, nil, fmt.Errorf("GPU %s: this agent does not know its GPUs' PCI addresses", u)
		}
		raw, err := r.cfg.GPUBusIDs(u)
		if err != nil {
			// NVML does not see a GPU on vfio-pci: one a VM of this node
			// had is found by the address its state recorded.
			id, ok := r.recorded()[u]
			if !ok || id.Address == "" {
				return nil, nil, fmt.Errorf("GPU %s: %w", u, err)
			}
			raw = id.Address
		}
		bus, err := agent.NormalizeBusID(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %s: %w", u, err)
		}
		addr := strings.ToLower(bus)
		members, err := os.ReadDir(filepath.Join(r.devices(), addr, "iommu_group", "devices"))
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %s (%s) is in no IOMMU group: the host needs the IOMMU on (intel_iommu=on or amd_iommu=on) to pass it through", u, bus)
		}
		for _, m := range members {
			fn := m.Name()
			if seen[fn] {
				continue
			}
			class, _ := os.ReadFile(filepath.Join(r.devices(), fn, "class"))
			if strings.HasPrefix(strings.TrimSpace(string(class)), "0x0604") {
				continue // a PCI bridge stays with the host
			}
			driver := r.driverOf(fn)
			if driver != vfioPCI {
				if !r.cfg.VFIORebind {
					name := driver
					if name == "" {
						name = "no driver"
					}
					return nil, nil, fmt.Errorf("GPU %s (%s): %s in its IOMMU group is bound to %s, not vfio-pci; bind it to vfio-pci before a VM can have it", u, bus, fn, name)
				}
				move = append(move, moved{Function: fn, Driver: driver, GPU: u})
			}
			seen[fn] = true
			out = append(out, fn)
		}
	}
	return out, move, nil
}

func (r *Runtime) devices() string { return filepath.Join(r.cfg.SysfsRoot, "bus", "pci", "devices") }

// driverOf answers the driver PCI function fn is bound to, "" for none.
func (r *Runtime) driverOf(fn string) string {
	l, err := os.Readlink(filepath.Join(r.devices(), fn, "driver"))
	if err != nil {
		return ""
	}
	return filepath.Base(l)
}

// writeSysfs writes val to the sysfs attribute path, as echo does but
// without creating it: an attribute that is not there is an error.
func writeSysfs(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *Runtime) write(path, val string) error {
	if r.sysfsWrite != nil {
		return r.sysfsWrite(path, val)
	}
	return writeSysfs(path, val)
}

// toVFIO moves function m to vfio-pci the kernel's way: vfio-pci in its
// driver_override (so no other driver takes it meanwhile), its address
// to its driver's unbind, then to drivers_probe, which binds it to the
// driver its override names. A driver that keeps it, or a vfio-pci that
// does not take it (the module not loaded), is an error naming it.
func (r *Runtime) toVFIO(m moved) error {
	pci := filepath.Join(r.cfg.SysfsRoot, "bus", "pci")
	if err := r.write(filepath.Join(r.devices(), m.Function, "driver_override"), vfioPCI); err != nil {
		return fmt.Errorf("%s: set its driver_override to vfio-pci: %w", m.Function, err)
	}
	if m.Driver != "" {
		if err := r.write(filepath.Join(pci, "drivers", m.Driver, "unbind"), m.Function); err != nil {
			return fmt.Errorf("%s: %s will not let go of it: %w", m.Function, m.Driver, err)
		}
		if d := r.driverOf(m.Function); d != "" {
			return fmt.Errorf("%s: %s will not let go of it: still bound to %s after its unbind", m.Function, m.Driver, d)
		}
	}
	if err := r.write(filepath.Join(pci, "drivers_probe"), m.Function); err != nil {
		return fmt.Errorf("%s: drivers_probe: %w", m.Function, err)
	}
	if d := r.driverOf(m.Function); d != vfioPCI {
		if d == "" {
			d = "no driver"
		}
		return fmt.Errorf("%s: vfio-pci did not take it (now %s): is the vfio-pci module loaded?", m.Function, d)
	}
	return nil
}

// fromVFIO gives function m back to the host: its driver_override
// cleared, unbound from vfio-pci (only when vfio-pci has it: a function
// recorded but never moved is left where it is), then drivers_probe, so
// the host's driver takes it again. A function that does not come back to
// the driver it had is an error naming both.
func (r *Runtime) fromVFIO(m moved) error {
	pci := filepath.Join(r.cfg.SysfsRoot, "bus", "pci")
	var errs []error
	if err := r.write(filepath.Join(r.devices(), m.Function, "driver_override"), "\n"); err != nil {
		errs = append(errs, fmt.Errorf("clear its driver_override: %w", err))
	}
	if r.driverOf(m.Function) == vfioPCI {
		if err := r.write(filepath.Join(pci, "drivers", vfioPCI, "unbind"), m.Function); err != nil {
			errs = append(errs, fmt.Errorf("unbind it from vfio-pci: %w", err))
		}
	}
	if err := r.write(filepath.Join(pci, "drivers_probe"), m.Function); err != nil {
		errs = append(errs, fmt.Errorf("drivers_probe: %w", err))
	}
	if d := r.driverOf(m.Function); d != m.Driver {
		if d == "" {
			d = "no driver"
		}
		errs = append(errs, fmt.Errorf("bound to %s, not back to %s", d, cmp.Or(m.Driver, "no driver")))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", m.Function, err)
	}
	return nil
}

// rebind moves the functions of move to vfio-pci, in order, for VM id;
// its state already records them. On a refusal it gives back those it
// moved and answers the reason.
func (r *Runtime) rebind(id string, move []moved) error {
	for i, m := range move {
		if err := r.toVFIO(m); err != nil {
			r.giveBack(id, move[:i+1])
			return fmt.Errorf("moving a GPU's function to vfio-pci: %w", err)
		}
		r.cfg.Log.Info("moved to vfio-pci", "vm", id, "function", m.Function, "from", cmp.Or(m.Driver, "no driver"))
	}
	return nil
}

// giveBack gives the functions of ms back to the host, in reverse order
// (a GPU's audio function before the GPU), and logs any that did not come
// back: the operator's to look at, as the VM is gone either way.
func (r *Runtime) giveBack(id string, ms []moved) {
	for _, m := range slices.Backward(ms) {
		// Never taken from under another VM: one that booted on this
		// GPU while this VM's record was left (its QEMU gone while no
		// agent watched) keeps it on vfio-pci.
		other := ""
		if m.GPU != "" {
			other = r.sup.HeldBy(id, []string{m.GPU})
		}
		if other != "" {
			r.cfg.Log.Warn("a function moved to vfio-pci for a VM is left on vfio-pci: another VM holds its GPU", "vm", id, "function", m.Function, "other", other)
			continue
		}
		if err := r.fromVFIO(m); err != nil {
			r.cfg.Log.Error("a function moved to vfio-pci for a VM was not given back to the host", "vm", id, "err", err)
			continue
		}
		r.cfg.Log.Info("given back to the host", "vm", id, "function", m.Function, "driver", cmp.Or(m.Driver, "no driver"))
	}
}

// giveBackRecorded gives back what VM id's state records as moved, then
// drops the record; its QEMU is gone (or never started).
func (r *Runtime) giveBackRecorded(id string) {
	if !volumeID.MatchString(id) {
		return
	}
	v := &vm{dir: r.vmDir(id)}
	st := v.readState()
	if len(st.Moved) == 0 {
		return
	}
	r.giveBack(id, st.Moved)
	st.Moved = nil
	v.writeState(st)
}

// identities answers what GPUInfo answers of uuids, or, for one it does
// not know (NVML does not see a GPU on vfio-pci), what a VM's state
// recorded; a GPU known to neither is left out.
func (r *Runtime) identities(uuids []string) []agent.GPUIdentity {
	var out []agent.GPUIdentity
	var rec map[string]agent.GPUIdentity
	for _, u := range uuids {
		if r.cfg.GPUInfo != nil {
			if id, err := r.cfg.GPUInfo(u); err == nil {
				out = append(out, id)
				continue
			}
		}
		if rec == nil {
			rec = r.recorded()
		}
		if id, ok := rec[u]; ok {
			out = append(out, id)
		}
	}
	return out
}

// recorded answers the GPU identities the VMs' states under StateDir
// record, by UUID (the first VM's, in the order of their ids).
func (r *Runtime) recorded() map[string]agent.GPUIdentity {
	out := map[string]agent.GPUIdentity{}
	dirs, _ := os.ReadDir(filepath.Join(r.cfg.StateDir, "vms"))
	for _, d := range dirs {
		for _, id := range (&vm{dir: filepath.Join(r.cfg.StateDir, "vms", d.Name())}).readState().Identities {
			if _, ok := out[id.UUID]; !ok && id.UUID != "" {
				out[id.UUID] = id
			}
		}
	}
	return out
}

// The agent adds what PassedThroughGPUs answers to its inventory.
var _ agent.PassthroughRuntime = (*Runtime)(nil)

// PassedThroughGPUs implements agent.PassthroughRuntime: each GPU a VM
// of this node was booted with (its state records it) that is bound to
// vfio-pci now, as last known, by index. An NVIDIA GPU bound to vfio-pci
// that no VM's state names is not answered (the agent cannot know its
// UUID without NVML) but logged, naming its address: the node's operator
// starts the agent with its GPUs on nvidia (and --qemu-vfio-rebind) so
// that the agent learns them first.
func (r *Runtime) PassedThroughGPUs() []agent.GPUIdentity {
	if r.cfg.SimulatedGPUs {
		return nil
	}
	var out []agent.GPUIdentity
	named := map[string]bool{}
	for _, id := range r.recorded() {
		fn := strings.ToLower(id.Address)
		named[fn] = true
		if fn != "" && r.driverOf(fn) == vfioPCI {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b agent.GPUIdentity) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.UUID, b.UUID))
	})
	devs, _ := os.ReadDir(r.devices())
	for _, d := range devs {
		fn := d.Name()
		vendor, _ := os.ReadFile(filepath.Join(r.devices(), fn, "vendor"))
		class, _ := os.ReadFile(filepath.Join(r.devices(), fn, "class"))
		if strings.TrimSpace(string(vendor)) != "0x10de" || !strings.HasPrefix(strings.TrimSpace(string(class)), "0x03") ||
			named[fn] || r.driverOf(fn) != vfioPCI {
			continue
		}
		r.cfg.Log.Warn("an NVIDIA GPU bound to vfio-pci is not in the inventory: NVML does not see it and no VM of this node had it; "+
			"start the agent with it bound to nvidia (with --qemu-vfio-rebind) so that it is known", "address", fn)
	}
	return out
}
