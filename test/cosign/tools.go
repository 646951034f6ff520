//go:build tools

// Package tools pins cosign (Sigstore), whose main package build.sh builds: test/e2e/release.test.ts signs the release's
// checksums.txt and blobs with a key it generates and verifies them with it. Nothing here is compiled into fleet.
package tools

import _ "github.com/sigstore/cosign/v2/cmd/cosign"
