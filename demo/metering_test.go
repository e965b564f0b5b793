package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/services/scheduler"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The demo's prepaid organization and what demo/README.md ("Metering")
// says of it: the pass at which its balance runs out with the server's
// default --metering-interval.
const (
	prepaidOrg = "org-initech"
	readmePass = 5
	// storagePrice is the catalog's price of a kept GB an hour, in µ¢
	// (decision 0042: $0.20 a GB-month of 730 hours).
	storagePrice = 27_400
)

// demoRow is what the metering reads of a demo VM or pod.
type demoRow struct {
	ID, OrganizationID, Status, StatusReason, CapabilityTier string
	PricePerHourCents, GPUCount, DiskSizeGb, VolumeGb        int64
}

// keptGB is the disk (a VM's) or /workspace volume (a pod's) a stopped
// row keeps, which accrues storage.
func (r demoRow) keptGB() int64 {
	if r.CapabilityTier == models.TierPod {
		return r.VolumeGb
	}
	return r.DiskSizeGb
}

// prepaidDemo is the prepaid organization's part of the demo file: its
// credits in µ¢ and its rows.
type prepaidDemo struct {
	credit int64
	rows   []demoRow
}

func readPrepaid(t *testing.T, b []byte) prepaidDemo {
	t.Helper()
	var f struct {
		Credits []struct {
			OrganizationID string
			AmountCents    int64
		}
		VMs []demoRow
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var p prepaidDemo
	for _, c := range f.Credits {
		if c.OrganizationID != prepaidOrg {
			t.Fatalf("a credit of %s: the demo's prepaid organization is %s alone", c.OrganizationID, prepaidOrg)
		}
		p.credit += c.AmountCents * models.MicroCentsPerCent
	}
	for _, v := range f.VMs {
		if v.OrganizationID == prepaidOrg {
			p.rows = append(p.rows, v)
		}
	}
	return p
}

// stoppable are the ids of the rows the balance running out stops: the
// running, deploying and interrupted ones.
func (p prepaidDemo) stoppable() []string {
	var out []string
	for _, r := range p.rows {
		switch models.VMStatus(r.Status) {
		case models.VMRunning, models.VMDeploying, models.VMInterrupted:
			out = append(out, r.ID)
		}
	}
	slices.Sort(out)
	return out
}

// cost is what row r accrues in n minutes of the demo as loaded, in µ¢:
// a running row its price, a stopped one its kept GB; each rounded down
// once (a workload's records sum to its exact cost rounded down once).
func (r demoRow) cost(minutes int64) int64 {
	switch models.VMStatus(r.Status) {
	case models.VMRunning:
		return r.PricePerHourCents * models.MicroCentsPerCent * minutes / 60
	case models.VMStopped:
		return r.keptGB() * storagePrice * minutes / 60
	}
	return 0
}

// burn is what the rows cost an hour, in µ¢: the running ones' prices,
// the stopped ones' kept storage.
func burn(rows []demoRow) int64 {
	var b int64
	for _, r := range rows {
		b += r.cost(60)
	}
	return b
}

// expectedPass is the pass of the server's runner (a pass a minute after
// the start, then one a minute) that finds the balance short of the next
// minute of the burn, computed from the file alone: the first pass starts
// the rows' meters (a fixture's rows have no events), each later one
// debits the minute before it. It answers the pass and what was debited
// by then, in µ¢.
func (p prepaidDemo) expectedPass() (pass int, spent int64) {
	b := burn(p.rows)
	for pass = 1; ; pass++ {
		spent = 0
		for _, r := range p.rows {
			spent += r.cost(int64(pass - 1))
		}
		// balance < burn × interval, in µ¢ × ms as the pass compares.
		if (p.credit-spent)*time.Hour.Milliseconds() < b*metering.DefaultInterval.Milliseconds() {
			return pass, spent
		}
	}
}

// meterUntilExhausted serves the demo as loaded at start and runs the
// metering as the server's runner does (a pass every default interval from
// start, each closing up to its time less the settle) until a pass
// exhausts a balance, at most ten passes. It answers the server and that
// pass's number and result.
func meterUntilExhausted(t *testing.T, st *store.Store, b []byte, start time.Time) (*servertest.Env, int, metering.Result) {
	t.Helper()
	// The server's defaults: the platform's spend limit holds Initech.
	env := servertest.NewWithOptions(t, st, string(b), servertest.Options{Services: services.Config{
		SpendLimitCentsPerHour: compute.DefaultSpendLimitCentsPerHour}}, servertest.Config{})
	now := start
	m := metering.New(st, func() time.Time { return now })
	for pass := 1; pass <= 10; pass++ {
		now = start.Add(time.Duration(pass) * metering.DefaultInterval)
		res, err := m.Pass(context.Background())
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if res.Exhausted > 0 {
			return env, pass, res
		}
	}
	t.Fatal("ten passes and no balance ran out")
	return nil, 0, metering.Result{}
}

// The demo meters (demo/README.md, "Metering"): Initech's balance runs out
// at the pass the README says, which stops every running, deploying and
// interrupted workload of it with auto_stopped_insufficient_balance (in
// the event log, read with the README's vmEvents subscription), leaves it
// balance exhausted (402 to a create and a restart) and its money as the
// README's queries read it; and every restart answer of demo/README.md's
// table is the same after the stop as on the demo as loaded.
func TestPrepaidOrganizationRunsOut(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	b, err := demo.JSON(start)
	if err != nil {
		t.Fatal(err)
	}
	p := readPrepaid(t, b)
	pass, spent := p.expectedPass()
	if pass != readmePass {
		t.Fatalf("the balance runs out at pass %d; demo/README.md says %d", pass, readmePass)
	}
	stoppable := p.stoppable()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env, got, res := meterUntilExhausted(t, st, b, start)
		if got != pass || res.Exhausted != 1 || res.Stopped != int64(len(stoppable)) {
			t.Fatalf("pass %d: %+v; want pass %d to exhaust %s and stop %d", got, res, pass, prepaidOrg, len(stoppable))
		}
		var org models.Organization
		if err := st.DB.Where("id = ?", prepaidOrg).Take(&org).Error; err != nil || org.State != models.OrgStateBalanceExhausted {
			t.Errorf("%s: %s %v; want balance_exhausted", prepaidOrg, org.State, err)
		}

		// The README's subscription, as initech-reader would run it in the
		// playground: the stops, each once, and nothing else of Initech.
		srv := httptest.NewServer(servertest.Handler(st, servertest.Options{}, servertest.Config{}))
		t.Cleanup(srv.Close)
		ws := servertest.Subscribe(t, srv.URL, "initech-reader", readmeSubscription(t), nil)
		type event struct{ VMID, From, To, Reason, Transition, Actor, At string }
		evs := servertest.NextData(ws, len(stoppable), func(d struct{ VMEvents event }) event { return d.VMEvents })
		ws.Quiet()
		var stopped []string
		at := start.Add(time.Duration(pass) * metering.DefaultInterval)
		was := map[string]string{}
		for _, r := range p.rows {
			was[r.ID] = strings.ToUpper(r.Status)
		}
		for _, e := range evs {
			stopped = append(stopped, e.VMID)
			when, err := time.Parse(time.RFC3339Nano, e.At)
			if e.From != was[e.VMID] || e.To != "STOPPED" || e.Reason != models.ReasonInsufficientBalance ||
				e.Transition != string(models.BalanceRanOut) || e.Actor != "platform metering" || err != nil || !when.Equal(at) {
				t.Errorf("event %+v; want %s to STOPPED, %s, %s by the platform's metering at %s", e, was[e.VMID], models.ReasonInsufficientBalance, models.BalanceRanOut, at)
			}
		}
		slices.Sort(stopped)
		if !slices.Equal(stopped, stoppable) {
			t.Errorf("stopped %v; want %v", stopped, stoppable)
		}
		for _, r := range p.rows {
			v := servertest.ReadVM(t, st, r.ID)
			want, reason := models.VMStatus(r.Status), r.StatusReason
			if slices.Contains(stoppable, r.ID) {
				want, reason = models.VMStopped, models.ReasonInsufficientBalance
			}
			if v.Status != want || v.StatusReason != reason {
				t.Errorf("%s: %s %q; want %s %q", r.ID, v.Status, v.StatusReason, want, reason)
			}
		}

		// Creates and restarts answer 402.
		status, body := env.Do("POST", "/v1/vms", "initech-operator",
			[]byte(`{"name": "more", "instanceType": "gpu_1x_a100_80gb_sxm4"}`), nil)
		servertest.Expect(t, "create", status, string(body), 402, "ORGANIZATION_BALANCE_EXHAUSTED")
		status, body = env.Do("POST", "/v1/vms/"+stoppable[0]+"/restart", "initech-operator", nil, nil)
		servertest.Expect(t, "restart", status, string(body), 402, "ORGANIZATION_BALANCE_EXHAUSTED")

		// The money, with the billing key, as the README reads it.
		var stoppedRows []demoRow
		for _, r := range p.rows {
			r.Status = string(models.VMStopped)
			stoppedRows = append(stoppedRows, r)
		}
		var bal map[string]json.RawMessage
		servertest.Call(t, env, "GET", "/v1/billing/balance", "initech-billing", "", 200, &bal)
		for k, want := range map[string]string{
			"organizationId": `"` + prepaidOrg + `"`, "prepaid": "true",
			"balanceCents":           models.FormatCents(p.credit - spent),
			"burnRateCentsPerHour":   models.FormatCents(burn(stoppedRows)),
			"spendLimitCentsPerHour": "8000",
		} {
			if string(bal[k]) != want {
				t.Errorf("balance: %s is %s; want %s", k, bal[k], want)
			}
		}
		checkUsage(t, env, p, start, int64(pass-1))

		checkRestartOutcomes(t, env)
	})
}

// checkUsage reads the usage the README's query reads (by workload) over
// a window around start: each row's seconds and cost over the minutes
// metered, and their total.
func checkUsage(t *testing.T, env *servertest.Env, p prepaidDemo, start time.Time, minutes int64) {
	t.Helper()
	q := url.Values{"groupBy": {"workload"}, "from": {start.Add(-time.Hour).Format(time.RFC3339)},
		"to": {start.Add(time.Hour).Format(time.RFC3339)}}
	var u struct {
		Usage []struct {
			Key                            string
			Seconds, GPUSeconds, CostCents json.Number
		}
		TotalCents json.Number
	}
	servertest.Call(t, env, "GET", "/v1/billing/usage?"+q.Encode(), "initech-billing", "", 200, &u)
	var want, got []string
	var total int64
	for _, r := range p.rows {
		if c := r.cost(minutes); c > 0 {
			secs := int64(0)
			if models.VMStatus(r.Status) == models.VMRunning {
				secs = minutes * 60
			}
			want = append(want, fmt.Sprintf("%s %d s %d GPU-s %s", r.ID, secs, secs*r.GPUCount, models.FormatCents(c)))
			total += c
		}
	}
	for _, l := range u.Usage {
		got = append(got, fmt.Sprintf("%s %s s %s GPU-s %s", l.Key, l.Seconds, l.GPUSeconds, l.CostCents))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) || string(u.TotalCents) != models.FormatCents(total) {
		t.Errorf("usage %v, total %s; want %v, total %s", got, u.TotalCents, want, models.FormatCents(total))
	}
}

// The README's create and queue (its "Create, and the queue" blocks, each
// as its own) answer after Initech's stop as they do on the demo as
// loaded: a gpu_1x_h200_sxm5 VM lands deploying on dgx-h200-01, five H200s
// queue pending second in Acme's queue, and Globex stopping its 4-H200 VM
// lets the scheduler place them on dgx-h200-01, vm-pending still queued.
func TestPrepaidStopKeepsTheREADMEsCreates(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	b, err := demo.JSON(start)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env, _, _ := meterUntilExhausted(t, st, b, start)
		var vm struct{ ID, Status, NodeID string }
		servertest.Call(t, env, "POST", "/v1/vms", "acme-operator",
			`{"name": "h200-notebook", "instanceType": "gpu_1x_h200_sxm5"}`, 201, &vm)
		if vm.Status != "deploying" || vm.NodeID != "node-dgx-h200-01" {
			t.Errorf("gpu_1x_h200_sxm5: %+v; want deploying on node-dgx-h200-01", vm)
		}

		r := env.GraphQL("acme-operator", `mutation { createVm(input: {name: "h200-x5", gpuModelId: "h200-141gb", gpuCount: 5, cpuCores: 28, ramGb: 512, diskSizeGb: 2000}) { id status statusReason queuePosition } }`, nil)
		var c struct {
			CreateVM struct {
				ID, Status    string
				QueuePosition int
			} `json:"createVm"`
		}
		env.Decode(r, &c)
		if c.CreateVM.Status != "PENDING" || c.CreateVM.QueuePosition != 2 {
			t.Fatalf("five H200s: %+v; want PENDING, queue position 2", c.CreateVM)
		}
		servertest.Call(t, env, "POST", "/v1/vms/vm-globex-sdxl-h200/stop", "globex-operator", "", 200, nil)
		if _, err := scheduler.New(st, compute.New(st)).Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if v := servertest.ReadVM(t, st, c.CreateVM.ID); v.Status != models.VMDeploying || deref(v.NodeID) != "node-dgx-h200-01" {
			t.Errorf("h200-x5 after the stop: %s on %s; want deploying on node-dgx-h200-01", v.Status, deref(v.NodeID))
		}
		if evs := servertest.EventsOf(t, st, c.CreateVM.ID); len(evs) == 0 || evs[len(evs)-1].Transition != models.QueuePlaced {
			t.Errorf("h200-x5's events %+v; want queue-placed last", evs)
		}
		if v := servertest.ReadVM(t, st, "vm-pending"); v.Status != models.VMPending {
			t.Errorf("vm-pending: %s; want still pending", v.Status)
		}
	})
}

// readmeSubscription is the vmEvents subscription demo/README.md tells a
// person to run while Initech runs out.
func readmeSubscription(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```graphql\n(subscription \\{ vmEvents.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatal("demo/README.md has no vmEvents subscription")
	}
	return strings.TrimSpace(string(m[1]))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// demo/README.md's Metering states the figures the file makes: the
// balance, the burn before and after the stop, the pass that stops it
// and what that pass finds left.
func TestREADMEStatesThePrepaidFigures(t *testing.T) {
	b, err := demo.JSON(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := readPrepaid(t, b)
	pass, spent := p.expectedPass()
	var stoppedRows []demoRow
	for _, r := range p.rows {
		r.Status = string(models.VMStopped)
		stoppedRows = append(stoppedRows, r)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	ordinal := map[int]string{3: "third", 4: "fourth", 5: "fifth", 6: "sixth"}
	cardinal := map[int]string{3: "three", 4: "four", 5: "five", 6: "six"}
	for _, want := range []string{
		fmt.Sprintf("a balance of %s cents", models.FormatCents(p.credit)),
		fmt.Sprintf("%s cents an hour, %.2f a minute", thousands(models.FormatCents(burn(p.rows))), float64(burn(p.rows))/60/1e6),
		fmt.Sprintf("the %s pass, about %s minutes after `make run`, finds %.2f cents left", ordinal[pass], cardinal[pass], float64(p.credit-spent)/1e6),
		fmt.Sprintf("(%s cents an hour)", models.FormatCents(burn(stoppedRows))),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo/README.md does not say %q", want)
		}
	}
}

// thousands writes the whole part of a decimal with commas: 1,918.4.
func thousands(s string) string {
	whole, frac, dot := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if dot {
		return whole + "." + frac
	}
	return whole
}
