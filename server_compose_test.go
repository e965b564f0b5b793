package main

import (
	"strings"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// One process, one set of services: the server's composition root builds
// services.New once and hands that value to the HTTP layer and to the
// jobs, so the scheduler places the queue with the very compute.Service
// the faces create, stop and restart with (its --max-pending-per-org
// included), not a second one built beside it.
func TestOneComputeServicePerProcess(t *testing.T) {
	o, err := parseFlags([]string{"--max-pending-per-org", "7", "--introspection=false"})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, store.SQLite)
	p := compose(st, o, nil, nil, nil, nil)
	if p.http.Services != p.services {
		t.Errorf("the HTTP layer is handed services %p, the process built %p", p.http.Services, p.services)
	}
	if p.http.Loaders == nil || p.http.Database != st || !p.http.DisableIntrospection {
		t.Errorf("the HTTP layer is handed loaders %v, database %v, introspection off %v: want the factory, the store, true",
			p.http.Loaders != nil, p.http.Database == st, p.http.DisableIntrospection)
	}
	if got, want := p.scheduler.Compute(), p.services.Compute; got != want {
		t.Errorf("the scheduler places with compute.Service %p, the faces create with %p: two per process", got, want)
	}
	if got := p.services.Compute.MaxPending; got != 7 {
		t.Errorf("compute.Service.MaxPending %d, want 7 (--max-pending-per-org)", got)
	}
}

// The metering pass is one of the process's jobs: it meters with the
// services' one metering.Service, every --metering-interval (1m unless
// set), and a period that is not positive is refused.
func TestMeteringIsAJobOfTheProcess(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	for _, c := range []struct {
		args []string
		want time.Duration
	}{{nil, time.Minute}, {[]string{"--metering-interval", "1s"}, time.Second}} {
		o, err := parseFlags(c.args)
		if err != nil {
			t.Fatal(err)
		}
		p := compose(st, o, nil, nil, nil, nil)
		if p.metering.Service() != p.services.Metering || p.metering.Interval() != c.want {
			t.Errorf("%v: the runner meters with %p every %s; want the services' %p every %s",
				c.args, p.metering.Service(), p.metering.Interval(), p.services.Metering, c.want)
		}
	}
	if _, err := parseFlags([]string{"--metering-interval", "0s"}); err == nil || !strings.Contains(err.Error(), "--metering-interval") {
		t.Errorf("--metering-interval 0s: %v", err)
	}
}
