package resolvers

import (
	"context"
	"strings"
	"time"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/models"
)

// The fleet operator's mutations: package fleet checks nodes.admin and
// decides; these translate.

func (r *mutationResolver) SetNodeLeavingAt(ctx context.Context, id string, leavingAt *time.Time) (*model.NodeChange, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := r.Services.Fleet.SetLeavingAt(ctx, c, id, leavingAt)
	if err != nil {
		return nil, err
	}
	return &model.NodeChange{Node: ch.Node, WorkloadsChanged: int(ch.Workloads)}, nil
}

func (r *mutationResolver) ReclaimNode(ctx context.Context, id string) (*model.NodeChange, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := r.Services.Fleet.Reclaim(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return &model.NodeChange{Node: ch.Node, WorkloadsChanged: int(ch.Workloads)}, nil
}

func (r *mutationResolver) SetOrganizationState(ctx context.Context, id string, state model.OrganizationState) (*model.OrganizationChange, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := r.Services.Fleet.SetOrganizationState(ctx, c, id, models.OrgState(strings.ToLower(string(state))))
	if err != nil {
		return nil, err
	}
	return &model.OrganizationChange{ID: ch.Organization.ID,
		State: model.OrganizationState(strings.ToUpper(string(ch.Organization.State))), WorkloadsStopped: int(ch.Stopped)}, nil
}
