//go:build !static_build

package main

import (
	"errors"
	"log/slog"

	"gpugraph/internal/agent"
)

type closingRuntime interface {
	agent.Runtime
	Close()
}

// ErrNoContainerd: containerd's client imports Go's plugin loader unless
// built with the static_build tag, and a binary that can load plugins is
// linked to bind every C symbol at start, which go-nvml's lazily resolved
// NVML symbols do not survive (the agent would not start, with or without
// a driver). So the containerd runtime is only in binaries built with
// -tags static_build, as make build does.
var errNoContainerd = errors.New("--runtime containerd: this agent was built without containerd; build it with -tags static_build (make build does)")

func newContainerdRuntime(options, *slog.Logger) (closingRuntime, error) {
	return nil, errNoContainerd
}
