package models

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The lifecycle of a VM or pod: every status change the server makes, as
// data. Restart (package compute), the heartbeat sweep and the node agent's
// reports (package store) look their rows up here and write what the row
// says; a new transition is a new row (and the code that triggers it), and
// nothing else names a from-status, a to-status or a statusReason.
//
// The table lives in models, beside VMStatus, so that VMStatus.Holds and
// VM.IsPod read the same definitions without an import cycle (a package of
// its own would import models, and models could not call back into it).

// TierPod is the capabilityTier that marks a VM row as a pod.
const TierPod = "pod"

// StatusReason values the server writes.
const (
	// ReasonUserRestarted: a restart succeeded.
	ReasonUserRestarted = "user_restarted"
	// ReasonNodeLost: the node stopped sending heartbeats; the VM or pod
	// resumes by itself when the node reports again.
	ReasonNodeLost = "node_lost"
	// ReasonNodeRemoved: the node was taken out of the fleet; the VM's disk
	// (the pod's volume) went with it, so a restart places it afresh.
	// The server reads it and never writes it.
	ReasonNodeRemoved = "node_removed"
)

// HoldingStatuses are the statuses in which a VM or pod holds what it was
// given: its GPUs, a plain VM's CPU, RAM and disk on its node, and a pod's
// InfiniBand address.
var HoldingStatuses = []VMStatus{VMRunning, VMDeploying, VMInterrupted}

// Holds reports whether a VM in this status holds its GPUs, CPU, RAM, disk
// and InfiniBand address.
func (s VMStatus) Holds() bool { return slices.Contains(HoldingStatuses, s) }

// InterruptedExpiry is how long a VM or pod stays interrupted before the
// sweep stops the VM (disk kept) or deletes the pod.
const InterruptedExpiry = 7 * 24 * time.Hour

// TransitionName is how code names the row it applies.
type TransitionName string

const (
	RestartReboot  TransitionName = "restart-reboot"
	RestartResume  TransitionName = "restart-resume"
	RestartDeploy  TransitionName = "restart-deploy"
	RestartReplace TransitionName = "restart-replace"
	NodeLost       TransitionName = "node-lost"
	NodeBack       TransitionName = "node-back"
	ExpireVM       TransitionName = "expire-vm"
	ExpirePod      TransitionName = "expire-pod"
)

// Kinds says which rows a transition applies to.
type Kinds int

const (
	VMsAndPods Kinds = iota
	VMsOnly
	PodsOnly
)

func (k Kinds) String() string {
	switch k {
	case VMsOnly:
		return "VM"
	case PodsOnly:
		return "pod"
	}
	return "VM or pod"
}

// Matches reports whether the transition applies to vm's kind.
func (k Kinds) Matches(vm *VM) bool {
	switch k {
	case VMsOnly:
		return !vm.IsPod()
	case PodsOnly:
		return vm.IsPod()
	}
	return true
}

// Resources says what a transition does to what the VM or pod holds.
type Resources int

const (
	// Keeps: it holds what it held (GPUs, host share, address).
	Keeps Resources = iota
	// Claims: it takes GPUs on its node, and a host share (VM) or an
	// InfiniBand address (pod) there.
	Claims
	// Moves: it lets go of what it held and claims on the node it is placed on.
	Moves
	// Releases: it lets go of its GPUs, host share and address.
	Releases
)

func (r Resources) String() string {
	return [...]string{"keeps what it holds", "claims GPUs, host share or address",
		"releases what it held, claims on the new node", "releases GPUs, host share and address"}[r]
}

// Transition is one status change.
type Transition struct {
	Name    TransitionName
	Trigger string // what causes it, in words
	Kinds   Kinds
	From    []VMStatus
	// FromReason, when set, limits it to rows with this statusReason.
	FromReason string
	// After, when set, is how long a row must have been in From (since
	// interruptedAt) before the transition applies.
	After time.Duration
	To    VMStatus
	// Reason is the statusReason written, "" clearing it, unless KeepsReason.
	Reason      string
	KeepsReason bool
	Resources   Resources
}

// StampsInterruptedAt reports whether the transition sets interruptedAt to
// now; every other transition clears it.
func (t Transition) StampsInterruptedAt() bool { return t.To == VMInterrupted }

// Lifecycle is every transition, in the order a reader meets them.
var Lifecycle = []Transition{
	{Name: RestartReboot, Trigger: "restartVm of a running VM or pod (rebooted in place)",
		From: []VMStatus{VMRunning}, To: VMRunning, Reason: ReasonUserRestarted, Resources: Keeps},
	{Name: RestartResume, Trigger: "restartVm of an interrupted VM or pod whose node is online again",
		From: []VMStatus{VMInterrupted}, To: VMRunning, Reason: ReasonUserRestarted, Resources: Keeps},
	{Name: RestartDeploy, Trigger: "restartVm of a stopped or failed VM or pod on its own node",
		From: []VMStatus{VMStopped, VMFailed}, To: VMDeploying, Reason: ReasonUserRestarted, Resources: Claims},
	{Name: RestartReplace, Trigger: "restartVm of a VM or pod whose node is lost (placed afresh)",
		From: []VMStatus{VMStopped, VMFailed, VMInterrupted}, To: VMDeploying, Reason: ReasonUserRestarted, Resources: Moves},
	{Name: NodeLost, Trigger: "sweep: the node sent no heartbeat for longer than the grace",
		From: []VMStatus{VMRunning}, To: VMInterrupted, Reason: ReasonNodeLost, Resources: Keeps},
	{Name: NodeBack, Trigger: "node agent report (inventory or heartbeat) of a node that is not removed",
		From: []VMStatus{VMInterrupted}, FromReason: ReasonNodeLost, To: VMRunning, Reason: "", Resources: Keeps},
	{Name: ExpireVM, Trigger: "sweep: interrupted for 7 days (disk kept)", Kinds: VMsOnly, After: InterruptedExpiry,
		From: []VMStatus{VMInterrupted}, To: VMStopped, KeepsReason: true, Resources: Releases},
	{Name: ExpirePod, Trigger: "sweep: interrupted for 7 days (deleted)", Kinds: PodsOnly, After: InterruptedExpiry,
		From: []VMStatus{VMInterrupted}, To: VMTerminated, KeepsReason: true, Resources: Releases},
}

// Step is the row named name. It panics on a name the table lacks, which
// the table's test rules out for every TransitionName constant.
func Step(name TransitionName) Transition {
	for _, t := range Lifecycle {
		if t.Name == name {
			return t
		}
	}
	panic(fmt.Sprintf("models: no lifecycle transition %q", name))
}

// String is one line of the table.
func (t Transition) String() string {
	var from []string
	for _, s := range t.From {
		from = append(from, string(s))
	}
	reason := fmt.Sprintf("statusReason %q", t.Reason)
	if t.KeepsReason {
		reason = "statusReason kept"
	}
	cond := ""
	if t.FromReason != "" {
		cond = fmt.Sprintf(" (statusReason %q)", t.FromReason)
	}
	return fmt.Sprintf("%s: %s %s%s → %s, %s, %s; on %s", t.Name, t.Kinds, strings.Join(from, "|"), cond,
		t.To, reason, t.Resources, t.Trigger)
}

// LifecycleTable renders the table in Markdown, for the README.
func LifecycleTable() string {
	var b strings.Builder
	b.WriteString("| transition | trigger | applies to | from | to | statusReason | resources |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range Lifecycle {
		var from []string
		for _, s := range t.From {
			from = append(from, string(s))
		}
		f := strings.Join(from, ", ")
		if t.FromReason != "" {
			f += fmt.Sprintf(" (statusReason `%s`)", t.FromReason)
		}
		reason := fmt.Sprintf("`%s`", t.Reason)
		switch {
		case t.KeepsReason:
			reason = "kept"
		case t.Reason == "":
			reason = "cleared"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Name, t.Trigger, t.Kinds, f, t.To, reason, t.Resources)
	}
	return b.String()
}
