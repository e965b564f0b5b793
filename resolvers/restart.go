package resolvers

import (
	"context"

	"gpugraph/models"
)

func (r *mutationResolver) RestartVM(ctx context.Context, id string) (*models.VM, error) {
	return nil, errNotYet
}
