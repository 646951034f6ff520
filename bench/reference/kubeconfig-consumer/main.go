// Command kubeconfig-consumer is how a Go program uses a kubeconfig: client-go's loading rules (clientcmd) read the
// file, and for every context in it a typed clientset lists the namespaces. fleet's e2e test
// (test/e2e/kubeconfig-merge.test.ts) runs it on what `fleet kubeconfig export` wrote, whose users are exec entries
// calling fleet: client-go runs the plugin itself. It is a second main package of the bench reference's module, so it
// builds from the modules that module already pins (no new dependency tree). It prints one JSON line per context,
// {"context": ..., "namespaces": [...]} or {"context": ..., "error": ...}, and exits 1 when any context failed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type line struct {
	Context    string   `json:"context"`
	Namespaces []string `json:"namespaces,omitempty"`
	Error      string   `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: client-go's loading rules, KUBECONFIG or ~/.kube/config)")
	timeout := flag.Duration("timeout", 30*time.Second, "time limit of each context's list")
	flag.Parse()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if *kubeconfig != "" {
		rules.ExplicitPath = *kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, name := range names {
		l := line{Context: name}
		if ns, err := list(rules, name, *timeout); err != nil {
			l.Error, failed = err.Error(), true
		} else {
			l.Namespaces = ns
		}
		_ = out.Encode(l)
	}
	if failed {
		os.Exit(1)
	}
}

func list(rules *clientcmd.ClientConfigLoadingRules, name string, timeout time.Duration) ([]string, error) {
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	list, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	return out, nil
}
