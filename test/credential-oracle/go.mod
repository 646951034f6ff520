module github.com/fleet-cli/fleet/test/credential-oracle

go 1.25.0

require github.com/fleet-cli/fleet/cmd/fleet-credential v0.0.0

replace github.com/fleet-cli/fleet/cmd/fleet-credential => ../../cmd/fleet-credential
