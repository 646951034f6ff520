//go:build tools

// Package tools pins crane (github.com/google/go-containerregistry/cmd/crane), whose main package build.sh builds: test/e2e/chart.test.ts serves a local OCI registry with `crane registry serve` and pushes the image there. Nothing here is compiled into fleet.
package tools

import _ "github.com/google/go-containerregistry/cmd/crane"
