package nodeid_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/store/storetest"
)

// A heartbeat over HTTP with an API key (the legacy mode's path: one
// lookup more, whether the node has a credential) and with a node
// credential (its lookup instead of the key's, and the sequence's
// conditional UPDATE).
func BenchmarkReportIdentity(b *testing.B) {
	for _, d := range storetest.Engines() {
		b.Run(string(d), func(b *testing.B) {
			env := servertest.NewWithOptions(b, storetest.Open(b, d), servertest.IdentityFixture, servertest.Options{Services: services.Config{NodeReportKeys: true}}, servertest.Config{})
			s, body := env.Do(http.MethodPost, "/v1/admin/nodes/enroll", "ops-admin", []byte(`{"nodeName":"dgx-b","clusterId":"c1"}`), nil)
			if s != 201 {
				b.Fatalf("%d %s", s, body)
			}
			var e struct{ BootstrapToken string }
			_ = json.Unmarshal(body, &e)
			s, body = env.Do(http.MethodPost, agentapi.RegisterPath, e.BootstrapToken, nil, nil)
			var cred agentapi.RegisterResponse
			if err := json.Unmarshal(body, &cred); s != 201 || err != nil {
				b.Fatalf("%d %s", s, body)
			}
			seq := int64(0) // across the runs of b.N: sequences only grow
			for _, c := range []struct{ name, token, node string }{{"key", "acme-report", "dgx-a"}, {"credential", cred.Credential, "dgx-b"}} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						seq++
						raw, _ := json.Marshal(servertest.HeartbeatOf(c.node, seq))
						s, body := env.Do(http.MethodPost, agentapi.HeartbeatPath, c.token, raw, nil)
						if s != 200 {
							b.Fatalf("%d %s", s, body)
						}
					}
				})
			}
		})
	}
}
