package instancetypes

import (
	"context"
	"errors"
	"slices"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Service is the instance type catalog for both faces.
type Service struct{ store *store.Store }

// New is the catalog's service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// The codes the catalog answers besides the generic ones.
const (
	CodeNotFound = "INSTANCE_TYPE_NOT_FOUND"
	CodeFull     = "INSTANCE_TYPES_FULL"
)

// MaxTypes bounds the catalog an operator builds: every read of it with
// its capacity weighs each type against every node.
const MaxTypes = 1000

// MayRead is what a read needs: any authenticated caller, of whatever
// permissions, as Lambda Cloud's instance-types answers any API key (the
// catalog and its prices are what a user chooses from before anything
// else).
func (s *Service) MayRead(caller *auth.Caller) error {
	if caller == nil {
		return auth.MissingKey()
	}
	return nil
}

// MayAdminister is what a write needs: nodes.admin, the fleet operator's.
// A face that reads a body first asks it first, so that 401 and 403 answer
// before 400.
func (s *Service) MayAdminister(caller *auth.Caller) error { return caller.Require(auth.NodesAdmin) }

// Get answers the type name.
func (s *Service) Get(ctx context.Context, caller *auth.Caller, name string) (models.InstanceType, error) {
	if err := s.MayRead(caller); err != nil {
		return models.InstanceType{}, err
	}
	if p := models.InstanceTypeNameProblem(name); p != "" {
		// A name no type can have names none: 404, as for an unknown one.
		return models.InstanceType{}, notFound(name)
	}
	t, err := s.store.InstanceType(ctx, name)
	if errors.Is(err, store.ErrNoInstanceType) {
		return t, notFound(name)
	}
	return t, err
}

// List answers the catalog by name.
func (s *Service) List(ctx context.Context, caller *auth.Caller) ([]models.InstanceType, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, err
	}
	return s.store.InstanceTypes(ctx)
}

// Put writes t, replacing the type of its name, and reports whether it is
// new. A bad field answers 400 naming it; a GPU model the catalog lacks is
// a bad gpuModelId (400), since it is a field of the request.
func (s *Service) Put(ctx context.Context, caller *auth.Caller, t models.InstanceType) (models.InstanceType, bool, error) {
	if err := s.MayAdminister(caller); err != nil {
		return t, false, err
	}
	if p := t.Problem(); p != "" {
		return t, false, apierr.BadRequest("%s", p)
	}
	all, err := s.store.InstanceTypes(ctx)
	if err != nil {
		return t, false, err
	}
	if len(all) >= MaxTypes && !slices.ContainsFunc(all, func(o models.InstanceType) bool { return o.Name == t.Name }) {
		return t, false, apierr.Conflict(CodeFull, "the catalog holds %d instance types, the most it may; delete one first", len(all))
	}
	created, err := s.store.PutInstanceType(ctx, t)
	if errors.Is(err, store.ErrNoGPUModel) {
		return t, false, apierr.BadRequest("gpuModelId %q is not a GPU model of the catalog", *t.GPUModelID)
	}
	return t, created, err
}

// Delete deletes the type name. VMs created from it keep what they were
// given (their price included).
func (s *Service) Delete(ctx context.Context, caller *auth.Caller, name string) error {
	if err := s.MayAdminister(caller); err != nil {
		return err
	}
	if models.InstanceTypeNameProblem(name) != "" {
		return notFound(name)
	}
	err := s.store.DeleteInstanceType(ctx, name)
	if errors.Is(err, store.ErrNoInstanceType) {
		return notFound(name)
	}
	return err
}

// notFound names the type asked for; a name no type could have is cut to
// what a name may be long, so the answer never echoes a long path back.
func notFound(name string) error {
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "") + "…"
	}
	return apierr.NotFound(CodeNotFound, "there is no instance type %q", name)
}
