package store

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"gpugraph/models"
)

// TenantPodRow reads a pod of the tenant under the workload, or nil when
// there is none (missing, under another workload, or another tenant's).
// A remote metrics source matches the pod by its name, project, cluster
// and node.
func (s *Store) TenantPodRow(ctx context.Context, tenantID int, workloadID, podID string) (*models.Pod, error) {
	var p models.Pod
	err := s.WithContext(ctx).Where("id = ? AND workload_id = ? AND tenant_id = ?", podID, workloadID, tenantID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}
