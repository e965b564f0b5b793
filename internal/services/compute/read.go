package compute

import (
	"context"
	"slices"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The reads of VMs and pods for both faces: the caller's organization's
// rows only (another organization's row does not exist for it), newest
// first. The store's VM reads leave out rows deleted from the API.

// ListQuery is a validated list request.
type ListQuery struct {
	Statuses []models.VMStatus // none: every status
	Page     paging.Page
	// Count asks for the total; without it the total answered only says
	// whether a next page follows (Page.Next reads it right either way).
	Count bool
	// Columns are the columns the page's rows need (nil: every column).
	Columns store.Columns
}

// ParseStatuses reads status words as a REST client sends them, repeated or
// comma-joined, in lower case; an unknown or empty word is a 400 naming it.
func ParseStatuses(values []string) ([]models.VMStatus, error) {
	var out []models.VMStatus
	for _, v := range values {
		for w := range strings.SplitSeq(v, ",") {
			s := models.VMStatus(strings.TrimSpace(w))
			if !s.Valid() {
				return nil, apierr.BadRequest("invalid status %q: must be one of %s", w, statusWords())
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func statusWords() string {
	words := make([]string, len(models.VMStatuses))
	for i, s := range models.VMStatuses {
		words[i] = string(s)
	}
	return strings.Join(words, ", ")
}

// List is a page of the caller's VMs and pods, newest first, and how many
// there are in all. The caller must hold compute.read.
func (s *Service) List(ctx context.Context, caller *auth.Caller, q ListQuery) ([]*models.VM, int64, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, 0, err
	}
	return s.store.VMPage(ctx, caller.OrganizationID, q.Statuses, q.Page.Offset, q.Page.Limit, q.Count, q.Columns)
}

// Get reads the caller's VM or pod id with its GPUs and model, as a
// restart answers it; 404 VM_NOT_FOUND when the organization has none by
// that id.
func (s *Service) Get(ctx context.Context, caller *auth.Caller, id string) (*Result, error) {
	vm, err := s.readOne(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	res, err := s.Details(ctx, []*models.VM{vm})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// readOne reads the caller's VM or pod id (compute.read): 404
// VM_NOT_FOUND when the organization has none by that id, as another
// organization's does not exist for it.
func (s *Service) readOne(ctx context.Context, caller *auth.Caller, id string) (*models.VM, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, err
	}
	vms, err := s.store.VMsByIDs(ctx, caller.OrganizationID, []string{id}, nil)
	if err != nil {
		return nil, err
	}
	if len(vms) == 0 {
		return nil, notFound(id)
	}
	return vms[0], nil
}

// Details reads the GPUs and models of vms, two statements whatever their
// number, and answers one Result per VM in vms' order.
func (s *Service) Details(ctx context.Context, vms []*models.VM) ([]*Result, error) {
	ids := make([]string, 0, len(vms))
	var modelIDs []string
	for _, v := range vms {
		ids = append(ids, v.ID)
		if v.GPUModelID != nil && !slices.Contains(modelIDs, *v.GPUModelID) {
			modelIDs = append(modelIDs, *v.GPUModelID)
		}
	}
	out := make([]*Result, len(vms))
	if len(vms) == 0 {
		return out, nil
	}
	gpus, err := s.store.GPUsByHolders(ctx, ids, nil)
	if err != nil {
		return nil, err
	}
	byVM := map[string][]*models.GPU{}
	for _, g := range gpus {
		byVM[*g.HolderVMID] = append(byVM[*g.HolderVMID], g)
	}
	byID := map[string]*models.GPUModel{}
	if len(modelIDs) > 0 {
		ms, err := s.store.GPUModelsByIDs(ctx, modelIDs)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			byID[m.ID] = m
		}
	}
	for i, v := range vms {
		r := &Result{VM: v, GPUs: byVM[v.ID]}
		if r.GPUs == nil {
			r.GPUs = []*models.GPU{}
		}
		if v.GPUModelID != nil {
			r.Model = byID[*v.GPUModelID]
		}
		out[i] = r
	}
	return out, nil
}

// EventQuery pages a VM's event log: the events after the event id After
// (0: from the first), oldest first, at most Limit.
type EventQuery struct {
	After int64
	Limit int
}

// ParseEventQuery checks after ≥ 0 and limit in 1–500 (default 50); nil
// means the default.
func ParseEventQuery(after *int64, limit *int) (EventQuery, error) {
	q := EventQuery{Limit: paging.DefaultLimit}
	if after != nil {
		if *after < 0 {
			return q, apierr.BadRequest("after must be an event id (0 or more), got %d", *after)
		}
		q.After = *after
	}
	if limit != nil {
		if *limit < 1 || *limit > paging.MaxLimit {
			return q, apierr.BadRequest("limit must be between 1 and %d, got %d", paging.MaxLimit, *limit)
		}
		q.Limit = *limit
	}
	return q, nil
}

// EventPage reads a page of the event log of the caller's VM or pod id,
// and whether more events follow it: 404 VM_NOT_FOUND when the
// organization has none by that id. The caller must hold compute.read.
func (s *Service) EventPage(ctx context.Context, caller *auth.Caller, id string, q EventQuery) ([]*models.VMEvent, bool, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, false, err
	}
	vms, err := s.store.VMsByIDs(ctx, caller.OrganizationID, []string{id}, nil)
	if err != nil {
		return nil, false, err
	}
	if len(vms) == 0 {
		return nil, false, notFound(id)
	}
	events, err := s.store.EventsAfter(ctx, caller.OrganizationID, []string{id}, q.After, q.Limit+1)
	if err != nil {
		return nil, false, err
	}
	if len(events) > q.Limit {
		return events[:q.Limit], true, nil
	}
	return events, false, nil
}

// MayRead is the permission every read of VMs and pods needs:
// compute.read. Each read checks it first; a face that reads parameters of
// its own before calling one asks it first, so that a refusal answers
// before a bad parameter does.
func (s *Service) MayRead(caller *auth.Caller) error { return caller.Require(auth.ComputeRead) }

// MayOperate is the permission restart, stop and terminate need:
// compute.operate. Each checks it first; a face asks it first as it asks
// MayRead.
func (s *Service) MayOperate(caller *auth.Caller) error { return caller.Require(auth.ComputeOperate) }
