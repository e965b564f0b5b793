package compute

import (
	"context"
	"fmt"
	"log/slog"

	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// resubmitActor is who re-submits: the platform itself, not a user.
var resubmitActor = models.Actor{Kind: models.ActorPlatform}

// Resubmitted says what Resubmit did.
type Resubmitted struct {
	// Deployed: the pod is deploying again on its node (models.PodResubmit).
	Deployed bool
	// Reason is placement's sentence when it stays interrupted; "" when it
	// was re-submitted or no longer needed it.
	Reason string
}

// Resubmit re-submits pod id of organization orgID, which lost its job on
// a live node (models.PodJobLost): back to deploying on its node, on the
// GPUs it kept, when it still fits there — its node online and every GPU
// it holds healthy, as a resumed restart requires. Otherwise it stays
// interrupted and placement's reason is logged; the 7-day expiry or its
// owner's restart takes it from there. A pod that is no longer interrupted
// with that reason (its owner acted first) is left alone.
func (s *Service) Resubmit(ctx context.Context, orgID, id string) (Resubmitted, error) {
	var out Resubmitted
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		out = Resubmitted{}
		r := &restart{st: s.store, tx: tx, fw: placement.Default(), now: store.Now(), actor: resubmitActor}
		vm, err := r.st.LockVM(tx, orgID, id)
		if err != nil || vm == nil || !models.Step(models.PodResubmit).Allows(vm) {
			return err
		}
		r.vm = vm
		if err := r.request(orgID); err != nil {
			return err
		}
		var own *models.Node
		if vm.NodeID != nil {
			if own, err = r.st.Node(tx, *vm.NodeID); err != nil {
				return err
			}
		}
		if own == nil {
			out.Reason = fmt.Sprintf("pod %s has no node to be re-submitted on", vm.ID)
			return nil
		}
		if err := r.st.LockNode(tx, own); err != nil {
			return err
		}
		info, err := r.ownNode(own, false)
		if err != nil {
			return err
		}
		st := (placement.NodeOnline{}).Filter(r.req, info)
		if st == nil {
			st = placement.CheckRunning(r.req, info)
		}
		if st != nil {
			out.Reason = st.Message
			return nil
		}
		if _, err := r.finish(models.PodResubmit, nil); err != nil {
			return err
		}
		out.Deployed = true
		return nil
	})
	if err == nil && out.Reason != "" {
		slog.WarnContext(ctx, "pod lost its job and stays interrupted: it does not fit on its node", "pod", id, "reason", out.Reason)
	}
	return out, err
}
