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
	ReasonNodeRemoved = "node_removed"
	// ReasonVMExited: the VM's own process ended (a shutdown from inside).
	ReasonVMExited = "vm_exited"
	// ReasonUserStopped and ReasonUserTerminated: the owner asked.
	ReasonUserStopped    = "user_stopped"
	ReasonUserTerminated = "user_terminated"
	// Interruptible capacity taken back: for a reserved tenant's restart
	// (placement's preemption) or by the node's capacity owner (operator).
	ReasonSpotPreempted = "spot_preempted_for_reservation_tenant"
	ReasonSpotReclaimed = "spot_reclaimed_by_capacity_owner"
	// The organization's state stopped what it ran.
	ReasonInsufficientBalance = "auto_stopped_insufficient_balance"
	ReasonAccountSuspended    = "auto_stopped_account_suspended"
	ReasonOrganizationDeleted = "auto_stopped_organization_deleted"
	// ReasonJobLost: a pod lost its supervisor or its job on a live node;
	// the platform re-submits it (free text: the seed has no word for it).
	ReasonJobLost = "lost its job on a live node; the platform re-submits it"
	// Reasons that carry a detail after the prefix: one sentence of ours,
	// or the RFC 3339 instant the node leaves at.
	ReasonFailedToStartPrefix = "container failed to start: "
	ReasonNodeLeavingPrefix   = "node leaving at "
	// ReasonVMFailedPrefix: a running VM's process ended without the
	// guest powering off (its QEMU crashed or was killed); the detail is
	// the node agent's sentence naming how it ended. A guest that powered
	// itself off is ReasonVMExited instead.
	ReasonVMFailedPrefix = "vm failed while running: "
	// ReasonPendingTimeoutPrefix: a pending VM or pod waited longer than
	// --pending-timeout; the detail says how long that was.
	ReasonPendingTimeoutPrefix = "pending timeout: "
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

	AgentRunning     TransitionName = "agent-running"
	AgentRestarted   TransitionName = "agent-restarted"
	AgentGone        TransitionName = "agent-gone"
	TeardownExpired  TransitionName = "teardown-expired"
	AgentFailedStart TransitionName = "agent-failed-start"
	ProvisionTimeout TransitionName = "provision-timeout"
	VMExited         TransitionName = "vm-exited"
	VMCrashed        TransitionName = "vm-crashed"
	PodJobLost       TransitionName = "pod-job-lost"
	PodResubmit      TransitionName = "pod-resubmit"
	UserStop         TransitionName = "user-stop"
	UserTerminate    TransitionName = "user-terminate"
	NodeLeaving      TransitionName = "node-leaving"
	NodeStaying      TransitionName = "node-staying"
	NodeRemoval      TransitionName = "node-removed"
	SpotPreempted    TransitionName = "spot-preempted"
	SpotReclaimed    TransitionName = "spot-reclaimed"
	OrgSuspended     TransitionName = "org-suspended"
	OrgBalance       TransitionName = "org-balance-exhausted"
	OrgDeleted       TransitionName = "org-deleted"
	// BalanceRanOut is the metering pass's own org-balance-exhausted.
	BalanceRanOut TransitionName = "balance-ran-out"

	CreatePlaced TransitionName = "create-placed"
	CreateQueued TransitionName = "create-queued"
	QueuePlaced  TransitionName = "queue-placed"
	QueueTimeout TransitionName = "queue-timeout"
)

// AgentStage names the event of a provisioning stage the node agent
// reported (pulling_image, creating_volume, booting, ready) when its
// report changed nothing else. It is not a row of the table: the status
// does not change (from and to are the row's status), only
// provisioningStage does.
const AgentStage TransitionName = "agent-stage"

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
	// Releases: it lets go of its GPUs, host share and address — at once
	// on a node no agent reports for, and otherwise once the node has
	// torn it down (tearingDown until then; see Frees).
	Releases
	// Frees: its node's teardown is over (or given up on), and it lets go
	// of what the teardown held.
	Frees
)

func (r Resources) String() string {
	return [...]string{"keeps what it holds", "claims GPUs, host share or address",
		"releases what it held, claims on the new node",
		"releases GPUs, host share and address (once torn down, where an agent reports)",
		"frees what the teardown held"}[r]
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
	// SameStatus: the row keeps its status (To is unused): an event about
	// its node's work, not a status change.
	SameStatus bool
	// SettlesAction: the node did what the row's generation asked (a
	// reboot, a recreate); its action is run from now on.
	SettlesAction bool
	// NodeEnded: the node agent reported that it ended by itself, so
	// nothing of it is left to tear down and it releases at once.
	NodeEnded bool
	// Reason is the statusReason written, "" clearing it, unless KeepsReason.
	Reason      string
	KeepsReason bool
	// Detailed: the written reason is Reason (a prefix) followed by the
	// detail the caller gives (a sentence, an instant).
	Detailed  bool
	Resources Resources
	// DiskGone: the VM's disk (a pod's volume) is gone with it.
	DiskGone bool
	// Deletes: the row leaves the API (kept for the audit trail).
	Deletes bool
}

// ReasonFor is the statusReason t writes with detail, and whether it
// writes one at all (false: the row keeps its own).
func (t Transition) ReasonFor(detail string) (string, bool) {
	switch {
	case t.KeepsReason:
		return "", false
	case t.Detailed:
		return t.Reason + detail, true
	}
	return t.Reason, true
}

// Allows reports whether t applies to vm as it stands.
func (t Transition) Allows(vm *VM) bool {
	return t.Kinds.Matches(vm) && slices.Contains(t.From, vm.Status) &&
		(t.FromReason == "" || vm.StatusReason == t.FromReason)
}

// StampsInterruptedAt reports whether the transition sets interruptedAt to
// now; every other transition clears it (a SameStatus one leaves it).
func (t Transition) StampsInterruptedAt() bool { return t.To == VMInterrupted }

// ToFrom is the status a row in from has after t.
func (t Transition) ToFrom(from VMStatus) VMStatus {
	if t.SameStatus {
		return from
	}
	return t.To
}

// Actions a row's generation asks of its node agent (agentapi's Action
// values of the same names; the agent is told stop while the row tears
// down, whatever its action).
const (
	ActionRun      = "run"
	ActionReboot   = "reboot"
	ActionRecreate = "recreate"
)

// ActionFor is the action of the new generation t starts for vm: run on
// entering deploying, reboot (a VM) or recreate (a pod's container) on a
// running row's restart; "" when t starts no generation.
func (t Transition) ActionFor(vm *VM) string {
	switch {
	case t.Name == RestartReboot && vm.IsPod():
		return ActionRecreate
	case t.Name == RestartReboot:
		return ActionReboot
	case t.To == VMDeploying && !t.SameStatus:
		return ActionRun
	}
	return ""
}

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
	{Name: ExpirePod, Trigger: "sweep: interrupted for 7 days (deleted: gone from the API, kept for the audit trail)",
		Kinds: PodsOnly, After: InterruptedExpiry,
		From: []VMStatus{VMInterrupted}, To: VMTerminated, KeepsReason: true, Resources: Releases, DiskGone: true, Deletes: true},

	{Name: AgentRunning, Trigger: "node agent reports the workload running",
		From: []VMStatus{VMDeploying}, To: VMRunning, KeepsReason: true, Resources: Keeps},
	{Name: AgentRestarted, Trigger: "node agent reports the rebooted VM (recreated pod) running in the generation it was given",
		From: []VMStatus{VMRunning}, To: VMRunning, KeepsReason: true, Resources: Keeps, SettlesAction: true},
	{Name: AgentGone, Trigger: "node agent reports the workload gone after a teardown (or a heartbeat no longer lists it)",
		From: []VMStatus{VMStopped, VMFailed, VMTerminated}, SameStatus: true, KeepsReason: true, Resources: Frees},
	{Name: TeardownExpired, Trigger: "sweep: tearing down for longer than --teardown-grace on a node that is not online",
		From: []VMStatus{VMStopped, VMFailed, VMTerminated}, SameStatus: true, KeepsReason: true, Resources: Frees},
	{Name: AgentFailedStart, Trigger: "node agent reports that the workload failed to start",
		From: []VMStatus{VMDeploying}, To: VMFailed, Reason: ReasonFailedToStartPrefix, Detailed: true, Resources: Releases, NodeEnded: true},
	{Name: ProvisionTimeout, Trigger: "sweep: still deploying after --provision-timeout",
		From: []VMStatus{VMDeploying}, To: VMFailed, Reason: ReasonFailedToStartPrefix, Detailed: true, Resources: Releases},
	{Name: VMExited, Trigger: "node agent reports that the VM exited by itself", Kinds: VMsOnly,
		From: []VMStatus{VMRunning}, To: VMStopped, Reason: ReasonVMExited, Resources: Releases, NodeEnded: true},
	{Name: VMCrashed, Trigger: "node agent reports that the running VM failed (its process crashed: not the guest's own poweroff)", Kinds: VMsOnly,
		From: []VMStatus{VMRunning}, To: VMFailed, Reason: ReasonVMFailedPrefix, Detailed: true, Resources: Releases, NodeEnded: true},
	{Name: PodJobLost, Trigger: "node agent reports that the pod lost its supervisor or job on a live node", Kinds: PodsOnly,
		From: []VMStatus{VMRunning}, To: VMInterrupted, Reason: ReasonJobLost, Resources: Keeps},
	{Name: PodResubmit, Trigger: "the platform re-submits a pod that lost its job, when it fits on its node", Kinds: PodsOnly,
		From: []VMStatus{VMInterrupted}, FromReason: ReasonJobLost, To: VMDeploying, KeepsReason: true, Resources: Keeps},
	{Name: UserStop, Trigger: "stopVm / POST /v1/vms/{id}/stop",
		From: []VMStatus{VMRunning, VMInterrupted, VMDeploying}, To: VMStopped, Reason: ReasonUserStopped, Resources: Releases},
	{Name: UserTerminate, Trigger: "terminateVm / DELETE /v1/vms/{id}",
		From: []VMStatus{VMPending, VMDeploying, VMRunning, VMStopped, VMFailed, VMInterrupted}, To: VMTerminated,
		Reason: ReasonUserTerminated, Resources: Releases, DiskGone: true},
	{Name: NodeLeaving, Trigger: "operator sets the node's leavingAt",
		From: []VMStatus{VMRunning}, To: VMRunning, Reason: ReasonNodeLeavingPrefix, Detailed: true, Resources: Keeps},
	// The caller selects the rows whose statusReason has the leaving prefix
	// (FromReason matches one whole value, and the instant varies).
	{Name: NodeStaying, Trigger: "operator clears the node's leavingAt before it passes (rows that carry `node leaving at …`)",
		From: []VMStatus{VMRunning}, To: VMRunning, Reason: "", Resources: Keeps},
	{Name: NodeRemoval, Trigger: "sweep: the node's leavingAt has passed (the node becomes removed)",
		From: []VMStatus{VMPending, VMDeploying, VMRunning, VMStopped, VMFailed, VMInterrupted}, To: VMStopped,
		Reason: ReasonNodeRemoved, Resources: Releases, DiskGone: true},
	{Name: SpotPreempted, Trigger: "a reserved tenant's restart preempts interruptible capacity (placement's preemption)",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonSpotPreempted, Resources: Releases},
	{Name: SpotReclaimed, Trigger: "operator reclaims a node's capacity for its owner",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonSpotReclaimed, Resources: Releases},
	{Name: OrgSuspended, Trigger: "operator suspends the organization",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonAccountSuspended, Resources: Releases},
	{Name: OrgBalance, Trigger: "operator marks the organization's balance exhausted",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonInsufficientBalance, Resources: Releases},
	{Name: BalanceRanOut, Trigger: "metering pass: a prepaid organization's balance no longer covers the next metering period of what it runs (the organization becomes balance exhausted)",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonInsufficientBalance, Resources: Releases},
	{Name: OrgDeleted, Trigger: "operator deletes the organization",
		From: []VMStatus{VMRunning, VMDeploying, VMInterrupted}, To: VMStopped, Reason: ReasonOrganizationDeleted, Resources: Releases},

	// A created row is written pending (as a Kubernetes pod is born
	// Pending) and, in the same transaction, either placed or queued: every
	// create is one event whose from is a real status.
	{Name: CreatePlaced, Trigger: "createVm / POST /v1/vms that fits on a node now",
		From: []VMStatus{VMPending}, To: VMDeploying, Reason: "", Resources: Claims},
	{Name: CreateQueued, Trigger: "createVm / POST /v1/vms that fits on no node now (queue true, the default)",
		From: []VMStatus{VMPending}, To: VMPending, Detailed: true, Resources: Keeps},
	{Name: QueuePlaced, Trigger: "the scheduler places a pending VM or pod once capacity frees",
		From: []VMStatus{VMPending}, To: VMDeploying, Reason: "", Resources: Claims},
	{Name: QueueTimeout, Trigger: "scheduler: pending for longer than --pending-timeout",
		From: []VMStatus{VMPending}, To: VMFailed, Reason: ReasonPendingTimeoutPrefix, Detailed: true, Resources: Keeps},
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
		t.toWords(), reason, t.Resources, t.Trigger)
}

// toWords is t's to-status as the table shows it.
func (t Transition) toWords() string {
	if t.SameStatus {
		return "unchanged"
	}
	return string(t.To)
}

// LifecycleTable renders the table in Markdown, for docs/architecture.md.
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
		case t.Detailed && t.Reason == "":
			reason = "placement's summary: `0/N nodes can take it: …`"
		case t.Detailed:
			reason = fmt.Sprintf("`%s…`", t.Reason)
		case t.Reason == "":
			reason = "cleared"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Name, t.Trigger, t.Kinds, f, t.toWords(), reason, t.Resources)
	}
	return b.String()
}

// ActorKind says who made a transition.
type ActorKind string

const (
	ActorUser     ActorKind = "user"     // an organization's API key
	ActorAgent    ActorKind = "agent"    // a node agent's report
	ActorSweep    ActorKind = "sweep"    // the server's own periodic sweep
	ActorOperator ActorKind = "operator" // an administrator of the fleet
	ActorPlatform ActorKind = "platform" // the platform acting on its own (re-submits, preemption, the metering pass)
	// ActorScheduler: the scheduler placing a pending row or timing it out.
	ActorScheduler ActorKind = "scheduler"
)

// Actor is who made a transition: a kind and, where there is one, who of
// that kind (a key's id, a node's name).
type Actor struct {
	Kind ActorKind
	ID   string
}

// VMEvent is one transition of one VM or pod, as the event log keeps it.
type VMEvent struct {
	// ID is the row's place in the whole log, never shown: it would tell
	// one organization how many events the others had between its own.
	ID int64 `gorm:"primaryKey;autoIncrement" json:"-"`
	// Seq is the event's id as its organization sees it (vmEvents' and
	// VM.events' id and after, REST's events): its own events counted, in
	// commit order.
	Seq            int64          `gorm:"column:seq" json:"id"`
	VMID           string         `gorm:"column:vm_id" json:"vmId"`
	OrganizationID string         `json:"organizationId"`
	From           VMStatus       `gorm:"column:from_status" json:"from"`
	To             VMStatus       `gorm:"column:to_status" json:"to"`
	Reason         string         `json:"reason"`
	Transition     TransitionName `json:"transition"`
	ActorKind      ActorKind      `json:"actorKind"`
	ActorID        string         `json:"actorId"`
	At             time.Time      `json:"at"`
	// Generation is the row's generation after the change: the run an
	// agent acknowledged (agent-restarted), the one torn down (agent-gone);
	// nil on events written before it was kept.
	Generation *int `gorm:"column:generation" json:"generation"`
	// ProvisioningStage is the row's provisioningStage after the event.
	ProvisioningStage string `gorm:"column:provisioning_stage" json:"provisioningStage"`
	// VolumeID is, on an event that started a run (its to is deploying),
	// the volume the run is bound to; "" on other events and on a row
	// without a disk or volume. FreshVolume: the event made that volume,
	// empty — a first placement, or a move whose old volume is gone.
	VolumeID    string `gorm:"column:volume_id" json:"volumeId"`
	FreshVolume bool   `gorm:"column:fresh_volume" json:"freshVolume"`
	// PricePerHourCents is the row's price after the event, which the
	// metering pass bills its running time at; nil on events written
	// before it was kept (the pass reads the row's). StorageGb is the
	// disk or volume the row keeps where its status after the event is
	// stopped (billed as storage), 0 otherwise. Neither is on the wire.
	PricePerHourCents *int `gorm:"column:price_per_hour_cents" json:"-"`
	StorageGb         int  `gorm:"column:storage_gb" json:"-"`
}

// TableName is the event log's table.
func (VMEvent) TableName() string { return "vm_events" }
