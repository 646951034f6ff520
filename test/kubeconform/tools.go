//go:build tools

// Package tools pins kubeconform (github.com/yannh/kubeconform), whose main package build.sh builds: test/e2e/chart.test.ts validates what the chart and the kustomize base render against schemas made offline. Nothing here is compiled into fleet.
package tools

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
