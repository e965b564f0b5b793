package compute

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/quotas"
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// CreateRequest is what a user chooses for a new VM or pod (createVm,
// POST /v1/vms): its parts, or later an instance type; everything else of
// the VM object is the server's. A nil pointer is a field the request left
// out.
type CreateRequest struct {
	Name string `json:"name"`
	// InstanceType names an entry of the catalog (gpu_2x_h100_sxm5): its
	// GPU model, count, CPU, RAM, disk, a pod's default volume and price.
	// The parts are then left out.
	InstanceType *string `json:"instanceType"`
	// CapabilityTier is "pod" for a pod; absent or "" for a plain VM.
	CapabilityTier *string `json:"capabilityTier"`
	GPUModelID     *string `json:"gpuModelId"`
	GPUCount       *int    `json:"gpuCount"`
	// CPU, RAM and disk of the node a plain VM holds while it runs
	// (required for a VM; a pod holds none of its node's, so they are
	// optional and only recorded).
	CPUCores   *int `json:"cpuCores"`
	RAMGb      *int `json:"ramGb"`
	DiskSizeGb *int `json:"diskSizeGb"`
	// ImageURL is the image a pod runs (required for a pod) or a VM boots.
	ImageURL *string `json:"imageUrl"`
	// VolumeGb is a pod's /workspace volume (required for a pod, refused
	// for a VM, whose disk is diskSizeGb).
	VolumeGb *int  `json:"volumeGb"`
	Public   *bool `json:"public"`
	// ClusterID and NodePool keep the placement within one cluster, one
	// node pool, or both.
	ClusterID *string `json:"clusterId"`
	NodePool  *string `json:"nodePool"`
	// Queue false refuses with 503 and Retry-After when nothing fits now,
	// instead of creating the VM pending (the default).
	Queue *bool `json:"queue"`
	// Priority orders the VM in its organization's queue while pending
	// (0–1000, default 0, higher first).
	Priority *int `json:"priority"`
	// SSHPublicKeys are OpenSSH public keys a VM's guest authorizes (the
	// node hands them to cloud-init): at most MaxSSHKeys, each one key
	// (checkSSHKeys). A pod takes none.
	SSHPublicKeys []string `json:"sshPublicKeys"`
}

// The bounds of a create's parts (docs/decisions/0003-creating-vms-and-pods.md).
const (
	MaxGPUCount = 64
	MaxCPUCores = 4096
	MaxRAMGb    = 65536
	MaxDiskGb   = 1 << 20
	MaxPriority = 1000
	maxImageURL = 2048
)

// DefaultMaxPending is Service.MaxPending unless set: the scheduler's
// DefaultPerOrg, so that a pass reads every pending row of every
// organization.
const DefaultMaxPending = 1000

// The provisioningStage of a created row: queued while pending,
// scheduled from when it is placed (every run the server starts, a
// restart's included, starts there); the node agent reports the stages
// after it (package nodes).
const (
	stageQueued    = agentapi.StageQueued
	stageScheduled = agentapi.StageScheduled
)

// namePattern is a VM's name: a letter or digit, then up to 63 letters,
// digits, dots, underscores or hyphens (it becomes part of a hostname).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// spec is a checked request.
type spec struct {
	name, modelID, image string
	pod, public, queue   bool
	gpus, cpu, ram, disk int
	volume, priority     int
	cluster, pool        *string
	typeName             string
	price                int
	sshKeys              []string
}

// check refuses bad input with a 400 naming the field, in the request's
// order; nothing is read or written before it passes.
func (r *CreateRequest) check() (*spec, error) {
	s := &spec{name: r.Name, queue: true, public: r.Public != nil && *r.Public}
	switch {
	case r.Name == "":
		return nil, apierr.BadRequest("name is required")
	case !namePattern.MatchString(r.Name):
		return nil, apierr.BadRequest("name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, got %q", r.Name)
	}
	if r.CapabilityTier != nil {
		switch *r.CapabilityTier {
		case "":
		case models.TierPod:
			s.pod = true
		default:
			return nil, apierr.BadRequest(`capabilityTier must be "pod" (a pod) or absent (a VM), got %q`, *r.CapabilityTier)
		}
	}
	if r.InstanceType != nil {
		// The type is the parts; it is read once the input is checked.
		return s, r.checkTyped(s)
	}
	if r.GPUModelID == nil || *r.GPUModelID == "" {
		return nil, apierr.BadRequest("gpuModelId is required (or instanceType): a model of the catalog (gpuModels)")
	}
	if err := bounds.Text("gpuModelId", *r.GPUModelID, bounds.MaxID); err != nil {
		return nil, err
	}
	s.modelID = *r.GPUModelID
	var err error
	if s.gpus, err = bounded("gpuCount", r.GPUCount, 1, MaxGPUCount, true); err != nil {
		return nil, err
	}
	// A pod holds none of its node's CPU, RAM or disk: they are optional.
	least := 1
	if s.pod {
		least = 0
	}
	if s.cpu, err = bounded("cpuCores", r.CPUCores, least, MaxCPUCores, !s.pod); err != nil {
		return nil, err
	}
	if s.ram, err = bounded("ramGb", r.RAMGb, least, MaxRAMGb, !s.pod); err != nil {
		return nil, err
	}
	if s.disk, err = bounded("diskSizeGb", r.DiskSizeGb, least, MaxDiskGb, !s.pod); err != nil {
		return nil, err
	}
	if err := r.checkPod(s, true); err != nil {
		return nil, err
	}
	return s, r.checkPlacement(s)
}

// checkPod checks a pod's image and /workspace volume (required unless an
// instance type gives its default), and refuses a volume for a VM.
func (r *CreateRequest) checkPod(s *spec, volumeRequired bool) error {
	if r.ImageURL != nil {
		if err := bounds.Text("imageUrl", *r.ImageURL, maxImageURL); err != nil {
			return err
		}
		s.image = *r.ImageURL
	}
	if !s.pod {
		if r.VolumeGb != nil {
			return apierr.BadRequest(`volumeGb is a pod's /workspace volume (capabilityTier "pod"); a VM's disk is diskSizeGb`)
		}
		return nil
	}
	if s.image == "" {
		return apierr.BadRequest("imageUrl is required for a pod: the container image it runs")
	}
	var err error
	s.volume, err = bounded("volumeGb", r.VolumeGb, 1, MaxDiskGb, volumeRequired)
	return err
}

// checkTyped checks a request naming an instance type: the parts it gives
// are refused, naming the first.
func (r *CreateRequest) checkTyped(s *spec) error {
	if err := bounds.Text("instanceType", *r.InstanceType, bounds.MaxID); err != nil {
		return err
	}
	if *r.InstanceType == "" {
		return apierr.BadRequest("instanceType is empty: name a type of the catalog (instanceTypes), or leave it out and give the parts")
	}
	s.typeName = *r.InstanceType
	for _, f := range []struct {
		name  string
		given bool
	}{{"gpuModelId", r.GPUModelID != nil}, {"gpuCount", r.GPUCount != nil}, {"cpuCores", r.CPUCores != nil},
		{"ramGb", r.RAMGb != nil}, {"diskSizeGb", r.DiskSizeGb != nil}} {
		if f.given {
			return apierr.BadRequest("%s is given with instanceType %q, which sets it: give one or the other", f.name, s.typeName)
		}
	}
	if err := r.checkPod(s, false); err != nil {
		return err
	}
	return r.checkPlacement(s)
}

// checkPlacement checks where the request may run, whether it queues, and
// its priority.
func (r *CreateRequest) checkPlacement(s *spec) error {
	for _, f := range []struct {
		name string
		v    *string
		into **string
	}{{"clusterId", r.ClusterID, &s.cluster}, {"nodePool", r.NodePool, &s.pool}} {
		if f.v == nil {
			continue
		}
		if *f.v == "" {
			return apierr.BadRequest("%s is empty: leave it out to place anywhere", f.name)
		}
		if err := bounds.Text(f.name, *f.v, bounds.MaxID); err != nil {
			return err
		}
		v := *f.v
		*f.into = &v
	}
	if r.Queue != nil {
		s.queue = *r.Queue
	}
	var err error
	if s.priority, err = bounded("priority", r.Priority, 0, MaxPriority, false); err != nil {
		return err
	}
	return r.checkAccess(s)
}

// checkAccess checks the keys a VM's guest authorizes; a pod takes none
// (a container is reached through its endpoint, not a guest's sshd).
func (r *CreateRequest) checkAccess(s *spec) error {
	if r.SSHPublicKeys == nil {
		return nil
	}
	if s.pod {
		return apierr.BadRequest(`sshPublicKeys is a VM's (its guest's cloud-init authorizes them); a pod (capabilityTier "pod") takes none`)
	}
	var err error
	s.sshKeys, err = checkSSHKeys(r.SSHPublicKeys)
	return err
}

// bounded reads an optional whole number within lo..hi (0 when absent and
// not required).
func bounded(field string, v *int, lo, hi int, required bool) (int, error) {
	if v == nil {
		if required {
			return 0, apierr.BadRequest("%s is required (%d to %d)", field, lo, hi)
		}
		return 0, nil
	}
	if *v < lo || *v > hi {
		return 0, apierr.BadRequest("%s must be between %d and %d, got %d", field, lo, hi, *v)
	}
	return *v, nil
}

// Create creates a VM or pod for the caller's organization: placed now on
// the node placement picks across the fleet (deploying, its GPUs, host
// share and address claimed in the same transaction), or, when nothing
// fits now, pending with placement's summary as its statusReason until the
// scheduler places it (503 with Retry-After instead when the request says
// queue false; 409 PENDING_LIMIT_EXCEEDED when its organization has
// MaxPending pending already). A request no node could ever hold is 409 UNSCHEDULABLE at
// once. The caller must hold compute.operate.
func (s *Service) Create(ctx context.Context, caller *auth.Caller, req CreateRequest) (*Result, error) {
	if err := s.MayOperate(caller); err != nil {
		return nil, err
	}
	sp, err := req.check()
	if err != nil {
		return nil, err
	}
	if err := s.price(ctx, sp); err != nil {
		return nil, err
	}
	id, err := newVMID()
	if err != nil {
		return nil, err
	}
	var res *Result
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		c := &create{st: s.store, tx: tx, fw: placement.Default(), sp: sp, now: store.Now(), actor: caller.Actor(),
			maxPending: s.MaxPending, spendLimit: s.SpendLimitCentsPerHour, onChosen: s.onChosen, reads: s.reads, fleet: s.fleet}
		var err error
		res, err = c.run(caller.OrganizationID, id)
		return err
	})
	if errors.Is(err, errMoved) || store.Retryable(err) {
		return nil, createBusy()
	}
	return res, err
}

// maxNodeTries bounds the nodes one create loses to racing creates (on
// other replicas too): found changed under their lock, no longer fitting.
// Only when that many are lost does it answer 503 VM_NODE_BUSY.
const maxNodeTries = 3

// candidateLimit is how many of the best candidate nodes a create reads:
// the ones it tries in turn, each locked by the read of its snapshot,
// passing over a node another transaction holds locked. Beyond the
// database's conditions only the agent-version and InfiniBand-address
// filters can refuse one (under its lock); when they refuse all, the whole
// fleet is read.
const candidateLimit = 8

// maxRounds bounds how often a create reads candidates afresh when all
// those it read were locked by others or lost.
const maxRounds = 3

// price fills a typed request's parts from its instance type, and every
// request's price: the type's, or for parts the price of the type of the
// same model and count (the cheapest if several), else the model's
// cheapest price per GPU times the count; 0 when the catalog has no type
// of the model.
func (s *Service) price(ctx context.Context, sp *spec) error {
	if sp.typeName != "" {
		t, err := s.store.InstanceType(ctx, sp.typeName)
		if errors.Is(err, store.ErrNoInstanceType) {
			return apierr.NotFound(CodeInstanceTypeNotFound, "there is no instance type %q in the catalog", sp.typeName)
		}
		if err != nil {
			return err
		}
		if t.GPUModelID == nil {
			return apierr.BadRequest("instanceType %q is CPU-only; creating CPU-only VMs is not offered", sp.typeName)
		}
		sp.modelID, sp.gpus, sp.price = *t.GPUModelID, t.GPUCount, t.PricePerHourCents
		if !sp.pod {
			sp.cpu, sp.ram, sp.disk = t.CPUCores, t.RAMGb, t.DiskSizeGb
		} else if sp.volume == 0 {
			sp.volume = t.VolumeGb
		}
		if sp.pod && sp.volume == 0 {
			return apierr.BadRequest("volumeGb is required: instance type %q gives a pod no /workspace volume", sp.typeName)
		}
		return nil
	}
	types, err := s.store.InstanceTypes(ctx)
	if err != nil {
		return err
	}
	exact, perGPU := -1, -1
	for _, t := range types {
		if t.GPUModelID == nil || *t.GPUModelID != sp.modelID || t.GPUCount == 0 {
			continue
		}
		if t.GPUCount == sp.gpus && (exact < 0 || t.PricePerHourCents < exact) {
			exact = t.PricePerHourCents
		}
		if p := t.PricePerHourCents / t.GPUCount; perGPU < 0 || p < perGPU {
			perGPU = p
		}
	}
	switch {
	case exact >= 0:
		sp.price = exact
	case perGPU >= 0:
		sp.price = perGPU * sp.gpus
	}
	return nil
}

// newVMID is a fresh, unguessable VM id.
func newVMID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "vm-" + hex.EncodeToString(b), nil
}

func createBusy() error {
	e := apierr.New(http.StatusServiceUnavailable, Answers[placement.NodeBusy].VMCode,
		"the nodes changed while this create was being decided (other workloads are claiming them); try again in a few seconds")
	e.RetryAfter = 5
	return e
}

// create is one attempt, inside one transaction.
type create struct {
	st    *store.Store
	tx    *store.Txn
	fw    *placement.Framework
	sp    *spec
	now   time.Time
	actor models.Actor
	// maxPending is the Service's MaxPending; spendLimit its
	// SpendLimitCentsPerHour.
	maxPending int
	spendLimit int64
	// onChosen is the Service's (set by tests): run after the create chose
	// its node and before it locks it, where a racing transaction can
	// take the node.
	onChosen func(nodeID string)
	// reads is the Service's: a first candidate read is shared with the
	// creates that want the same at once.
	reads *candidateReads
	// fleet is the Service's: the replica's copy of every node's view.
	fleet *fleetCopy
}

func (c *create) run(orgID, id string) (*Result, error) {
	sp := c.sp
	m, err := c.st.GPUModel(c.tx, sp.modelID)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, apierr.NotFound(CodeGPUModelNotFound, "there is no GPU model %q in the catalog", sp.modelID)
	}
	org, err := c.st.OrganizationToStart(c.tx, orgID)
	if err != nil {
		return nil, err
	}
	if e := auth.OrganizationCannotStart(org.ID, org.State); e != nil {
		return nil, e
	}
	if err := checkSpend(c.st, c.tx, org, sp.price, c.spendLimit); err != nil {
		return nil, err
	}
	vm := sp.row(id, orgID, m, c.now)
	req := requestOf(vm, m, org.InfinibandEnabled)
	ch, err := c.choose(req, nil, false)
	if err != nil {
		return nil, err
	}
	// The new row is this transaction's (no one else sees it yet); the
	// organization's quota row is locked after it and before any node, as
	// restart's lock order has it. A pending row counts against the quota.
	if err := c.st.InsertVM(c.tx, vm); err != nil {
		return nil, err
	}
	if err := c.st.InsertSSHKeys(c.tx, id, sp.sshKeys); err != nil {
		return nil, err
	}
	if err := quotas.Check(c.st, c.tx, quotas.Ask{OrganizationID: orgID, VMID: id, GPUModelID: m.ID, GPUs: sp.gpus}); err != nil {
		return nil, err
	}
	return c.place(vm, m, req, ch)
}

// place places the inserted row vm on the first of ch's candidates that
// its claim takes, passing over those another transaction holds locked and
// those its filters refuse under the lock, reading candidates afresh when
// those read are all passed over; on ch's node when ch was chosen over
// the whole fleet; it queues the row (pending) when ch is a refusal and the
// request may queue.
func (c *create) place(vm *models.VM, m *models.GPUModel, req *placement.Request, ch *choice) (*Result, error) {
	var tried []string
	lost, rounds := 0, 1
	for {
		if ch.refusal != nil {
			return c.queue(vm, m, req, ch.refusal)
		}
		// Whether a candidate was passed over for its lock alone: the next
		// candidates then may fit; else every candidate read failed a
		// filter, and the whole fleet is read for Place's exact answer.
		locked := false
		for _, node := range ch.nodes() {
			res, err := c.claim(vm, m, req, node, ch.fleet)
			switch {
			case errors.Is(err, errMoved):
				// A racing create took it: try the next best, up to
				// maxNodeTries nodes lost, before answering 503.
				if lost++; lost == maxNodeTries {
					return nil, err
				}
			case errors.Is(err, errClaimed):
				locked = true
			case !errors.Is(err, errRefused):
				return res, err
			}
			tried = append(tried, node)
		}
		if rounds++; rounds > maxRounds {
			return nil, errMoved
		}
		var err error
		if ch, err = c.choose(req, tried, !ch.fleet && !locked); err != nil {
			return nil, err
		}
	}
}

// queue answers a refusal of every node: the request's refusal when it
// said queue false, 409 PENDING_LIMIT_EXCEEDED when its organization has
// maxPending rows pending already, else the row pending with the refusal
// as its reason.
func (c *create) queue(vm *models.VM, m *models.GPUModel, req *placement.Request, refusal *placement.Status) (*Result, error) {
	if !c.sp.queue {
		return nil, Refusal(refusal, req.Pod)
	}
	if err := c.pendingBound(vm); err != nil {
		return nil, err
	}
	if _, err := c.st.Apply(c.tx, vm, store.Change{Transition: models.CreateQueued, Actor: c.actor, Detail: refusal.Message}, c.now); err != nil {
		return nil, err
	}
	return &Result{VM: vm, GPUs: []*models.GPU{}, Model: m}, nil
}

// pendingBound refuses to queue vm when its organization has maxPending
// rows pending already, as Kubernetes' ResourceQuota on pods refuses one
// pod more. The count is made under the organization's queue lock
// (store.CountQueued), held until the transaction ends, so racing creates
// of one organization on any replica never both take its last place; a
// create that places now takes no such lock and is never refused by it.
func (c *create) pendingBound(vm *models.VM) error {
	if c.maxPending <= 0 {
		return nil
	}
	n, err := c.st.CountQueued(c.tx, vm.OrganizationID, vm.ID)
	if err != nil || n < c.maxPending {
		return err
	}
	return apierr.New(http.StatusConflict, CodePendingLimitExceeded,
		"pending limit is %d VMs and pods per organization; %d pending, and no node has room for this one now: wait for one to be placed, or terminate one",
		c.maxPending, n)
}

// claim locks node and places vm there on what the lock shows, inside a
// savepoint, so that a node given up is let go before the next is locked
// (one node lock at a time). A candidate is locked by the read of its
// snapshot (store.SnapshotScope.SkipLocked): one another transaction holds
// locked is errClaimed, passed over without waiting, and one that fails a
// filter under its lock is errRefused. A node chosen over the whole fleet
// (fleet) is waited for, as a restart waits, and one that changed since is
// errMoved.
func (c *create) claim(vm *models.VM, m *models.GPUModel, req *placement.Request, node string, fleet bool) (*Result, error) {
	if c.onChosen != nil {
		c.onChosen(node)
	}
	var res *Result
	err := c.st.Try(c.tx, func() error {
		if fleet {
			if err := c.st.LockNodes(c.tx, []string{node}); err != nil {
				return err
			}
		}
		var err error
		res, err = claimNode(c.st, c.tx, vm, m, req, c.fw, node,
			store.Change{Transition: models.CreatePlaced, Actor: c.actor, Stage: stageScheduled, Fresh: true}, c.now, !fleet)
		switch {
		case fleet:
		case errors.Is(err, errMoved):
			return errRefused
		case errors.Is(err, errNotRead):
			return errClaimed
		}
		return err
	})
	return res, err
}

// choice is where a create goes: the best candidates the database found,
// in its order, or the best node of the whole fleet (p), or the refusal of
// every node.
type choice struct {
	candidates []string
	p          placement.Placement
	refusal    *placement.Status
	// fleet: chosen from a snapshot of every node (no candidate passed).
	fleet bool
}

// nodes are the nodes to claim in turn.
func (ch *choice) nodes() []string {
	if ch.fleet {
		return []string{ch.p.Node.ID}
	}
	return ch.candidates
}

// choose picks the nodes for req: the best few candidates the database
// finds (store.Candidates: online, the GPUs and host share free, most
// allocated first, which is Place's order; tried ones left out), to be
// claimed in turn, each checked by every filter under its lock; when there
// is none, or when fleet (every candidate of the last round failed a
// filter the database does not run), Place's choice over every node (the
// replica's copy of the fleet: fleetView), so that a refusal's "0/N nodes
// can take it" counts every node under its reason, and a request no node
// could ever hold, or a cluster or node pool no node is in, is refused as
// before.
func (c *create) choose(req *placement.Request, tried []string, fleet bool) (*choice, error) {
	sp := c.sp
	if !fleet {
		q := store.CandidateQuery{GPUModelID: req.GPUModel.ID, GPUs: req.GPUCount,
			HostShare: !req.Pod, CPUCores: req.CPUCores, RAMGb: req.RAMGb, DiskGb: req.DiskGb,
			ClusterID: sp.cluster, NodePool: sp.pool, Exclude: tried, Limit: candidateLimit}
		read := func() ([]string, error) { return c.st.Candidates(c.tx, q) }
		var ids []string
		var err error
		if len(tried) == 0 && c.reads != nil {
			ids, err = c.reads.read(q, read)
		} else {
			ids, err = read()
		}
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			return &choice{candidates: ids}, nil
		}
	}
	view, err := c.fleetView(req)
	if err != nil {
		return nil, err
	}
	nodes, where, err := view.scoped(sp.cluster, sp.pool)
	if err != nil {
		return nil, err
	}
	if st := placement.Unresolvable(req, nodes, where); st != nil {
		return nil, Refusal(st, req.Pod)
	}
	p, st := c.fw.Place(req, nodes)
	return &choice{p: p, refusal: st, fleet: true}, nil
}

// fleetView is every node's view: the replica's copy (fleetCopy), read
// up to now in the transaction, which has written nothing a placement
// reads (its row has no node yet; a claim it gave up was rolled back); for
// an InfiniBand pod, whose filters count each fabric's address holders,
// which the copy does not keep, a snapshot read in the transaction.
func (c *create) fleetView(req *placement.Request) (*NodeView, error) {
	if !(req.Pod && req.InfiniBand) {
		return c.fleet.current(c.tx)
	}
	snap, err := c.st.Snapshot(c.tx, store.SnapshotScope{AddressHolders: true})
	if err != nil {
		return nil, err
	}
	return newNodeView(snap), nil
}

// row is the new VM's row, pending: what the request chose and what the
// server fills.
func (sp *spec) row(id, orgID string, m *models.GPUModel, now time.Time) *models.VM {
	tier := ""
	if sp.pod {
		tier = models.TierPod
	}
	modelID := m.ID
	at := now
	return &models.VM{
		ID: id, Name: sp.name, OrganizationID: orgID, Status: models.VMPending, CapabilityTier: tier,
		ComputeClass: models.ComputeClassOnDemand, CreatedAt: &at, DiskSizeGb: sp.disk, GPUCount: sp.gpus,
		GPUModelID: &modelID, ImageURL: sp.image, ProvisioningStage: stageQueued, Public: sp.public,
		ResourceSize: fmt.Sprintf("%dx-%s", sp.gpus, m.ID), Tier: "standard", VolumeGb: sp.volume,
		CPUCores: sp.cpu, RAMGb: sp.ram, UpdatedAt: now, StatusChangedAt: &at,
		Priority: sp.priority, WantClusterID: sp.cluster, WantNodePool: sp.pool, PricePerHourCents: sp.price,
	}
}

// requestOf is placement's view of a VM row.
func requestOf(vm *models.VM, m *models.GPUModel, infiniband bool) *placement.Request {
	req := &placement.Request{
		VMID: vm.ID, OrganizationID: vm.OrganizationID, Pod: vm.IsPod(), GPUCount: vm.GPUCount,
		CPUCores: vm.CPUCores, RAMGb: vm.RAMGb, DiskGb: vm.DiskSizeGb, InfiniBand: infiniband,
	}
	if m != nil {
		req.GPUModel = placement.Model{ID: m.ID, Name: m.Name, Manufacturer: string(m.Manufacturer)}
	}
	return req
}

// claimOn locks node nodeID (the VM row is the caller's, locked or new)
// and claims on it (claimLocked). A node that changed in between is
// errMoved: the scheduler reads its fleet again.
func claimOn(st *store.Store, tx *store.Txn, vm *models.VM, m *models.GPUModel, req *placement.Request,
	fw *placement.Framework, nodeID string, ch store.Change, now time.Time) (*Result, error) {
	if err := st.LockNodes(tx, []string{nodeID}); err != nil {
		return nil, err
	}
	return claimLocked(st, tx, vm, m, req, fw, nodeID, ch, now)
}

// claimLocked reloads node nodeID, which the transaction has locked, and
// runs the filters again, then claims its GPUs (and, for a pod that needs
// one, its address, under the fabric lock the reload took) and applies ch,
// which places the row there. A node that changed since it was chosen is
// errMoved.
func claimLocked(st *store.Store, tx *store.Txn, vm *models.VM, m *models.GPUModel, req *placement.Request,
	fw *placement.Framework, nodeID string, ch store.Change, now time.Time) (*Result, error) {
	return claimNode(st, tx, vm, m, req, fw, nodeID, ch, now, false)
}

// errNotRead says that claimNode's locking read left its node out: another
// transaction holds it locked.
var errNotRead = errors.New("compute: the node is locked by another transaction")

// claimNode is claimLocked; with lock, the node's snapshot is read under
// its lock taken by the same statement, skipping a node another
// transaction holds (errNotRead). A fresh row (ch.Fresh: inserted in this
// transaction, holding nothing) claims free GPUs only, read back by the
// claim itself.
func claimNode(st *store.Store, tx *store.Txn, vm *models.VM, m *models.GPUModel, req *placement.Request,
	fw *placement.Framework, nodeID string, ch store.Change, now time.Time, lock bool) (*Result, error) {
	snap, err := st.Snapshot(tx, store.SnapshotScope{NodeIDs: []string{nodeID}, LockFabrics: req.Pod && req.InfiniBand,
		AddressHolders: req.Pod && req.InfiniBand, SkipLocked: lock})
	if err != nil {
		return nil, err
	}
	infos := NodeInfos(snap)
	if lock && len(infos) == 0 {
		return nil, errNotRead
	}
	if len(infos) != 1 || fw.CheckOwnNode(req, infos[0]) != nil {
		return nil, errMoved
	}
	picked := placement.PickGPUs(req, infos[0])
	var gpus []*models.GPU
	if ch.Fresh {
		gpus, err = st.ClaimFreeGPUs(tx, vm.ID, nodeID, m.ID, picked)
	} else {
		err = st.ClaimGPUs(tx, vm.ID, nodeID, m.ID, picked)
	}
	if errors.Is(err, store.ErrClaimLost) {
		return nil, errMoved
	}
	if err != nil {
		return nil, err
	}
	ch.Move = &store.Move{NodeID: nodeID}
	if _, err := st.Apply(tx, vm, ch, now); err != nil {
		return nil, err
	}
	if gpus == nil {
		if gpus, err = st.HeldGPUs(tx, vm.ID); err != nil {
			return nil, err
		}
	}
	return &Result{VM: vm, GPUs: gpus, Model: m}, nil
}
