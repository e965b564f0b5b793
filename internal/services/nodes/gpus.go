package nodes

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// GPU failedReasons the reports write.
const (
	// failedVanished is the failedReason of a GPU its node stopped reporting.
	failedVanished = "vanished from inventory"
	// failedUnspecified is the failedReason of a GPU reported failed
	// without a reason.
	failedUnspecified = "reported failed by the node agent"
)

func failedReason(r string) string {
	if r == "" {
		return failedUnspecified
	}
	return r
}

// reconcileGPUs makes a node's GPU rows match its inventory, keyed by NVML
// UUID: a known UUID keeps its row (id, model, holder), taking the reported
// index and address; a row with no UUID yet (written by a fixture) is the
// reported GPU at its index; a new UUID gets a row; a row the report does
// not name is failed "vanished from inventory" and kept, moved to a free
// index when the report gave its index to another GPU.
func (s *Service) reconcileGPUs(tx *store.Txn, nodeID string, reported []inventoryGPU, by models.Actor, now time.Time) ([]*models.NodeEvent, error) {
	have, err := s.store.NodeGPUs(tx, nodeID)
	if err != nil {
		return nil, err
	}
	var evs []*models.NodeEvent
	uuids := make([]string, len(reported))
	for i, r := range reported {
		uuids[i] = r.UUID
	}
	takenIDs, err := s.otherNodesGPUs(tx, nodeID, uuids)
	if err != nil {
		return nil, err
	}

	byUUID := map[string]*models.GPU{}
	noUUID := map[int]*models.GPU{}
	for _, g := range have {
		takenIDs[g.ID] = true
		if g.UUID != "" {
			byUUID[g.UUID] = g
		} else {
			noUUID[g.Index] = g
		}
	}

	set := map[*models.GPU]*store.GPUUpdate{}
	change := func(g *models.GPU) *store.GPUUpdate {
		if set[g] == nil {
			set[g] = &store.GPUUpdate{}
		}
		return set[g]
	}
	fail := func(g *models.GPU, reason string) {
		u := change(g)
		u.Health, u.FailedReason = models.GPUFailed, reason
		evs = append(evs, models.GPUFailedEvent(nodeID, g.ID, reason, by, now))
	}
	target := map[*models.GPU]int{}
	usedIdx := map[int]bool{}
	var added []inventoryGPU
	for _, r := range reported {
		usedIdx[r.Index] = true
		g := byUUID[r.UUID]
		if g == nil {
			if g = noUUID[r.Index]; g != nil {
				delete(noUUID, r.Index)
				change(g).UUID = r.UUID
			}
		}
		if g == nil {
			added = append(added, r)
			continue
		}
		target[g] = r.Index
		if r.Address != "" && r.Address != g.Address {
			change(g).Address = r.Address
		}
		if r.Health == models.GPUFailed && g.Health == models.GPUHealthy {
			fail(g, failedReason(r.FailedReason))
		}
	}
	var vanished []*models.GPU
	for _, g := range have {
		if _, ok := target[g]; ok {
			continue
		}
		if g.Health == models.GPUHealthy {
			fail(g, failedVanished)
		}
		if !usedIdx[g.Index] {
			target[g] = g.Index
			usedIdx[g.Index] = true
		} else {
			vanished = append(vanished, g)
		}
	}
	next := 0
	for i := range usedIdx {
		next = max(next, i+1)
	}
	for _, g := range vanished {
		target[g] = next
		next++
	}

	// Indexes are unique per node: rows that move step aside to negative
	// indexes first, so no intermediate state collides.
	var moving []*models.GPU
	for _, g := range have {
		if idx := target[g]; idx != g.Index {
			moving = append(moving, g)
			change(g).Index = &idx
		}
	}
	for i, g := range moving {
		if err := s.store.SetGPUIndex(tx, g.ID, -1-i); err != nil {
			return nil, err
		}
	}
	for _, g := range have {
		if u := set[g]; u != nil {
			if err := s.store.UpdateGPU(tx, g.ID, *u); err != nil {
				return nil, err
			}
		}
	}
	return evs, s.addGPUs(tx, nodeID, added, takenIDs)
}

// otherNodesGPUs refuses UUIDs another node holds, and answers which of
// the UUIDs are already ids of other nodes' GPUs.
func (s *Service) otherNodesGPUs(tx *store.Txn, nodeID string, uuids []string) (map[string]bool, error) {
	taken := map[string]bool{}
	if len(uuids) == 0 {
		return taken, nil
	}
	rows, err := s.store.ForeignGPUs(tx, nodeID, uuids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.UUID != "" && slices.Contains(uuids, r.UUID) {
			return nil, gpuOnOtherNode(r.UUID, r.NodeName)
		}
		taken[r.ID] = true
	}
	return taken, nil
}

// addGPUs inserts the GPUs a node reported for the first time. A GPU's id
// is its NVML UUID (stable, unique), unless a row already has that id.
func (s *Service) addGPUs(tx *store.Txn, nodeID string, added []inventoryGPU, takenIDs map[string]bool) error {
	if len(added) == 0 {
		return nil
	}
	modelIDs, err := s.modelsByName(tx, added)
	if err != nil {
		return err
	}
	rows := make([]models.GPU, 0, len(added))
	for _, r := range added {
		id := r.UUID
		if takenIDs[id] {
			id = "gpu-" + randomHex(8)
		}
		g := models.GPU{ID: id, NodeID: nodeID, Index: r.Index, UUID: r.UUID, Address: r.Address,
			ModelID: modelIDs[r.Name], Health: r.Health}
		if r.Health == models.GPUFailed {
			reason := failedReason(r.FailedReason)
			g.FailedReason = &reason
		}
		rows = append(rows, g)
	}
	return s.store.CreateGPUs(tx, rows)
}

// modelsByName finds the catalog entry of each reported product name,
// adding those the catalog lacks: id derived from the name, manufacturer
// from the name, memory from the reported bytes.
func (s *Service) modelsByName(tx *store.Txn, gpus []inventoryGPU) (map[string]string, error) {
	memory := map[string]uint64{}
	var names []string
	for _, g := range gpus {
		if _, seen := memory[g.Name]; !seen {
			names = append(names, g.Name)
		}
		memory[g.Name] = max(memory[g.Name], g.MemoryBytes)
	}
	known, err := s.store.GPUModelsByName(tx, names)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, m := range known {
		if ids[m.Name] == "" {
			ids[m.Name] = m.ID
		}
	}
	for _, name := range names {
		if ids[name] != "" {
			continue
		}
		m := models.GPUModel{Name: name, Manufacturer: manufacturerOf(name), MemoryGb: memoryGb(memory[name])}
		if name == "" {
			m.Name = "unknown"
		}
		id, err := s.freeModelID(tx, modelID(name), m.Name)
		if err != nil {
			return nil, err
		}
		m.ID = id
		if err := s.store.AddGPUModel(tx, &m); err != nil {
			return nil, err
		}
		ids[name] = id
	}
	return ids, nil
}

// errNoFreeID ends a probe for a free id that found none.
var errNoFreeID = errors.New("no free id")

// freeModelID answers base, or base-2, base-3, … when an entry of another
// name holds it; an entry of this name is reused.
func (s *Service) freeModelID(tx *store.Txn, base, name string) (string, error) {
	for n := 1; n <= 100; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		m, err := s.store.GPUModel(tx, id)
		if err != nil {
			return "", err
		}
		if m == nil || m.Name == name {
			return id, nil
		}
	}
	return "", fmt.Errorf("GPU model %q: %w", name, errNoFreeID)
}

// modelID derives a catalog id from an NVML product name:
// "NVIDIA H100 80GB HBM3" → "nvidia-h100-80gb-hbm3".
func modelID(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// manufacturerOf reads the vendor from a product name: AMD when it says
// so, else NVIDIA (NVML reports NVIDIA GPUs).
func manufacturerOf(name string) models.Manufacturer {
	l := strings.ToLower(name)
	if strings.Contains(l, "amd") || strings.Contains(l, "instinct") || strings.Contains(l, "radeon") {
		return models.AMD
	}
	return models.NVIDIA
}

// memoryGb rounds a memory size in bytes to whole GiB, as product names
// count it (81559 MiB → 80).
func memoryGb(bytes uint64) int {
	return int(math.Round(float64(bytes) / (1 << 30)))
}
