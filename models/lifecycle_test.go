package models

import (
	"slices"
	"strings"
	"testing"
)

var transitionNames = []TransitionName{
	RestartReboot, RestartResume, RestartDeploy, RestartReplace, NodeLost, NodeBack, ExpireVM, ExpirePod,
	AgentRunning, AgentFailedStart, ProvisionTimeout, VMExited, VMCrashed, PodJobLost, PodResubmit, UserStop, UserTerminate,
	NodeLeaving, NodeStaying, NodeRemoval, SpotPreempted, SpotReclaimed, OrgSuspended, OrgBalance, BalanceRanOut, OrgDeleted,
	CreatePlaced, CreateQueued, QueuePlaced, QueueTimeout, AgentRestarted, AgentGone, TeardownExpired,
}

// The table is consistent: every name is there once, every status is one a
// row may carry, what a transition does to holdings agrees with which
// statuses hold, and a kept reason is not also written.
func TestLifecycleIsConsistent(t *testing.T) {
	seen := map[TransitionName]bool{}
	for _, tr := range Lifecycle {
		if seen[tr.Name] {
			t.Errorf("%s: listed twice", tr.Name)
		}
		seen[tr.Name] = true
		if tr.Trigger == "" || len(tr.From) == 0 || tr.To.Valid() == tr.SameStatus {
			t.Errorf("%s: trigger, from and a valid to (none when it keeps the status) are required: %+v", tr.Name, tr)
		}
		for _, f := range tr.From {
			if !f.Valid() {
				t.Errorf("%s: from %q is not a status", tr.Name, f)
			}
			var want []Resources
			switch {
			case tr.SameStatus:
				// Only the end of a teardown keeps the status: it frees
				// what a status that holds nothing still held.
				want = []Resources{Frees}
				if f.Holds() {
					t.Errorf("%s: from %s, which holds, keeping its status", tr.Name, f)
				}
			case f.Holds() && tr.To.Holds():
				want = []Resources{Keeps, Moves}
			case !f.Holds() && tr.To.Holds():
				want = []Resources{Claims, Moves}
			case f.Holds() && !tr.To.Holds():
				want = []Resources{Releases}
			default:
				// Nothing held: a release that ends everything (a
				// terminate, a removal) lets go of nothing, as Keeps does.
				want = []Resources{Keeps, Releases}
			}
			if !slices.Contains(want, tr.Resources) {
				t.Errorf("%s: %s → %s says %q", tr.Name, f, tr.To, tr.Resources)
			}
		}
		if tr.KeepsReason && (tr.Reason != "" || tr.Detailed) {
			t.Errorf("%s: keeps the statusReason and writes %q", tr.Name, tr.Reason)
		}
		// A detailed reason is a prefix ending in a space, or the whole
		// detail (create-queued's placement summary).
		if tr.Detailed && tr.Reason != "" && !strings.HasSuffix(tr.Reason, " ") {
			t.Errorf("%s: a detailed reason is a prefix ending in a space, got %q", tr.Name, tr.Reason)
		}
		if (tr.DiskGone || tr.Deletes) && tr.Resources != Releases {
			t.Errorf("%s: a row whose disk goes must release what it holds", tr.Name)
		}
		if (tr.SameStatus || tr.Resources == Frees) && (!tr.SameStatus || tr.Resources != Frees) {
			t.Errorf("%s: only the end of a teardown keeps the status, and it frees what was held", tr.Name)
		}
	}
	for _, n := range transitionNames {
		if !seen[n] {
			t.Errorf("%s: not in the table", n)
		}
		_ = Step(n) // must not panic
	}
	if len(seen) != len(transitionNames) {
		t.Errorf("the table has %d rows, the test knows %d names", len(seen), len(transitionNames))
	}
}

// The sweep reads both expiries in one statement: they must share their
// from-statuses and delay, and split the rows by kind between them.
func TestExpiriesShareOneRead(t *testing.T) {
	vm, pod := Step(ExpireVM), Step(ExpirePod)
	if !slices.Equal(vm.From, pod.From) || vm.After != pod.After || vm.After != InterruptedExpiry {
		t.Errorf("expiries differ: %+v / %+v", vm, pod)
	}
	if vm.Kinds != VMsOnly || pod.Kinds != PodsOnly {
		t.Errorf("kinds: %s / %s", vm.Kinds, pod.Kinds)
	}
	p := &VM{CapabilityTier: TierPod}
	if vm.Kinds.Matches(p) || !pod.Kinds.Matches(p) || !vm.Kinds.Matches(&VM{}) {
		t.Error("Kinds.Matches")
	}
}

func TestHoldingStatuses(t *testing.T) {
	for _, s := range VMStatuses {
		if s.Holds() != slices.Contains(HoldingStatuses, s) {
			t.Errorf("%s", s)
		}
	}
	if !VMInterrupted.Holds() || VMStopped.Holds() {
		t.Error("interrupted holds, stopped does not")
	}
}

func TestLifecycleRenders(t *testing.T) {
	table := LifecycleTable()
	for _, tr := range Lifecycle {
		if !strings.Contains(table, "| "+string(tr.Name)+" |") {
			t.Errorf("table lacks %s", tr.Name)
		}
		if s := tr.String(); !strings.HasPrefix(s, string(tr.Name)+": ") {
			t.Errorf("String() = %q", s)
		}
	}
	t.Log("\n" + table)
}

// Every statusReason word the seed lists is written by some row.
func TestEverySeedReasonIsProduced(t *testing.T) {
	written := map[string]bool{}
	for _, tr := range Lifecycle {
		if !tr.KeepsReason {
			written[tr.Reason] = true
		}
	}
	for _, r := range []string{ReasonNodeLost, ReasonNodeRemoved, ReasonVMExited, ReasonUserStopped, ReasonUserTerminated,
		ReasonUserRestarted, ReasonSpotReclaimed, ReasonSpotPreempted, ReasonInsufficientBalance, ReasonAccountSuspended,
		ReasonOrganizationDeleted, ReasonFailedToStartPrefix, ReasonNodeLeavingPrefix} {
		if !written[r] {
			t.Errorf("no transition writes %q", r)
		}
	}
}

func TestReasonFor(t *testing.T) {
	if r, ok := Step(AgentFailedStart).ReasonFor("the image could not be pulled."); !ok || r != "container failed to start: the image could not be pulled." {
		t.Errorf("detailed: %q %v", r, ok)
	}
	if r, ok := Step(VMCrashed).ReasonFor("QEMU was killed by signal 9 (killed)."); !ok || r != "vm failed while running: QEMU was killed by signal 9 (killed)." {
		t.Errorf("vm-crashed: %q %v", r, ok)
	}
	if _, ok := Step(AgentRunning).ReasonFor("x"); ok {
		t.Error("a kept reason writes nothing")
	}
	if r, ok := Step(UserStop).ReasonFor("ignored"); !ok || r != ReasonUserStopped {
		t.Errorf("plain: %q", r)
	}
}
