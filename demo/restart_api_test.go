package demo_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Every restart outcome the demo README promises answers as promised.
func TestDemoRestartOutcomes(t *testing.T) {
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		checkRestartOutcomes(t, servertest.New(t, st, string(b)))
	})
}

// readmeNodes are the nodes demo/README.md's restart table names for a
// restart that places the row.
var readmeNodes = map[string]string{
	"vm-restart-ok-stopped":     "node-dgx-h200-01",
	"vm-restart-ok-failed":      "node-dgx-h200-01",
	"vm-restart-ok-pod-stopped": "node-mi300x-02",
	"vm-restart-ok-pod-failed":  "node-dgx-a100-01",
	"vm-node-removed":           "node-dgx-a100-01",
}

// checkRestartOutcomes restarts every row of demo/README.md's restart
// table through the REST face as acme-operator, one after another on
// env's data (the README's answers hold in any order), and compares each
// answer with the row: the status code, the error code and the words of
// its message the README quotes, or the VM's status and the node it names.
func checkRestartOutcomes(t *testing.T, env *servertest.Env) {
	t.Helper()
	for _, sc := range demo.Scenarios() {
		status, body := env.Do("POST", "/v1/vms/"+sc.ID+"/restart", "acme-operator", nil, nil)
		var got struct {
			Status string
			NodeID string
			Error  struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %s", sc.ID, body)
		}
		g, w := fmt.Sprintf("%d %s", status, got.Error.Code), fmt.Sprintf("%d %s", sc.HTTP, sc.Code)
		if status == 200 {
			g = fmt.Sprintf("200 %s on %s", got.Status, got.NodeID)
		}
		if sc.HTTP == 200 {
			w = fmt.Sprintf("200 %s on %s", sc.Status, cmp.Or(readmeNodes[sc.ID], got.NodeID))
		}
		if g != w || !strings.Contains(got.Error.Message, sc.Msg) {
			t.Errorf("%s: %s, want %s with %q (%s)", sc.ID, g, w, sc.Msg, body)
		}
	}
}
