//go:build tools

// Package tools pins actionlint, the GitHub Actions workflow checker, whose main package build.sh builds: .ci/run and
// test/unit/workflows.test.ts run it over .github/workflows/. Nothing here is compiled into fleet.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
