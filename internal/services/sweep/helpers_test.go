package sweep_test

import (
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/services/nodes"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func vm(t *testing.T, st *store.Store, id string) models.VM {
	t.Helper()
	var v models.VM
	storetest.Take(t, st, &v, "vms", "id = ?", id)
	return v
}

// reports takes node agents' reports over st, in the legacy mode, so that
// reporter (a key holding nodes.report) may report any node.
func reports(st *store.Store) *nodes.Service {
	return nodes.New(st, compute.New(st), nodeid.New(st), nodes.Options{KeysAccepted: true})
}

var reporter = nodes.Reporter{Caller: auth.SystemCaller()}
