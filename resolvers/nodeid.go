package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
)

// EnrollNode translates; package nodeid checks nodes.admin and decides.
func (r *mutationResolver) EnrollNode(ctx context.Context, nodeName, clusterID string) (*model.NodeEnrollment, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	e, err := r.Services.NodeID.Enroll(ctx, c, nodeName, clusterID)
	if err != nil {
		return nil, err
	}
	return &model.NodeEnrollment{NodeName: e.NodeName, ClusterID: e.ClusterID, BootstrapToken: e.BootstrapToken, ExpiresAt: e.ExpiresAt}, nil
}
