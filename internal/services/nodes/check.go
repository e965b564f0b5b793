package nodes

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/mod/semver"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/apierr"
	"gpugraph/models"
)

// Limits on a report, far above any real node.
const (
	maxReportGPUs = 128
	maxNameLen    = 253 // a Kubernetes node name
	maxTextLen    = 256
)

// checkInventory checks an inventory and turns it into the shape the
// service files; the first bad field answers a 400 naming it.
func checkInventory(in agentapi.InventoryRequest) (inventory, error) {
	if err := checkNode(in.NodeName, in.AgentVersion, true); err != nil {
		return inventory{}, err
	}
	switch {
	case len(in.ClusterID) > maxNameLen:
		return inventory{}, apierr.BadRequest("clusterId is longer than %d bytes", maxNameLen)
	case !printable(in.ClusterID):
		return inventory{}, apierr.BadRequest("clusterId must be printable text")
	case in.CPUCores < 0 || in.RAMGb < 0 || in.DiskGb < 0:
		return inventory{}, apierr.BadRequest("cpuCores, ramGb and diskGb must not be negative")
	case in.CPUCores > math.MaxInt32:
		return inventory{}, apierr.BadRequest("cpuCores must be at most %d, got %d", math.MaxInt32, in.CPUCores)
	case in.RAMGb > math.MaxInt32:
		return inventory{}, apierr.BadRequest("ramGb must be at most %d, got %d", math.MaxInt32, in.RAMGb)
	case in.DiskGb > math.MaxInt32:
		return inventory{}, apierr.BadRequest("diskGb must be at most %d, got %d", math.MaxInt32, in.DiskGb)
	case len(in.GPUs) > maxReportGPUs:
		return inventory{}, apierr.BadRequest("gpus lists %d GPUs, more than %d", len(in.GPUs), maxReportGPUs)
	}
	inv := inventory{NodeName: in.NodeName, ClusterID: in.ClusterID, AgentVersion: in.AgentVersion,
		CPUCores: in.CPUCores, RAMGb: in.RAMGb, DiskGb: in.DiskGb, GPUs: make([]inventoryGPU, len(in.GPUs))}
	uuids := map[string]int{}
	indexes := map[int]int{}
	for i, g := range in.GPUs {
		field := fmt.Sprintf("gpus[%d]", i)
		health, err := checkGPU(field, g.UUID, g.Health, g.FailedReason, uuids, i)
		if err != nil {
			return inventory{}, err
		}
		switch j, dup := indexes[g.Index]; {
		case g.Index < 0:
			return inventory{}, apierr.BadRequest("%s.index must not be negative", field)
		case g.Index > math.MaxInt32:
			return inventory{}, apierr.BadRequest("%s.index must be at most %d, got %d", field, math.MaxInt32, g.Index)
		case g.MemoryBytes > math.MaxInt64:
			return inventory{}, apierr.BadRequest("%s.memoryBytes is out of range", field)
		case dup:
			return inventory{}, apierr.BadRequest("%s.index %d is also the index of gpus[%d]", field, g.Index, j)
		case g.Address != "" && !busID.MatchString(g.Address):
			return inventory{}, apierr.BadRequest("%s.address %q is not a PCI bus id such as 0000:3B:00.0", field, g.Address)
		case len(g.Name) > maxTextLen || !printable(g.Name):
			return inventory{}, apierr.BadRequest("%s.name must be printable text of at most %d bytes", field, maxTextLen)
		}
		indexes[g.Index] = i
		inv.GPUs[i] = inventoryGPU{Index: g.Index, UUID: g.UUID, Address: g.Address, Name: g.Name,
			MemoryBytes: g.MemoryBytes, Health: health, FailedReason: reasonIf(health, g.FailedReason)}
	}
	return inv, nil
}

// checkHeartbeat checks a heartbeat as checkInventory checks an
// inventory.
func checkHeartbeat(in agentapi.HeartbeatRequest) (heartbeat, error) {
	if err := checkNode(in.NodeName, in.AgentVersion, false); err != nil {
		return heartbeat{}, err
	}
	if len(in.GPUs) > maxReportGPUs {
		return heartbeat{}, apierr.BadRequest("gpus lists %d GPUs, more than %d", len(in.GPUs), maxReportGPUs)
	}
	var err error
	hb := heartbeat{NodeName: in.NodeName, AgentVersion: in.AgentVersion, GPUs: make([]heartbeatGPU, len(in.GPUs))}
	uuids := map[string]int{}
	for i, g := range in.GPUs {
		field := fmt.Sprintf("gpus[%d]", i)
		health, gerr := checkGPU(field, g.UUID, g.Health, g.FailedReason, uuids, i)
		if gerr != nil {
			return heartbeat{}, gerr
		}
		switch {
		case g.Utilization < 0 || g.Utilization > 100:
			return heartbeat{}, apierr.BadRequest("%s.utilization %d is not a percentage (0 to 100)", field, g.Utilization)
		case g.MemoryUsedBytes > math.MaxInt64:
			return heartbeat{}, apierr.BadRequest("%s.memoryUsedBytes is out of range", field)
		}
		hb.GPUs[i] = heartbeatGPU{UUID: g.UUID, Health: health, FailedReason: reasonIf(health, g.FailedReason),
			Utilization: g.Utilization, MemoryUsedBytes: int64(g.MemoryUsedBytes)}
	}
	if hb.Workloads, err = checkWorkloads(in.Workloads); err != nil {
		return heartbeat{}, err
	}
	return hb, nil
}

// fullSemver reports a semantic version written in full: MAJOR.MINOR.PATCH
// with an optional pre-release and build, an optional leading "v", valid
// as golang.org/x/mod/semver reads it (the placement's ordering of agent
// versions reads them the same way, so every version the server accepts
// is one it can rank). semver's shorthands ("2.6" for 2.6.0) are refused:
// an agent states its version in full.
func fullSemver(v string) bool {
	sv := "v" + strings.TrimPrefix(v, "v")
	withoutBuild, _, _ := strings.Cut(sv, "+")
	return semver.IsValid(sv) && semver.Canonical(sv) == withoutBuild
}

// busID is the agent's normalised PCI address: 0000:3B:00.0 (a domain
// wider than four digits keeps its digits).
var busID = regexp.MustCompile(`^[0-9A-F]{4,8}:[0-9A-F]{2}:[01][0-9A-F]\.[0-7]$`)

func checkNode(name, version string, versionRequired bool) error {
	switch {
	case name == "":
		return apierr.BadRequest("nodeName is missing")
	case len(name) > maxNameLen || !printable(name) || containsSpace(name):
		return apierr.BadRequest("nodeName %q must be at most %d bytes of printable text without spaces", name, maxNameLen)
	case version == "" && versionRequired:
		return apierr.BadRequest("agentVersion is missing")
	case version != "" && (len(version) > 64 || !fullSemver(version)):
		return apierr.BadRequest("agentVersion %q is not a semantic version such as 2.6.1", version)
	}
	return nil
}

func checkGPU(field, uuid, health, reason string, seen map[string]int, i int) (models.GPUHealth, error) {
	h := models.GPUHealth(health)
	switch j, dup := seen[uuid]; {
	case uuid == "":
		return "", apierr.BadRequest("%s.uuid is missing", field)
	case len(uuid) > maxTextLen || !printable(uuid) || containsSpace(uuid):
		return "", apierr.BadRequest("%s.uuid must be at most %d bytes of printable text without spaces", field, maxTextLen)
	case dup:
		return "", apierr.BadRequest("%s.uuid %s is also the uuid of gpus[%d]", field, uuid, j)
	case !h.Valid():
		return "", apierr.BadRequest("%s.health %q is not healthy or failed", field, health)
	case len(reason) > maxTextLen || !printable(reason):
		return "", apierr.BadRequest("%s.failedReason must be printable text of at most %d bytes", field, maxTextLen)
	}
	seen[uuid] = i
	return h, nil
}

// reasonIf keeps a failed reason only with a failed health.
func reasonIf(h models.GPUHealth, reason string) string {
	if h != models.GPUFailed {
		return ""
	}
	return reason
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func containsSpace(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) {
			return true
		}
	}
	return false
}
