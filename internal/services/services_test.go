package services

import (
	"context"
	"reflect"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/credentials"
	"gpugraph/internal/services/nodes"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/services/pods"
)

// New builds every service; a field left nil would answer a face's first
// call with a panic.
func TestNewBuildsEveryService(t *testing.T) {
	s := reflect.ValueOf(*New(nil, Config{}))
	for i := range s.NumField() {
		if s.Field(i).IsNil() {
			t.Errorf("New leaves Services.%s nil", s.Type().Field(i).Name)
		}
	}
	feed := New(nil, Config{}).Live
	if New(nil, Config{Live: feed}).Live != feed {
		t.Error("New does not keep the Live feed it is given (the command shuts it down)")
	}
}

// Each service states the permission it needs in its gate, and its methods
// ask the gate before anything else: a caller without the permission is
// refused with the 403 naming it, no caller with the one missing-key 401,
// before the store is used (there is none here), and a caller holding
// every permission passes.
func TestGatesNameThePermissionAndComeFirst(t *testing.T) {
	s := New(nil, Config{})
	ctx := context.Background()
	for _, g := range []struct {
		name string
		perm string
		may  func(*auth.Caller) error
		call func(*auth.Caller) error // a method behind the gate
	}{
		{"Compute.MayRead", auth.ComputeRead, s.Compute.MayRead, func(c *auth.Caller) error {
			_, _, err := s.Compute.EventPage(ctx, c, "vm", compute.EventQuery{Limit: 1})
			return err
		}},
		{"Compute.MayOperate", auth.ComputeOperate, s.Compute.MayOperate, func(c *auth.Caller) error {
			_, err := s.Compute.Stop(ctx, c, "vm")
			return err
		}},
		{"Hardware.MayRead", auth.ComputeRead, s.Hardware.MayRead, func(c *auth.Caller) error {
			_, err := s.Hardware.AllNodes(ctx, c, nil)
			return err
		}},
		{"Pods.MayRead", auth.WorkloadsRead, s.Pods.MayRead, func(c *auth.Caller) error {
			_, err := s.Pods.Count(ctx, c, pods.CountQuery{})
			return err
		}},
		{"Metrics.MayRead", auth.WorkloadsRead, s.Metrics.MayRead, func(c *auth.Caller) error {
			_, err := s.Metrics.Query(ctx, c, podmetrics.Request{})
			return err
		}},
		{"Metrics.MayWrite", auth.MetricsWrite, s.Metrics.MayWrite, func(c *auth.Caller) error {
			_, err := s.Metrics.Ingest(ctx, c, podmetrics.NewBatch())
			return err
		}},
		{"NodeID.MayEnroll", auth.NodesAdmin, s.NodeID.MayEnroll, func(c *auth.Caller) error {
			_, err := s.NodeID.Enroll(ctx, c, "node", "cluster")
			return err
		}},
		{"Fleet.MayAdminister", auth.NodesAdmin, s.Fleet.MayAdminister, func(c *auth.Caller) error {
			_, err := s.Fleet.Reclaim(ctx, c, "node")
			return err
		}},
		{"Credentials.MayAdminister", auth.Admin, s.Credentials.MayAdminister, func(c *auth.Caller) error {
			_, err := s.Credentials.CreateKey(ctx, c, credentials.Spec{})
			return err
		}},
		{"Live.MayRead", auth.ComputeRead, s.Live.MayRead, func(c *auth.Caller) error {
			_, err := s.Live.VMEvents(ctx, c, nil, nil, nil)
			return err
		}},
	} {
		if err := g.may(auth.SystemCaller()); err != nil {
			t.Errorf("%s refuses a caller holding every permission: %v", g.name, err)
		}
		want := "this credential lacks the " + g.perm + " permission"
		for what, err := range map[string]error{"the gate": g.may(&auth.Caller{}), "the method": g.call(&auth.Caller{})} {
			if e, ok := apierr.As(err); !ok || e.Status != 403 || e.Message != want {
				t.Errorf("%s, %s, without the permission: %v, want 403 %q", g.name, what, err, want)
			}
		}
		for what, err := range map[string]error{"the gate": g.may(nil), "the method": g.call(nil)} {
			if e, ok := apierr.As(err); !ok || e.Status != 401 || e.Message != auth.MissingKey().Message {
				t.Errorf("%s, %s, without a caller: %v, want the missing-key 401", g.name, what, err)
			}
		}
	}

	// A node's report is the agent's: nodes.report, and only in legacy mode.
	legacy := New(nil, Config{NodeReportKeys: true})
	err := legacy.Nodes.MayReport(nodes.Reporter{Caller: &auth.Caller{}})
	if e, ok := apierr.As(err); !ok || e.Status != 403 || e.Message != "this credential lacks the "+auth.NodesReport+" permission" {
		t.Errorf("legacy mode, a key without nodes.report: %v", err)
	}
	if e, ok := apierr.As(s.Nodes.MayReport(nodes.Reporter{Caller: auth.SystemCaller()})); !ok || e.Code != nodes.CodeNodeCredentialRequired {
		t.Errorf("a key, where node credentials are required: %v, want %s", e, nodes.CodeNodeCredentialRequired)
	}
}
