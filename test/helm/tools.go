//go:build tools

// Package tools pins Helm v3 (helm.sh/helm/v3), whose main package build.sh builds: test/e2e/chart.test.ts lints, renders, packages, pushes and installs deploy/chart with it. Nothing here is compiled into fleet.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
