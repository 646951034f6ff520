//go:build tools

// Package tools pins the upstream main packages that build the test control plane.
// Nothing here is compiled into fleet; build.sh builds each import as a binary.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
