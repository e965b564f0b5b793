package compute

import (
	"context"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// ConsoleBytes is how much of a VM's serial console the API keeps and
// answers: the last 64 KiB, as EC2's GetConsoleOutput.
const ConsoleBytes = agentapi.ConsoleBytes

// CodeConsoleNotFound answers a console asked of a pod: a container has
// no serial console.
const CodeConsoleNotFound = "CONSOLE_NOT_FOUND"

// Console is the tail of a VM's serial console as its node pushed it
// last; Output is empty and CapturedAt nil while nothing was captured.
type Console struct {
	VMID       string
	Output     []byte
	CapturedAt *time.Time
}

// ConsoleOf is the caller's VM id's console (GET /v1/vms/{id}/console):
// 404 VM_NOT_FOUND when the organization has no VM or pod by that id, 404
// CONSOLE_NOT_FOUND for a pod. The caller must hold compute.read.
func (s *Service) ConsoleOf(ctx context.Context, caller *auth.Caller, id string) (*Console, error) {
	vm, err := s.readOne(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if vm.IsPod() {
		return nil, podHasNoConsole(id)
	}
	got, err := s.store.ConsolesOf(ctx, caller.OrganizationID, []string{id})
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return &Console{VMID: id, Output: []byte{}}, nil
	}
	return ConsoleFrom(id, got[0]), nil
}

// ConsoleFrom is the console of VM id as the store keeps it (nil: none
// captured yet), for the faces' loaders.
func ConsoleFrom(id string, c *store.Console) *Console {
	if c == nil {
		return &Console{VMID: id, Output: []byte{}}
	}
	at := c.CapturedAt.UTC()
	return &Console{VMID: id, Output: c.Output, CapturedAt: &at}
}

// HasConsole says whether row vm has a serial console: a VM does, a pod
// (a container) does not.
func HasConsole(vm *models.VM) bool { return !vm.IsPod() }

func podHasNoConsole(id string) error {
	return apierr.NotFound(CodeConsoleNotFound, "%s is a pod (capabilityTier \"pod\"): a container has no serial console", id)
}
