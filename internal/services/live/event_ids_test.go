package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/httpapi/servertest"
	livefeed "gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23, finding 12: a VM event's id counts its own organization's
// events only, so the gaps between a tenant's ids no longer show how busy
// the others are. Acme's and Globex's transitions interleave; each reads
// 1, 2, 3 … on every face (vmEvents, VM.events, REST's events), and
// resumes from those ids.
func TestVMEventIDsPerOrganization(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 2)
		// The answer-checking server first: it registers its statement
		// counter on st before the other server runs any.
		env := servertest.New(t, st, "")
		srv := liveServer(t, st, nil)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		act(t, srv, "globex-operator", "stopVm", "vm-g")
		act(t, srv, "acme-operator", "stopVm", "vm-1")
		act(t, srv, "globex-operator", "terminateVm", "vm-g")
		act(t, srv, "acme-operator", "terminateVm", "vm-0")

		seen := func(evs []gotEvent) string {
			var out []string
			for _, e := range evs {
				out = append(out, e.ID+"="+e.VMID+":"+strings.ToLower(e.To))
			}
			return strings.Join(out, " ")
		}
		acme := subscribe(t, srv, "acme-reader", map[string]any{"after": "0"})
		if got, want := seen(events(acme, 3)), "1=vm-0:stopped 2=vm-1:stopped 3=vm-0:terminated"; got != want {
			t.Errorf("acme's vmEvents: %s, want %s", got, want)
		}
		globex := subscribe(t, srv, "globex-operator", map[string]any{"after": "0"})
		if got, want := seen(events(globex, 2)), "1=vm-g:stopped 2=vm-g:terminated"; got != want {
			t.Errorf("globex's vmEvents: %s, want %s", got, want)
		}
		resumed := subscribe(t, srv, "acme-reader", map[string]any{"after": "2"})
		if got, want := seen(events(resumed, 1)), "3=vm-0:terminated"; got != want {
			t.Errorf("after 2: %s, want %s", got, want)
		}

		status, body := env.Do("GET", "/v1/vms/vm-0/events", "acme-reader", nil, nil)
		var page struct{ Events []struct{ ID string } }
		_ = json.Unmarshal(body, &page)
		if status != 200 || len(page.Events) != 2 || page.Events[0].ID != "1" || page.Events[1].ID != "3" {
			t.Errorf("REST events of vm-0: %d %s", status, body)
		}
		status, body = env.Do("GET", "/v1/vms/vm-0/events?after=1", "acme-reader", nil, nil)
		if _ = json.Unmarshal(body, &page); status != 200 || len(page.Events) != 1 || page.Events[0].ID != "3" {
			t.Errorf("REST events of vm-0 after 1: %d %s", status, body)
		}
		var vm struct {
			VM struct{ Events []struct{ ID string } }
		}
		env.Decode(env.GraphQL("globex-operator", `{ vm(id: "vm-g") { events { id } } }`, nil), &vm)
		if len(vm.VM.Events) != 2 || vm.VM.Events[0].ID != "1" || vm.VM.Events[1].ID != "2" {
			t.Errorf("VM.events of vm-g: %+v", vm.VM.Events)
		}
	})
}

// Transitions of two organizations committed at once through two servers
// on one database: each organization's ids are 1 … n, no gap and no
// repeat, and a subscriber of either server reads them in that order.
func TestVMEventIDsAcrossReplicas(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			st := storetest.Replicas(t, engine, 2)
			const n = 8
			f := liveFixture(n)
			for i := range n {
				servertest.AddVM(f, servertest.VMSpec{ID: fmt.Sprintf("vm-g%d", i), Org: "org-globex", Node: "n1", Status: "running", CPU: 1, RAM: 1, Disk: 1})
			}
			servertest.ResetOps(t, st[0], f)
			srvs := []*httptest.Server{liveServer(t, st[0], nil), liveServer(t, st[1], nil)}
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { act(t, srvs[i%2], "acme-operator", "stopVm", fmt.Sprintf("vm-%d", i)) })
				wg.Go(func() { act(t, srvs[(i+1)%2], "globex-operator", "stopVm", fmt.Sprintf("vm-g%d", i)) })
			}
			wg.Wait()
			for _, org := range []string{"org-acme", "org-globex"} {
				got := eventsOfOrg(t, st[0], org)
				want := make([]int64, n)
				for i := range want {
					want[i] = int64(i + 1)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s's ids: %v, want %v", org, got, want)
				}
			}
			s := subscribe(t, srvs[1], "acme-reader", map[string]any{"after": "0"})
			var ids []string
			for _, e := range events(s, n) {
				ids = append(ids, e.ID)
			}
			if got := strings.Join(ids, " "); got != "1 2 3 4 5 6 7 8" {
				t.Errorf("the subscriber read %s", got)
			}
		})
	}
}

// An organization's ids keep growing when retention has emptied its log:
// a client resuming with the last id it read gets what came after, not
// events numbered from 1 again.
func TestVMEventIDsSurviveRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 2)
		srv := liveServer(t, st, nil)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		act(t, srv, "acme-operator", "stopVm", "vm-1")
		storetest.Exec(t, st, "UPDATE vm_events SET at = ?", store.Now().Add(-30*24*time.Hour))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		livefeed.NewRetention(st, livefeed.DefaultEventRetention, time.Hour).Run(ctx)
		if left := eventsOfOrg(t, st, "org-acme"); len(left) != 0 {
			t.Fatalf("retention kept %v", left)
		}
		s := subscribe(t, srv, "acme-reader", map[string]any{"after": "2"})
		act(t, srv, "acme-operator", "terminateVm", "vm-0")
		if got := events(s, 1); len(got) != 1 || got[0].ID != "3" {
			t.Fatalf("after retention emptied the log, the next event is %+v, want id 3", got)
		}
	})
}
