package nodes

import (
	"context"

	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// CodeConsoleVMNotOnNode refuses a console pushed for a VM that is not
// this node's: no such VM, a pod, or a VM whose disk is on another node.
const CodeConsoleVMNotOnNode = "VM_NOT_ON_NODE"

// PutConsole keeps output as VM vmID's serial console, pushed by its
// node's agent (PUT /v1/agent/vms/{id}/console): the last
// compute.ConsoleBytes of it replace what was kept, so a tenant reads the
// same on every replica. Only a node credential pushes, and only for a VM
// whose row is on its node (the node that holds its disk: a stopped VM's
// last lines still come from there); anything else answers 404
// VM_NOT_ON_NODE, the same whether the VM is another node's, a pod or
// missing, so a node learns nothing of others' workloads. An API key
// (legacy mode) is refused: it names no node.
func (s *Service) PutConsole(ctx context.Context, who Reporter, vmID string, output []byte) error {
	if err := s.MayReport(who); err != nil {
		return err
	}
	if who.Node == nil {
		return apierr.Refused(CodeNodeCredentialRequired, "a console is pushed with a node credential only: %s", howToGetACredential)
	}
	if vmID == "" || len(vmID) > maxTextLen || !printable(vmID) || containsSpace(vmID) {
		return apierr.BadRequest("the VM id must be 1 to %d bytes of printable text without spaces", maxTextLen)
	}
	if len(output) > compute.ConsoleBytes {
		output = output[len(output)-compute.ConsoleBytes:]
	}
	// The check and the write in one transaction, the row unlocked: a
	// move committed between them lets the old node write the VM's
	// console once more, which the new node's first push replaces.
	return s.store.InTx(ctx, func(tx *store.Txn) error {
		p, err := s.store.VMPlacementOf(tx, vmID)
		if err != nil {
			return err
		}
		if p == nil || p.CapabilityTier == models.TierPod || p.NodeName != who.Node.NodeName || p.ClusterID != who.Node.ClusterID {
			return apierr.NotFound(CodeConsoleVMNotOnNode, "there is no VM %s on node %s", vmID, who.Node.NodeName)
		}
		return s.store.PutConsole(tx, vmID, p.NodeID, output, store.Now())
	})
}
