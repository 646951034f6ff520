// Command secret-consumers reads one consumer Secret on the hub the way that consumer's own code does, builds the
// rest.Config that code builds from it, and asks the member who it is (a SelfSubjectReview sent through the consumer's own
// client). fleet's e2e tests run it against the Secrets `fleet creds generate|rotate|adopt` write, so a format fleet gets
// subtly wrong fails here as it would in the consumer, not only in fleet's own providers (which mirror these readers).
//
//	-format capi  Cluster API v1.13.1: controllers/remote.NewClusterClient, which reads `<cluster>-kubeconfig` through
//	              util/kubeconfig.FromSecret (key `value`) and builds the client Cluster API's controllers use.
//	              -name is the Cluster's name (the Secret is `<name>-kubeconfig`).
//	-format mcr   multicluster-runtime v0.24.1's kubeconfig provider (providers/kubeconfig): a multicluster manager on the
//	              hub namespace with the provider set up, started; the provider's own reconciler finds the labelled Secret,
//	              builds and engages the cluster; the cluster named -name is taken from the provider (Provider.Get).
//	-format flux  Flux's runtime client v0.110.3 (github.com/fluxcd/pkg/runtime/client): the Impersonator that
//	              kustomize-controller and helm-controller build for `spec.kubeConfig.secretRef` (key `value`, then
//	              `value.yaml`, or -key), GetClient.
//
// Prints one JSON line {"username": ..., "groups": [...]}; on failure the upstream error goes to stderr, exit 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	fluxclient "github.com/fluxcd/pkg/runtime/client"
	"github.com/go-logr/logr/funcr"
	authenticationv1 "k8s.io/api/authentication/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-api/controllers/remote"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	"sigs.k8s.io/multicluster-runtime/providers/kubeconfig"
)

type whoami struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

func main() {
	format := flag.String("format", "", "capi, mcr or flux")
	hubKubeconfig := flag.String("hub-kubeconfig", "", "kubeconfig of the hub, where the Secret is")
	namespace := flag.String("namespace", "", "the Secret's namespace")
	name := flag.String("name", "", "capi: the Cluster's name; mcr and flux: the Secret's name")
	key := flag.String("key", "", "flux: spec.kubeConfig.secretRef.key (default: value, then value.yaml, as Flux)")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after this long")
	flag.Parse()
	// The upstream libraries log through controller-runtime's logger; errors (a Secret the provider cannot parse) go to
	// stderr so a failing test shows them, info lines are dropped.
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: -1}))
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	who, err := run(ctx, *format, *hubKubeconfig, *namespace, *name, *key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(who)
	fmt.Println(string(out))
}

func run(ctx context.Context, format, hubKubeconfig, namespace, name, key string) (*whoami, error) {
	if hubKubeconfig == "" || namespace == "" || name == "" {
		return nil, errors.New("-hub-kubeconfig, -namespace and -name are required")
	}
	hubConfig, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		return nil, err
	}
	hub, err := client.New(hubConfig, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, err
	}
	var member client.Client
	switch format {
	case "capi":
		member, err = remote.NewClusterClient(ctx, "fleet-secret-consumers", hub, client.ObjectKey{Namespace: namespace, Name: name})
	case "flux":
		ref := &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: name, Key: key}}
		imp := fluxclient.NewImpersonator(hub,
			fluxclient.WithScheme(clientgoscheme.Scheme),
			fluxclient.WithKubeConfig(ref, fluxclient.KubeConfigOptions{}, namespace, nil))
		member, _, err = imp.GetClient(ctx)
	case "mcr":
		member, err = mcrClient(ctx, hubConfig, namespace, name)
	default:
		return nil, fmt.Errorf("-format: %q is not capi, mcr or flux", format)
	}
	if err != nil {
		return nil, err
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := member.Create(ctx, review); err != nil {
		return nil, err
	}
	groups := review.Status.UserInfo.Groups
	if groups == nil {
		groups = []string{}
	}
	return &whoami{Username: review.Status.UserInfo.Username, Groups: groups}, nil
}

// mcrClient runs multicluster-runtime as a consumer does: a multicluster manager on the hub with the kubeconfig provider
// watching one namespace, and waits until the provider has engaged the cluster the Secret names (the provider names a
// cluster after its Secret). The client returned is the engaged cluster's own.
func mcrClient(ctx context.Context, hubConfig *rest.Config, namespace, name string) (client.Client, error) {
	provider := kubeconfig.New(kubeconfig.Options{Namespace: namespace})
	mgr, err := mcmanager.New(hubConfig, provider, manager.Options{
		Scheme:                 clientgoscheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
	})
	if err != nil {
		return nil, err
	}
	if err := provider.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	go func() { started <- mgr.Start(ctx) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		cl, err := provider.Get(ctx, multicluster.ClusterName(name))
		if err == nil {
			return cl.GetClient(), nil
		}
		if !errors.Is(err, multicluster.ErrClusterNotFound) {
			return nil, err
		}
		select {
		case err := <-started:
			return nil, fmt.Errorf("the multicluster manager stopped: %v", err)
		case <-ctx.Done():
			return nil, fmt.Errorf("multicluster-runtime's kubeconfig provider did not engage cluster %q from Secret %s/%s (label %s=true, key %s) in time",
				name, namespace, name, kubeconfig.DefaultKubeconfigSecretLabel, kubeconfig.DefaultKubeconfigSecretKey)
		case <-tick.C:
		}
	}
}
