//go:build tools

// Package tools pins krew, the kubectl plugin manager, whose main package build.sh builds: the e2e test of fleet's
// krew manifest installs fleet with it (test/e2e/krew.test.ts). Nothing here is compiled into fleet.
package tools

import _ "sigs.k8s.io/krew/cmd/krew"
