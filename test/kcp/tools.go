//go:build tools

// Package tools pins the kcp main packages fleet's e2e tests run; build.sh builds each as a binary.
package tools

import (
	_ "github.com/kcp-dev/kcp/cmd/kcp"
	_ "github.com/kcp-dev/kcp/cmd/kcp-front-proxy"
)
