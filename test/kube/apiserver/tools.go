//go:build tools

// Package apiserver pins the kube-apiserver command the tests build and start.
package apiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
