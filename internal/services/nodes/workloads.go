package nodes

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// What a heartbeat's workload reports do (docs/contract.md#agent): each
// moves only a row on the reporting node, of the generation it names, by
// the lifecycle transition workloadTransition picks. They are applied
// inside the heartbeat's transaction, after the node's row lock.

// workloadReport is what an agent says of one workload it was assigned,
// checked (checkWorkloads).
type workloadReport struct {
	ID         string
	Generation int
	State      string // one of agentapi.WorkloadStates
	Message    string // one sentence, for exited and failed
	// Stage is the provisioning stage it reached (one of agentStages), ""
	// when the agent said none.
	Stage string
	// Endpoint is where a VM answers as its runtime knows it (ssh://HOST:PORT
	// of a forwarded port), "" when the agent said none.
	Endpoint string
}

// movesEndpoint reports whether report r gives vm a new endpoint: where a
// VM answers is the node's to say (a forwarded port, a bridge address); a
// pod's endpoint is the platform's route.
func movesEndpoint(vm *models.VM, r workloadReport) bool {
	return r.Endpoint != "" && r.Endpoint != vm.EndpointURL && !vm.IsPod()
}

// agentStages are the provisioning stages an agent reports, in order; the
// server itself sets queued and scheduled (agentapi.ProvisioningStages).
var agentStages = []string{agentapi.StagePullingImage, agentapi.StageCreatingVolume, agentapi.StageBooting, agentapi.StageReady}

// stageOf is the stage report r moves vm to, "" when it moves none. A
// stage moves forward only, within the row's generation (the report names
// it; the server starts every run at scheduled): a stage at or before the
// row's is a late or repeated report and changes nothing. A running report
// without a stage (an agent that predates stages) is ready.
func stageOf(vm *models.VM, r workloadReport) string {
	stage := r.Stage
	if stage == "" && r.State == agentapi.StateRunning {
		stage = agentapi.StageReady
	}
	if stage == "" || (vm.Status != models.VMDeploying && vm.Status != models.VMRunning) {
		return ""
	}
	if slices.Index(agentapi.ProvisioningStages, stage) <= slices.Index(agentapi.ProvisioningStages, vm.ProvisioningStage) {
		return ""
	}
	return stage
}

// lostJob is a pod that lost its job on a live node (models.PodJobLost) in
// a heartbeat; the platform re-submits it afterwards.
type lostJob struct {
	ID             string
	OrganizationID string
}

// assignedStatuses are the statuses whose rows an agent runs: a deploying
// row is to be started, a running one kept running. Interrupted rows are
// not: node_lost ones resume when their node reports (models.NodeBack)
// and appear here then; job-lost ones are re-submitted (deploying) first.
var assignedStatuses = []models.VMStatus{models.VMDeploying, models.VMRunning}

// exitedBeforeRunning stands in for an agent that gave no message.
const exitedBeforeRunning = "it exited before the node agent saw it running."

// workloadTransition is what a report r does to vm, and the detail its
// reason carries; "" when it does nothing.
func workloadTransition(vm *models.VM, r workloadReport) (models.TransitionName, string) {
	switch {
	case tearingDown(vm):
		// Told stop: only its end moves it; until then it holds what it held.
		if r.State == agentapi.StateGone {
			return models.AgentGone, ""
		}
		return "", ""
	case vm.Status == models.VMRunning && r.State == agentapi.StateRunning &&
		(vm.Action == models.ActionReboot || vm.Action == models.ActionRecreate):
		// The reboot (recreate) it was told, done: acknowledged once, in
		// the event log with the generation.
		return models.AgentRestarted, ""
	case vm.Status == models.VMDeploying && r.State == agentapi.StateRunning:
		return models.AgentRunning, ""
	case vm.Status == models.VMDeploying && r.State == agentapi.StateFailed:
		return models.AgentFailedStart, r.Message
	case vm.Status == models.VMDeploying && r.State == agentapi.StateExited:
		// It ended before it ever ran: a failed start all the same.
		msg := r.Message
		if msg == "" {
			msg = exitedBeforeRunning
		}
		return models.AgentFailedStart, msg
	case vm.Status == models.VMRunning && (r.State == agentapi.StateExited || r.State == agentapi.StateFailed):
		// A pod's runtime is the platform's: it lost its job and is
		// re-submitted. A plain VM's end is the row vmEnds names for it.
		if vm.IsPod() {
			return models.PodJobLost, ""
		}
		name := vmEnds[r.State]
		if models.Step(name).Detailed {
			return name, r.Message
		}
		return name, ""
	}
	return "", ""
}

// vmEnds is the row a running VM's end moves it by, by the state its
// agent reports: a guest that powered itself off (exited) is the owner's
// own shutdown, stopped with vm_exited; a VM whose process the runtime
// lost (failed: QEMU crashed or was killed) is failed, with the agent's
// sentence naming how it ended.
var vmEnds = map[string]models.TransitionName{
	agentapi.StateExited: models.VMExited,
	agentapi.StateFailed: models.VMCrashed,
}

// tearingDown reports whether vm's node is to tear it down: it left the
// statuses an agent runs and holds what it held until the node says it is
// gone (a flag on a row still assigned is a fixture's).
func tearingDown(vm *models.VM) bool {
	return vm.TearingDown && !slices.Contains(assignedStatuses, vm.Status)
}

// applyWorkloadReports applies each report about a row on node of the
// generation it names; reports about other nodes' rows, earlier
// generations or unknown ids are ignored. A row tearing down on the node
// that the heartbeat does not list at all is gone as well: the agent runs
// nothing of that id (an agent older than MinAgentTeardown drops it once
// it is no longer assigned; any agent that never received it). down are
// the ids of the rows tearing down on the node, locked. It answers the
// pods that lost their job.
func (s *Service) applyWorkloadReports(tx *store.Txn, node *models.Node, reports []workloadReport, down []string, now time.Time) ([]lostJob, error) {
	if len(reports) == 0 && len(down) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(reports)+len(down))
	for _, r := range reports {
		ids = append(ids, r.ID)
	}
	ids = append(ids, down...)
	slices.Sort(ids)
	vms, err := s.store.LockVMsOnNode(tx, node.ID, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*models.VM, len(vms))
	for _, vm := range vms {
		byID[vm.ID] = vm
	}
	by := agentActor(node.Name)
	listed := make(map[string]bool, len(reports))
	for _, r := range reports {
		listed[r.ID] = true
	}
	for _, vm := range vms {
		if tearingDown(vm) && !listed[vm.ID] {
			if _, err := s.store.Apply(tx, vm, store.Change{Transition: models.AgentGone, Actor: by}, now); err != nil {
				return nil, err
			}
		}
	}
	var lost []lostJob
	for _, r := range reports {
		vm := byID[r.ID]
		if vm == nil || vm.Generation != r.Generation {
			continue
		}
		if movesEndpoint(vm, r) {
			if err := s.store.SetEndpoint(tx, vm, r.Endpoint, now); err != nil {
				return nil, err
			}
		}
		stage := stageOf(vm, r)
		name, detail := workloadTransition(vm, r)
		if name == "" || !models.Step(name).Allows(vm) {
			// The stage alone moved: its own event, the status unchanged.
			if stage != "" {
				if _, err := s.store.SetStage(tx, vm, store.Change{Transition: models.AgentStage, Actor: by, Stage: stage}, now); err != nil {
					return nil, err
				}
			}
			continue
		}
		// The stage the report reached is written with the transition it
		// causes, in its one event (running is ready; a failed start keeps
		// the stage it failed at).
		if _, err := s.store.Apply(tx, vm, store.Change{Transition: name, Actor: by, Detail: detail, Stage: stage}, now); err != nil {
			return nil, err
		}
		if name == models.PodJobLost {
			lost = append(lost, lostJob{ID: vm.ID, OrganizationID: vm.OrganizationID})
		}
	}
	return lost, nil
}

// Limits on a heartbeat's workload reports.
const (
	maxReportWorkloads = 1024
	maxMessageLen      = 300 // bytes: one sentence, as statusReason carries it
)

// checkWorkloads checks the workload reports of a heartbeat: each names
// an id, a generation and a known state, at most once; a failed or exited
// one may carry one sentence of printable text. The first bad field
// answers a 400 naming it.
func checkWorkloads(in []agentapi.WorkloadReport) ([]workloadReport, error) {
	if len(in) > maxReportWorkloads {
		return nil, apierr.BadRequest("workloads lists %d workloads, more than %d", len(in), maxReportWorkloads)
	}
	out := make([]workloadReport, len(in))
	seen := map[string]int{}
	for i, w := range in {
		field := fmt.Sprintf("workloads[%d]", i)
		switch j, dup := seen[w.ID]; {
		case w.ID == "":
			return nil, apierr.BadRequest("%s.id is missing", field)
		case len(w.ID) > maxTextLen || !printable(w.ID) || containsSpace(w.ID):
			return nil, apierr.BadRequest("%s.id must be at most %d bytes of printable text without spaces", field, maxTextLen)
		case dup:
			return nil, apierr.BadRequest("%s.id %s is also the id of workloads[%d]", field, w.ID, j)
		case w.Generation < 0:
			return nil, apierr.BadRequest("%s.generation must not be negative", field)
		case !slices.Contains(agentapi.WorkloadStates, w.State):
			return nil, apierr.BadRequest("%s.state %q is not one of %s", field, w.State, strings.Join(agentapi.WorkloadStates, ", "))
		}
		if err := checkSentence(field+".message", w.Message); err != nil {
			return nil, err
		}
		if w.State == agentapi.StateFailed && w.Message == "" {
			return nil, apierr.BadRequest("%s.message is missing: a failed workload says why in one sentence", field)
		}
		// A stage outside the closed list is refused as an unknown state
		// is: both sides share agentapi's list, so it is a broken agent.
		if w.ProvisioningStage != "" && !slices.Contains(agentStages, w.ProvisioningStage) {
			return nil, apierr.BadRequest("%s.provisioningStage %q is not one of %s (the server sets %s and %s itself)", field,
				w.ProvisioningStage, strings.Join(agentStages, ", "), agentapi.StageQueued, agentapi.StageScheduled)
		}
		if err := checkEndpoint(field+".endpoint", w.Endpoint); err != nil {
			return nil, err
		}
		seen[w.ID] = i
		out[i] = workloadReport{ID: w.ID, Generation: w.Generation, State: w.State, Message: w.Message, Stage: w.ProvisioningStage, Endpoint: w.Endpoint}
	}
	return out, nil
}

// checkSentence holds a message to what a statusReason can carry: one line
// of printable text, one sentence (no sentence end before its last
// character), bounded.
func checkSentence(field, s string) error {
	switch {
	case s == "":
		return nil
	case !utf8.ValidString(s) || !printable(s):
		return apierr.BadRequest("%s must be printable text (no line breaks or control characters)", field)
	case len(s) > maxMessageLen:
		return apierr.BadRequest("%s is %d bytes; one sentence of at most %d bytes, please", field, len(s), maxMessageLen)
	case strings.TrimSpace(s) != s:
		return apierr.BadRequest("%s must not start or end with spaces", field)
	}
	body := strings.TrimRight(s, ".!?")
	for _, end := range []string{". ", "! ", "? "} {
		if strings.Contains(body, end) {
			return apierr.BadRequest("%s must be one sentence; it has another after %q", field, end[:1])
		}
	}
	return nil
}

// assignmentsOf is the wire form of what should run on a node.
func assignmentsOf(as []store.Assignment) []agentapi.Assignment {
	out := make([]agentapi.Assignment, len(as))
	for i, a := range as {
		w := agentapi.Assignment{ID: a.ID, Generation: a.Generation, GPUs: a.GPUUUIDs, GPUIndexes: a.GPUIndexes,
			Kind: agentapi.KindVM, Image: a.Image, CPUCores: a.CPUCores, RAMGb: a.RAMGb, DiskSizeGb: a.DiskSizeGb,
			Public: a.Public, EndpointURL: a.EndpointURL, Action: agentapi.ActionRun, SSHPublicKeys: a.SSHPublicKeys}
		var vol *agentapi.Volume
		if v := a.Volume; v != nil {
			vol = &agentapi.Volume{ID: v.ID, SizeGb: v.SizeGb, Fresh: v.Fresh}
		}
		if a.Pod {
			w.Kind = agentapi.KindPod
			if vol != nil {
				vol.MountPath = agentapi.WorkspaceMount
			}
		}
		switch {
		case a.TearingDown:
			w.Action = agentapi.ActionStop
			// Deleted: the row is terminated or its disk otherwise gone.
			if vol != nil {
				vol.Delete = a.Terminated || a.Volume.DeletedAt != nil
			}
		case a.Action != "":
			w.Action = a.Action
		}
		w.Volume = vol
		out[i] = w
	}
	return out
}

// maxEndpointLen bounds a reported endpoint, as the create's endpointUrl.
const maxEndpointLen = 2048

// checkEndpoint holds a reported endpoint to an absolute URL of ssh, http
// or https with a host, no credentials, printable and bounded: it becomes
// the VM's endpointUrl, which its owner reads and follows.
func checkEndpoint(field, s string) error {
	if s == "" {
		return nil
	}
	if len(s) > maxEndpointLen || !printable(s) || containsSpace(s) {
		return apierr.BadRequest("%s must be at most %d bytes of printable text without spaces", field, maxEndpointLen)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return apierr.BadRequest("%s %q is not an absolute URL with a host (and no credentials)", field, s)
	}
	if u.Scheme != "ssh" && u.Scheme != "http" && u.Scheme != "https" {
		return apierr.BadRequest("%s %q is not an ssh, http or https URL", field, s)
	}
	return nil
}
