// fleet-credential answers the exec entries `fleet kubeconfig export` writes from fleet's credential cache, and hands
// everything else to fleet.
//
// kubectl runs an exec plugin before every invocation's first request, so what a cache hit costs is added to every
// kubectl call. A Node process costs about 20 ms before it runs a line; this program costs a millisecond or two. It
// reads exactly what `fleet kubeconfig credential` reads on a hit (src/export/credential-fast.ts and
// src/export/credential-cache.ts are the definition, package cache here their Go reading;
// test/unit/credential-reader.test.ts runs both on the same entries and compares them byte for byte, over a generated
// corpus too) and decides nothing of its own: a miss, an entry it cannot read, a
// second call from the same kubectl (the first credential was probably refused), any argument it does not expect, all
// replace this process with fleet (execve, so kubectl stays the parent and sees fleet's output and exit code).
//
// Usage (as export writes it): fleet-credential --fleet FLEET kubeconfig credential --cluster C [--provider P]
// [--fleet-config F] [--kubeconfig K] [--context X]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/fleet-cli/fleet/cmd/fleet-credential/cache"
)

func main() {
	args := os.Args[1:]
	if len(args) < 2 || args[0] != "--fleet" || args[1] == "" {
		fmt.Fprintln(os.Stderr, "fleet-credential: run by the exec entries of `fleet kubeconfig export` as: fleet-credential --fleet FLEET kubeconfig credential --cluster NAME ...")
		os.Exit(2)
	}
	fleet, rest := args[1], args[2:]
	// kubectl: client-go's exec runner is the parent, and asks twice before the end only after a 401.
	if out, ok := cache.FromCache(rest, os.Getenv, os.Getppid(), time.Now()); ok {
		if _, err := os.Stdout.Write(out); err == nil {
			os.Exit(0)
		}
		os.Exit(1)
	}
	runFleet(fleet, rest)
}

// runFleet replaces this process with fleet, which answers with the same arguments (and says what is wrong, if anything).
func runFleet(fleet string, args []string) {
	path := fleet
	if !strings.Contains(fleet, "/") {
		found, err := exec.LookPath(fleet)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleet-credential: %s: not found on PATH (install fleet, or export again with --command /absolute/path/to/fleet)\n", fleet)
			os.Exit(1)
		}
		path = found
	}
	err := syscall.Exec(path, append([]string{fleet}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "fleet-credential: cannot run %s: %v\n", fleet, err)
	os.Exit(1)
}
