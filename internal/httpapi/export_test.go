package httpapi

import "sync/atomic"

// CountLoaders is cfg with the server counting in n the dataloaders it
// builds (Config.loadersBuilt).
func CountLoaders(cfg Config, n *atomic.Int64) Config {
	cfg.loadersBuilt = n
	return cfg
}
