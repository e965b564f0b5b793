package compute

import (
	"context"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// vmCursors names the VM list in its cursors.
const vmCursors = "vms"

// CursorQuery is a cursor page of the VM list.
type CursorQuery struct {
	Statuses []models.VMStatus
	First    *int
	After    *string
	Total    bool
}

// Connection is a cursor page of the caller's VMs and pods, newest first
// as List orders them, after q.After. The caller must hold compute.read.
func (s *Service) Connection(ctx context.Context, caller *auth.Caller, q CursorQuery) (*paging.Connection[models.VM], error) {
	if err := s.MayRead(caller); err != nil {
		return nil, err
	}
	page, err := paging.ParseCursor(vmCursors, 1, q.First, q.After)
	if err != nil {
		return nil, err
	}
	var after *store.After
	if page.After != nil {
		var v any
		if t := page.After.Sort[0]; t != nil {
			at, err := time.Parse(time.RFC3339Nano, *t)
			if err != nil {
				return nil, apierr.BadRequest("after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
			}
			v = at.UTC()
		}
		after = &store.After{Values: []any{v}, ID: page.After.ID}
	}
	rows, more, total, err := s.store.VMsAfter(ctx, caller.OrganizationID, q.Statuses, after, page.First, q.Total)
	if err != nil {
		return nil, err
	}
	return paging.NewConnection(vmCursors, page, rows, more, total, func(v *models.VM) paging.Key {
		var at *string
		if v.CreatedAt != nil {
			s := v.CreatedAt.UTC().Format(time.RFC3339Nano)
			at = &s
		}
		return paging.Key{Sort: []*string{at}, ID: v.ID}
	}), nil
}
