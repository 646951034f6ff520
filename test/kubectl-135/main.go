// kubectl built from the k8s.io/kubectl module at the version go.mod pins (1.35): the reference that
// test/e2e/kuberc-kubectl.test.ts runs on kuberc files to check that fleet reads them and applies their credential
// plugin policy as kubectl 1.35 does. The same two calls as upstream's cmd/kubectl: the command constructor (which
// reads --kuberc, KUBERC and ~/.kube/kuberc) and its runner.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
