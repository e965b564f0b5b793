package demo

import "gpugraph/models"

// Scenario is a row of demo/README.md's restart table (scenarios), for
// the tests that restart through the server (package demo_test).
type Scenario struct {
	ID     string
	HTTP   int
	Code   string          // error code; "" on 200
	Status models.VMStatus // the VM's status after a 200
	Msg    string          // must appear in the error message
}

// Scenarios is the restart table, in the README's order.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, sc := range scenarios {
		out[i] = Scenario{ID: sc.id, HTTP: sc.want.HTTP, Code: sc.want.Code, Status: sc.want.Status, Msg: sc.want.Msg}
	}
	return out
}
