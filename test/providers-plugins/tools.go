//go:build tools

// Package tools pins the reference credential plugins of sigs.k8s.io/cluster-inventory-api that fleet's e2e tests run
// through the cluster-inventory provider. Nothing here is compiled into fleet; build.sh builds each import as a binary.
package tools

import (
	_ "sigs.k8s.io/cluster-inventory-api/plugins/kubeconfig-secretreader/cmd/plugin"
	_ "sigs.k8s.io/cluster-inventory-api/plugins/secretreader/cmd/plugin"
)
