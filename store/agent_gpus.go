package store

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// reconcileGPUs makes a node's GPU rows match its inventory, keyed by NVML
// UUID: a known UUID keeps its row (id, model, holder), taking the reported
// index and address; a row with no UUID yet (written by a fixture) is the
// reported GPU at its index; a new UUID gets a row; a row the report does
// not name is failed "vanished from inventory" and kept, moved to a free
// index when the report gave its index to another GPU.
func reconcileGPUs(tx *gorm.DB, nodeID string, reported []InventoryGPU, by models.Actor, now time.Time) ([]*models.NodeEvent, error) {
	var have []*models.GPU
	if err := tx.Where("node_id = ?", nodeID).Order("idx").Find(&have).Error; err != nil {
		return nil, err
	}
	var evs []*models.NodeEvent
	uuids := make([]string, len(reported))
	for i, r := range reported {
		uuids[i] = r.UUID
	}
	takenIDs, err := otherNodesGPUs(tx, nodeID, uuids)
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

	set := map[*models.GPU]map[string]any{}
	change := func(g *models.GPU, col string, v any) {
		if set[g] == nil {
			set[g] = map[string]any{}
		}
		set[g][col] = v
	}
	target := map[*models.GPU]int{}
	usedIdx := map[int]bool{}
	var added []InventoryGPU
	for _, r := range reported {
		usedIdx[r.Index] = true
		g := byUUID[r.UUID]
		if g == nil {
			if g = noUUID[r.Index]; g != nil {
				delete(noUUID, r.Index)
				change(g, "uuid", r.UUID)
			}
		}
		if g == nil {
			added = append(added, r)
			continue
		}
		target[g] = r.Index
		if r.Address != "" && r.Address != g.Address {
			change(g, "address", r.Address)
		}
		if r.Health == models.GPUFailed && g.Health == models.GPUHealthy {
			change(g, "health", models.GPUFailed)
			change(g, "failed_reason", failedReason(r.FailedReason))
			evs = append(evs, models.GPUFailedEvent(nodeID, g.ID, failedReason(r.FailedReason), by, now))
		}
	}
	var vanished []*models.GPU
	for _, g := range have {
		if _, ok := target[g]; ok {
			continue
		}
		if g.Health == models.GPUHealthy {
			change(g, "health", models.GPUFailed)
			change(g, "failed_reason", FailedVanished)
			evs = append(evs, models.GPUFailedEvent(nodeID, g.ID, FailedVanished, by, now))
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
		if target[g] != g.Index {
			moving = append(moving, g)
			change(g, "idx", target[g])
		}
	}
	for i, g := range moving {
		if err := tx.Exec("UPDATE gpus SET idx = ? WHERE id = ?", -1-i, g.ID).Error; err != nil {
			return nil, err
		}
	}
	for _, g := range have {
		if cols := set[g]; cols != nil {
			if err := tx.Table("gpus").Where("id = ?", g.ID).Updates(cols).Error; err != nil {
				return nil, err
			}
		}
	}
	return evs, addGPUs(tx, nodeID, added, takenIDs)
}

// otherNodesGPUs refuses UUIDs another node holds, and answers which of
// the UUIDs are already ids of other nodes' GPUs.
func otherNodesGPUs(tx *gorm.DB, nodeID string, uuids []string) (map[string]bool, error) {
	taken := map[string]bool{}
	if len(uuids) == 0 {
		return taken, nil
	}
	var rows []struct{ ID, UUID, NodeName string }
	err := tx.Raw(`SELECT g.id, g.uuid, n.name AS node_name FROM gpus g JOIN nodes n ON n.id = g.node_id
		WHERE g.node_id <> ? AND (g.uuid IN ? OR g.id IN ?)`, nodeID, uuids, uuids).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.UUID != "" && slices.Contains(uuids, r.UUID) {
			return nil, &GPUElsewhereError{UUID: r.UUID, NodeName: r.NodeName}
		}
		taken[r.ID] = true
	}
	return taken, nil
}

// addGPUs inserts the GPUs a node reported for the first time. A GPU's id
// is its NVML UUID (stable, unique), unless a row already has that id.
func addGPUs(tx *gorm.DB, nodeID string, added []InventoryGPU, takenIDs map[string]bool) error {
	if len(added) == 0 {
		return nil
	}
	modelIDs, err := modelsByName(tx, added)
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
	return tx.Create(&rows).Error
}

func failedReason(r string) string {
	if r == "" {
		return FailedUnspecified
	}
	return r
}

// modelsByName finds the catalog entry of each reported product name,
// adding those the catalog lacks: id derived from the name, manufacturer
// from the name, memory from the reported bytes.
func modelsByName(tx *gorm.DB, gpus []InventoryGPU) (map[string]string, error) {
	memory := map[string]uint64{}
	var names []string
	for _, g := range gpus {
		if _, seen := memory[g.Name]; !seen {
			names = append(names, g.Name)
		}
		memory[g.Name] = max(memory[g.Name], g.MemoryBytes)
	}
	var known []models.GPUModel
	if err := tx.Where("name IN ?", names).Order("id").Find(&known).Error; err != nil {
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
		m := models.GPUModel{Name: name, Manufacturer: ManufacturerOf(name), MemoryGb: MemoryGb(memory[name])}
		if name == "" {
			m.Name = "unknown"
		}
		id, err := freeModelID(tx, ModelID(name), m.Name)
		if err != nil {
			return nil, err
		}
		m.ID = id
		// A concurrent inventory may add the same entry; its row is ours.
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error; err != nil {
			return nil, err
		}
		ids[name] = id
	}
	return ids, nil
}

// freeModelID answers base, or base-2, base-3, … when an entry of another
// name holds it; an entry of this name is reused.
func freeModelID(tx *gorm.DB, base, name string) (string, error) {
	for n := 1; n <= 100; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		var m []models.GPUModel
		if err := tx.Where("id = ?", id).Limit(1).Find(&m).Error; err != nil {
			return "", err
		}
		if len(m) == 0 || m[0].Name == name {
			return id, nil
		}
	}
	return "", fmt.Errorf("GPU model %q: %w", name, errNoFreeID)
}

// ModelID derives a catalog id from an NVML product name:
// "NVIDIA H100 80GB HBM3" → "nvidia-h100-80gb-hbm3".
func ModelID(name string) string {
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

// ManufacturerOf reads the vendor from a product name: AMD when it says
// so, else NVIDIA (NVML reports NVIDIA GPUs).
func ManufacturerOf(name string) models.Manufacturer {
	l := strings.ToLower(name)
	if strings.Contains(l, "amd") || strings.Contains(l, "instinct") || strings.Contains(l, "radeon") {
		return models.AMD
	}
	return models.NVIDIA
}

// MemoryGb rounds a memory size in bytes to whole GiB, as product names
// count it (81559 MiB → 80).
func MemoryGb(bytes uint64) int {
	return int(math.Round(float64(bytes) / (1 << 30)))
}
