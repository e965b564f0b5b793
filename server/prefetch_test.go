package server_test

import (
	"testing"
	"time"

	"gpugraph/server"
	"gpugraph/server/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// Lists prefetch the levels their query selects, so each level is one
// statement even when the loaders' batch wait is too short to gather
// anything: the count does not depend on timing.
func TestListsPrefetchEachLevelInOneStatement(t *testing.T) {
	noWait := server.Config{LoaderWait: time.Nanosecond}
	cases := []struct {
		name, token, query string
		want               int64
	}{
		// key lookup + nodes + gpus + models + vms + vm gpus
		{"nodes", "fleet-reader", `{ nodes { name gpus { index model { name } } vms { id gpuIds gpus { address } } } }`, 6},
		// key lookup + count + page + vm gpus + models + nodes + node gpus + their models (again: another level)
		{"vms", "fleet-reader", `{ vms(limit: 500) { total vms { gpuModel { name } gpus { address } node { name gpus { model { name } } } } } }`, 8},
		// a GPU's holder and its node walk back up: one statement a level
		{"gpu vm and node", "fleet-reader", `{ nodes { gpus { vm { id node { name } } node { name } } } }`, 6},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		for _, n := range []int{5, 50} {
			env := servertest.NewWithConfig(t, storetest.Open(t, st.Dialect), fleet(n), noWait)
			for _, c := range cases {
				var r *servertest.Response
				got := env.Statements(func() { r = env.GraphQL(c.token, c.query, nil) })
				if len(r.Errors) > 0 {
					t.Fatalf("%s: %+v", c.name, r.Errors)
				}
				if got != c.want {
					t.Errorf("%s over %d nodes: %d statements, want %d", c.name, n, got, c.want)
				}
			}
		}
	})
}
