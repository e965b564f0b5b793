package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"gpugraph/internal/agent/sim"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

func TestXIDHealth(t *testing.T) {
	tests := []struct {
		name       string
		policy     XIDPolicy
		xid        uint64
		wantHealth string
		wantReason string
	}{
		{"critical XID fails the GPU", NewXIDPolicy(nil, false), 79, HealthFailed, "XID 79"},
		{"XID 48 (double-bit ECC) fails the GPU", NewXIDPolicy(nil, false), 48, HealthFailed, "XID 48"},
		{"application XID 13 is ignored", NewXIDPolicy(nil, false), 13, HealthHealthy, ""},
		{"application XID 31 is ignored", NewXIDPolicy(nil, false), 31, HealthHealthy, ""},
		{"application XID 43 is ignored", NewXIDPolicy(nil, false), 43, HealthHealthy, ""},
		{"application XID 45 is ignored", NewXIDPolicy(nil, false), 45, HealthHealthy, ""},
		{"application XID 68 is ignored", NewXIDPolicy(nil, false), 68, HealthHealthy, ""},
		{"application XID 109 is ignored", NewXIDPolicy(nil, false), 109, HealthHealthy, ""},
		{"XID ignored by flag", NewXIDPolicy([]uint64{1, 2, 79}, false), 79, HealthHealthy, ""},
		{"flag leaves other XIDs critical", NewXIDPolicy([]uint64{1, 2}, false), 94, HealthFailed, "XID 94"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := startWatching(t, "dgxh100", tt.policy)
			if err := w.mock.RaiseXID(3, tt.xid); err != nil {
				t.Fatal(err)
			}
			health, reason := w.status(3)
			if health != tt.wantHealth || reason != tt.wantReason {
				t.Errorf("GPU 3 after XID %d: %s %q, want %s %q", tt.xid, health, reason, tt.wantHealth, tt.wantReason)
			}
			for _, i := range []int{0, 1, 2, 4, 5, 6, 7} {
				if health, _ := w.status(i); health != HealthHealthy {
					t.Errorf("GPU %d: %s, want healthy", i, health)
				}
			}
		})
	}
}

// The first failure's reason stays, and nothing heals a failed GPU.
func TestFailureIsStickyAndFirstReasonWins(t *testing.T) {
	w := startWatching(t, "dgxa100", NewXIDPolicy(nil, false))
	for _, xid := range []uint64{79, 13, 94} {
		if err := w.mock.RaiseXID(0, xid); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.mock.SetRowRemapFailure(0, true); err != nil {
		t.Fatal(err)
	}
	w.health.CheckMemoryErrors(w.gpus)
	if err := w.mock.SetRowRemapFailure(0, false); err != nil {
		t.Fatal(err)
	}
	w.health.CheckMemoryErrors(w.gpus)
	if health, reason := w.status(0); health != HealthFailed || reason != "XID 79" {
		t.Errorf("GPU 0: %s %q, want failed \"XID 79\"", health, reason)
	}
}

func TestAllXIDsIgnored(t *testing.T) {
	_, all, err := ParseXIDList("all")
	if err != nil || !all {
		t.Fatalf("ParseXIDList(all) = %v, %v", all, err)
	}
	p := NewXIDPolicy(nil, all)
	if !p.IgnoresAll() || !p.Ignores(79) {
		t.Error("policy with all should ignore XID 79")
	}
}

// ECC events are registered, as the plugin does, but only XIDs change
// health.
func TestECCEventsDoNotFail(t *testing.T) {
	w := startWatching(t, "dgxh200", NewXIDPolicy(nil, false))
	for _, et := range []uint64{nvml.EventTypeDoubleBitEccError, nvml.EventTypeSingleBitEccError} {
		if err := w.mock.RaiseEvent(1, et, 0); err != nil {
			t.Fatal(err)
		}
	}
	if health, reason := w.status(1); health != HealthHealthy {
		t.Errorf("GPU 1 after ECC events: %s %q", health, reason)
	}
	// Events the agent did not register for never reach it.
	if err := w.mock.RaiseEvent(1, nvml.EventTypePState, 0); !errors.Is(err, sim.ErrNoListener) {
		t.Errorf("P-state event: %v, want ErrNoListener", err)
	}
}

func TestXIDOnUnidentifiedGPUFailsAll(t *testing.T) {
	w := startWatching(t, "dgxh100", NewXIDPolicy(nil, false))
	w.mock.Device(4).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
	if err := w.mock.RaiseXID(4, 79); err != nil {
		t.Fatal(err)
	}
	for i := range w.gpus {
		if health, reason := w.status(i); health != HealthFailed || reason != "XID 79 on an unidentified GPU" {
			t.Errorf("GPU %d: %s %q", i, health, reason)
		}
	}
}

func TestEventWaitErrorFailsAll(t *testing.T) {
	m := newMock(t, "dgxa100")
	log := testLogger(t)
	gpus, err := Discover(m, log)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHealthState(gpus, log)
	// An event set whose every Wait fails, as on a GPU that fell off the bus.
	broken := &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_GPU_IS_LOST },
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	m.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return broken, nvml.SUCCESS }
	for i := range gpus {
		m.Device(i).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	}
	w, err := NewXIDWatcher(m, gpus, h, NewXIDPolicy(nil, false), 10*time.Millisecond, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	waitUntil(t, "all GPUs failed", func() bool {
		for _, g := range gpus {
			if health, _ := h.Status(g.UUID); health != HealthFailed {
				return false
			}
		}
		return true
	})
	cancel()
	<-done
	if _, reason := h.Status(gpus[0].UUID); reason != "NVML event wait failed: ERROR_GPU_IS_LOST" {
		t.Errorf("reason %q", reason)
	}
}

func TestRegistrationFailures(t *testing.T) {
	w := startWatching(t, "dgxh100", NewXIDPolicy(nil, false), func(m *sim.Server) {
		m.Device(0).GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		m.Device(1).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_UNKNOWN }
		m.Device(2).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	})
	want := map[int][2]string{
		0: {HealthFailed, "NVML GetSupportedEventTypes: ERROR_UNKNOWN"},
		1: {HealthFailed, "NVML RegisterEvents: ERROR_UNKNOWN"},
		2: {HealthHealthy, ""}, // too old for events: a warning only
		3: {HealthHealthy, ""},
	}
	for i, wnt := range want {
		if health, reason := w.status(i); health != wnt[0] || reason != wnt[1] {
			t.Errorf("GPU %d: %s %q, want %s %q", i, health, reason, wnt[0], wnt[1])
		}
	}
}

func TestMemoryErrorChecks(t *testing.T) {
	w := startWatching(t, "dgxa100", NewXIDPolicy(nil, false))
	w.health.CheckMemoryErrors(w.gpus)
	for i := range w.gpus {
		if health, _ := w.status(i); health != HealthHealthy {
			t.Fatalf("GPU %d: %s before any memory error", i, health)
		}
	}
	if err := w.mock.SetRowRemapFailure(2, true); err != nil {
		t.Fatal(err)
	}
	if err := w.mock.SetRetiredPagesPending(6, true); err != nil {
		t.Fatal(err)
	}
	w.health.CheckMemoryErrors(w.gpus)
	if health, reason := w.status(2); health != HealthFailed || reason != ReasonRowRemapFailure {
		t.Errorf("GPU 2: %s %q, want failed %q", health, reason, ReasonRowRemapFailure)
	}
	if health, reason := w.status(6); health != HealthFailed || reason != ReasonPendingRetiredPages {
		t.Errorf("GPU 6: %s %q, want failed %q", health, reason, ReasonPendingRetiredPages)
	}
	if health, _ := w.status(3); health != HealthHealthy {
		t.Errorf("GPU 3: %s", health)
	}
}

// A query that is unsupported or errors says nothing about the memory and
// must not fail the GPU; an unsupported one is not asked again.
func TestMemoryChecksThatCannotRun(t *testing.T) {
	m := newMock(t, "dgxh100")
	calls := 0
	m.Device(0).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		calls++
		return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED
	}
	m.Device(1).GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) {
		return nvml.FEATURE_ENABLED, nvml.ERROR_UNKNOWN
	}
	log := testLogger(t)
	gpus, err := Discover(m, log)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHealthState(gpus, log)
	for range 3 {
		h.CheckMemoryErrors(gpus)
	}
	if calls != 1 {
		t.Errorf("unsupported GetRemappedRows called %d times, want 1", calls)
	}
	for i := range 2 {
		if health, reason := h.Status(gpus[i].UUID); health != HealthHealthy {
			t.Errorf("GPU %d: %s %q", i, health, reason)
		}
	}
}
