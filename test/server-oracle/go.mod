module github.com/fleet-cli/fleet/test/server-oracle

go 1.26
