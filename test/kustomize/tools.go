//go:build tools

// Package tools pins kustomize (sigs.k8s.io/kustomize/kustomize/v5), whose main package build.sh builds: test/e2e/chart.test.ts renders deploy/kustomize with it. Nothing here is compiled into fleet.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
