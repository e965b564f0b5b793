package store

import (
	"context"

	"gpugraph/models"
)

// EventsOfVMs reads the whole event log of the organization's VMs vmIDs,
// by VM and oldest first: one statement for a page of VMs (GraphQL's
// VM.events, which pages each VM's log in Go).
func (s *Store) EventsOfVMs(ctx context.Context, orgID string, vmIDs []string) ([]*models.VMEvent, error) {
	out := []*models.VMEvent{}
	for _, part := range chunks(vmIDs, 500) {
		var rows []*models.VMEvent
		if err := s.WithContext(ctx).Where("organization_id = ? AND vm_id IN ?", orgID, part).
			Order("vm_id, id").Find(&rows).Error; err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
