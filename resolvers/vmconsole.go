package resolvers

import (
	"context"
	"encoding/base64"
	"strings"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// Console is the VM's serial console as its node pushed it last, read for
// every VM of a level in one statement (loaders.ConsoleByVM, scoped to the
// caller's organization); the row came through the caller's loaders, so
// it is the caller's. A pod has none: null, without a read. GraphQL
// strings are UTF-8, so the bytes come base64 (output) and as text with
// invalid sequences replaced (text).
func (r *vmResolver) Console(ctx context.Context, v *models.VM) (*model.VMConsole, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.svc.Compute.MayRead(c); err != nil {
		return nil, err
	}
	if !compute.HasConsole(v) {
		return nil, nil
	}
	l, err := requestLoaders(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := l.ConsoleByVM.Load(ctx, v.ID)()
	if err != nil {
		return nil, err
	}
	con := compute.ConsoleFrom(v.ID, stored)
	return &model.VMConsole{Output: base64.StdEncoding.EncodeToString(con.Output), Text: strings.ToValidUTF8(string(con.Output), "\uFFFD"),
		Bytes: len(con.Output), CapturedAt: con.CapturedAt}, nil
}
