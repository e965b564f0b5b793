package rest

import (
	"strings"
	"testing"

	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/services"
)

// Every route declares the API it belongs to, where it is listed: the
// gate answers its refusals in that face's shape. Run:ai's routes are
// those under /api/, OpenRelay's (the agents' and the admin paths
// included) the others.
func TestEveryRouteDeclaresItsFace(t *testing.T) {
	api := &API{Services: &services.Services{}}
	routes := api.routes()
	if len(routes) < 20 {
		t.Fatalf("%d routes", len(routes))
	}
	for _, r := range routes {
		_, path, _ := strings.Cut(r.pattern, " ")
		want := route.OpenRelay
		if strings.HasPrefix(path, "/api/") {
			want = route.Runai
		}
		if got := PolicyOf(r.handler).API; got != want {
			t.Errorf("%s declares face %q, want %q", r.pattern, got, want)
		}
	}
}
