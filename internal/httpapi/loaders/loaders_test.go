package loaders_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/services/fleet"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// wait is long enough that loads started one after another batch, on a
// busy machine under the race detector too.
const wait = 25 * time.Millisecond

func vmIDs(list []*models.VM) []string {
	var out []string
	for _, v := range list {
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

// A request's loaders see the caller's organization's VMs and tenant's
// workloads and projects only: another's are missing, as they are for an
// anonymous caller. Nodes and GPUs are shared.
func TestLoadersAreScopedToTheCaller(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		acme := loaders.New(st, nil, datasettest.Caller(t, st, "acme-operator"), wait)
		if v, err := acme.VMByID.Load(ctx, "vm-globex-1")(); err != nil || v != nil {
			t.Errorf("acme loads globex's VM: %+v %v", v, err)
		}
		if v, err := acme.VMByID.Load(ctx, "vm-acme-1")(); err != nil || v == nil || v.Name != "train-a" {
			t.Errorf("acme's vm-acme-1: %+v %v", v, err)
		}
		onN1, err := acme.VMsByNode.Load(ctx, "n1")()
		if err != nil || !slices.Equal(vmIDs(onN1), []string{"pod-acme-1", "vm-acme-1", "vm-acme-2"}) {
			t.Errorf("acme's VMs on n1: %v %v", vmIDs(onN1), err)
		}
		if w, err := acme.WorkloadByID.Load(ctx, "33333333-3333-4333-8333-333333333333")(); err != nil || w != nil {
			t.Errorf("acme loads globex's workload: %+v %v", w, err)
		}
		if p, err := acme.ProjectByID.Load(ctx, "2")(); err != nil || p != nil {
			t.Errorf("acme loads globex's project: %+v %v", p, err)
		}
		if p, err := acme.ProjectByID.Load(ctx, "1")(); err != nil || p == nil || p.Name != "vision" {
			t.Errorf("acme's project 1: %+v %v", p, err)
		}
		globex := loaders.New(st, nil, datasettest.Caller(t, st, "globex-operator"), wait)
		if onN1, _ := globex.VMsByNode.Load(ctx, "n1")(); !slices.Equal(vmIDs(onN1), []string{"vm-globex-1"}) {
			t.Errorf("globex's VMs on n1: %v", vmIDs(onN1))
		}
		// Decommissioning n1 writes an event for each of its running VMs.
		at := store.Now().Add(time.Hour)
		if _, err := fleet.New(st).SetLeavingAt(ctx, auth.SystemCaller(), "n1", &at); err != nil {
			t.Fatal(err)
		}
		fresh := loaders.New(st, nil, datasettest.Caller(t, st, "acme-operator"), wait)
		if ev, err := fresh.EventsByVM.Load(ctx, "vm-acme-1")(); err != nil || len(ev) != 1 || ev[0].VMID != "vm-acme-1" {
			t.Errorf("acme's events of vm-acme-1: %+v %v", ev, err)
		}
		if ev, err := globex.EventsByVM.Load(ctx, "vm-acme-1")(); err != nil || len(ev) != 0 {
			t.Errorf("globex loads acme's events: %+v %v", ev, err)
		}
		// A VM's volume is the organization's too, whatever id is asked.
		vol := func(l *loaders.Loaders, id string) string {
			t.Helper()
			v, err := l.VolumeByVM.Load(ctx, id)()
			if err != nil {
				t.Fatal(err)
			}
			if v == nil {
				return "none"
			}
			mount := "-"
			if v.MountPath != nil {
				mount = *v.MountPath
			}
			return fmt.Sprintf("%s %s %s %dGB %s fresh=%v", v.ID, v.VMID, v.NodeID, v.SizeGb, mount, v.Fresh)
		}
		for _, c := range []struct {
			l        *loaders.Loaders
			id, want string
		}{
			{acme, "vm-acme-1", "vol-vm-acme-1-0 vm-acme-1 n1 500GB - fresh=false"},
			{acme, "pod-acme-1", "vol-pod-acme-1-0 pod-acme-1 n1 100GB /workspace fresh=false"},
			{acme, "vm-globex-1", "none"},
			{globex, "vm-globex-1", "vol-vm-globex-1-0 vm-globex-1 n1 1000GB - fresh=false"},
			{globex, "vm-acme-1", "none"},
		} {
			if got := vol(c.l, c.id); got != c.want {
				t.Errorf("volume of %s: %s, want %s", c.id, got, c.want)
			}
		}
		anon := loaders.New(st, nil, nil, wait)
		if got := vol(anon, "vm-acme-1"); got != "none" {
			t.Errorf("an anonymous caller loads vm-acme-1's volume: %s", got)
		}
		if v, _ := anon.VMByID.Load(ctx, "vm-acme-1")(); v != nil {
			t.Errorf("an anonymous caller loads vm-acme-1: %+v", v)
		}
		if w, _ := anon.WorkloadByID.Load(ctx, "11111111-1111-4111-8111-111111111111")(); w != nil {
			t.Errorf("an anonymous caller loads a workload: %+v", w)
		}
		for _, l := range []*loaders.Loaders{acme, globex, anon} {
			gpus, err := l.GPUsByNode.Load(ctx, "n2")()
			if err != nil || len(gpus) != 4 {
				t.Errorf("n2's GPUs: %d %v", len(gpus), err)
			}
		}
	})
}

// Loads of one level batch into one statement; a primed loader answers
// from its cache without one.
func TestLoadsBatchAndPrimesAnswerFromTheCache(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := storetest.CountStatements(t, st)
		var err error
		l := loaders.New(st, nil, datasettest.Caller(t, st, "acme-operator"), wait)
		var n1, n2, missing *models.Node
		if n := c.During(func() {
			t1, t2, t3 := l.NodeByID.Load(ctx, "n1"), l.NodeByID.Load(ctx, "n2"), l.NodeByID.Load(ctx, "n9")
			n1, _ = t1()
			n2, _ = t2()
			missing, _ = t3()
		}); n != 1 {
			t.Errorf("three node loads ran %d statements, want 1", n)
		}
		if n1 == nil || n1.Name != "gpu-node-1" || n2 == nil || n2.Status != models.NodeOffline || missing != nil {
			t.Errorf("nodes: %+v %+v %+v", n1, n2, missing)
		}

		ctx = loaders.With(ctx, loaders.New(st, nil, datasettest.Caller(t, st, "acme-operator"), wait))
		var rows []*models.GPU
		if n := c.During(func() { rows, err = loaders.GPUsByNode.Prime(ctx, []string{"n1"}) }); n != 1 || err != nil || len(rows) != 8 {
			t.Fatalf("prime n1's GPUs: %d rows, %d statements, %v", len(rows), n, err)
		}
		var got any
		if n := c.During(func() { got, err = loaders.GPUsByNode.Load(ctx, "n1") }); n != 0 || err != nil {
			t.Errorf("a primed load ran %d statements (%v)", n, err)
		}
		if gpus, ok := got.([]*models.GPU); !ok || len(gpus) != 8 || gpus[7].ID != "n1-g7" || loaders.GPUsByNode.Key(gpus[7]) != "n1" {
			t.Errorf("primed n1's GPUs: %#v", got)
		}
	})
}

// Narrowed loaders read only the columns asked for (and the key).
func TestNarrowReadsOnlyItsColumns(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := loaders.New(st, nil, auth.SystemCaller(), wait)
		if l.Narrowed().Nodes != nil {
			t.Errorf("new loaders are narrowed: %+v", l.Narrowed())
		}
		name, ok := loaders.ColumnOf[models.Node]("Name")
		if !ok || name != "name" {
			t.Fatalf("ColumnOf(Node.Name): %q %v", name, ok)
		}
		if _, ok := loaders.ColumnOf[models.GPU]("Model"); ok {
			t.Error("a column fills GPU.Model, which is never stored")
		}
		l.Narrow(loaders.Columns{Nodes: store.Columns{name}})
		n, err := l.NodeByID.Load(ctx, "n1")()
		if err != nil || n == nil {
			t.Fatalf("narrowed n1: %v %v", n, err)
		}
		if n.ID != "n1" || n.Name != "gpu-node-1" || n.CPUCores != 0 || n.AgentVersion != "" {
			t.Errorf("narrowed to its name, n1 is %+v", n)
		}
	})
}
