//go:build static_build

package main

import (
	"fmt"
	"log/slog"

	"github.com/containerd/containerd"

	"gpugraph/internal/agent"
	ctrruntime "gpugraph/internal/agent/containerd"
)

type closingRuntime interface {
	agent.Runtime
	Close()
}

type runtimeWithClient struct {
	*ctrruntime.Runtime
	client *containerd.Client
}

func (r runtimeWithClient) Close() {
	r.Runtime.Close()
	r.client.Close()
}

func newContainerdRuntime(o options, log *slog.Logger) (closingRuntime, error) {
	client, err := containerd.New(o.containerdAddress)
	if err != nil {
		return nil, fmt.Errorf("--containerd-address %s: %w", o.containerdAddress, err)
	}
	rt, err := ctrruntime.New(ctrruntime.Config{Client: client, VolumeRoot: o.volumeRoot, RuncBinary: o.runtimeBinary,
		DefaultImage: o.defaultImage, LogDir: o.containerLogDir, Log: log})
	if err != nil {
		client.Close()
		return nil, err
	}
	return runtimeWithClient{rt, client}, nil
}
