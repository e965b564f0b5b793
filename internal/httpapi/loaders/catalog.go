package loaders

import (
	"context"

	"gpugraph/models"
)

// FillGPUModels sets each GPU's Model (Gpu.model answers it as a plain
// field, not a resolver per GPU) from the request's ModelByID loader: after
// a list's prefetch the catalog rows are in its cache, so filling reads
// nothing; otherwise the missing ones are read in one batch.
//
// GPU rows are shared by every field of the request that loads them, and
// fields run concurrently: a GPU's Model is written once, under the
// request's lock, and only while it is nil, so every reader's own fill
// happens after the one write.
func (l *Loaders) FillGPUModels(ctx context.Context, gpus []*models.GPU) error {
	l.mu.Lock()
	var keys []string
	seen := map[string]bool{}
	for _, g := range gpus {
		if g.Model == nil && g.ModelID != "" && !seen[g.ModelID] {
			seen[g.ModelID] = true
			keys = append(keys, g.ModelID)
		}
	}
	l.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	rows, errs := l.ModelByID.LoadMany(ctx, keys)()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	byID := make(map[string]*models.GPUModel, len(rows))
	for i, m := range rows {
		byID[keys[i]] = m
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range gpus {
		if g.Model == nil {
			g.Model = byID[g.ModelID]
		}
	}
	return nil
}
