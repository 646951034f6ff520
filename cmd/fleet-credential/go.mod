module github.com/fleet-cli/fleet/cmd/fleet-credential

go 1.25.0
