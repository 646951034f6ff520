package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-cd/v3/cmd/util"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/clusterauth"
	"github.com/argoproj/argo-cd/v3/util/db"
	"github.com/argoproj/argo-cd/v3/util/settings"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type addOptions struct {
	hubKubeconfig, namespace, memberKubeconfig, systemNamespace, clusterName, namespaces, project, labels string
	clusterResources, tokenOnly                                                                           bool
	shard                                                                                                 int64
	execCommand, execArgs, execEnv, awsClusterName, awsRoleArn                                            string
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func pairs(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

func clientsetFor(kubeconfig string) (*rest.Config, *kubernetes.Clientset, error) {
	conf, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(conf)
	return conf, cs, err
}

// add follows `argocd cluster add` (cmd/argocd/commands/cluster.go), with the API server's part (its cluster service's
// Create) done by calling the same database layer directly.
func add(o addOptions) error {
	ctx := context.Background()
	conf, member, err := clientsetFor(o.memberKubeconfig)
	if err != nil {
		return err
	}
	namespaces := split(o.namespaces)
	var token string
	var aws *v1alpha1.AWSAuthConfig
	var execConf *v1alpha1.ExecProviderConfig
	switch {
	case o.awsClusterName != "":
		aws = &v1alpha1.AWSAuthConfig{ClusterName: o.awsClusterName, RoleARN: o.awsRoleArn}
	case o.execCommand != "":
		env, err := pairs(o.execEnv)
		if err != nil {
			return fmt.Errorf("-exec-env: %w", err)
		}
		execConf = &v1alpha1.ExecProviderConfig{Command: o.execCommand, Args: split(o.execArgs), Env: env, APIVersion: "client.authentication.k8s.io/v1"}
	default:
		// Upstream's timeout for the legacy token Secret to be filled in (common.BearerTokenTimeout is 30 s).
		token, err = clusterauth.InstallClusterManagerRBAC(member, o.systemNamespace, namespaces, 60*time.Second)
		if err != nil {
			return fmt.Errorf("install argocd-manager RBAC: %w", err)
		}
	}
	lbls, err := pairs(o.labels)
	if err != nil {
		return fmt.Errorf("-labels: %w", err)
	}
	if o.tokenOnly {
		conf.CertData, conf.KeyData, conf.CertFile, conf.KeyFile = nil, nil, "", ""
	}
	cluster := util.NewCluster(o.clusterName, namespaces, o.clusterResources, conf, token, aws, execConf, lbls, nil)
	if o.shard >= 0 {
		cluster.Shard = &o.shard
	}
	cluster.Project = o.project

	_, hub, err := clientsetFor(o.hubKubeconfig)
	if err != nil {
		return err
	}
	settingsCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	argoDB := db.NewDB(o.namespace, settings.NewSettingsManager(settingsCtx, hub, o.namespace), hub)
	if _, err := argoDB.CreateCluster(ctx, cluster); err != nil {
		return fmt.Errorf("create cluster: %w", err)
	}
	secretName, err := db.URIToSecretName("cluster", cluster.Server)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"secret":           secretName,
		"server":           cluster.Server,
		"name":             cluster.Name,
		"serviceAccount":   o.systemNamespace + "/" + clusterauth.ArgoCDManagerServiceAccount,
		"tokenSecret":      o.systemNamespace + "/" + clusterauth.ArgoCDManagerServiceAccount + clusterauth.SATokenSecretSuffix,
		"clusterRole":      clusterauth.ArgoCDManagerClusterRole,
		"clusterRoleBound": len(namespaces) == 0 && token != "",
	})
}

type listed struct {
	Secret           string            `json:"secret"`
	Name             string            `json:"name"`
	Server           string            `json:"server"`
	Project          string            `json:"project"`
	Namespaces       []string          `json:"namespaces"`
	ClusterResources bool              `json:"clusterResources"`
	Shard            *int64            `json:"shard,omitempty"`
	Labels           map[string]string `json:"labels"`
	Auth             string            `json:"auth"`
	Error            string            `json:"error,omitempty"`
}

// list prints Argo CD's view: every labelled Secret through SecretToCluster and RawRestConfig (which credential Argo CD
// would use), and the names an ApplicationSet cluster generator with the selector would produce.
func list(hubKubeconfig, namespace, selector string) error {
	ctx := context.Background()
	_, hub, err := clientsetFor(hubKubeconfig)
	if err != nil {
		return err
	}
	secretType := "argocd.argoproj.io/secret-type"
	all, err := hub.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: secretType + "=cluster"})
	if err != nil {
		return err
	}
	out := []listed{}
	for i := range all.Items {
		s := &all.Items[i]
		row := listed{Secret: s.Name, Labels: s.Labels}
		c, err := db.SecretToCluster(s)
		if err != nil {
			row.Error = err.Error()
			out = append(out, row)
			continue
		}
		row.Name, row.Server, row.Project, row.Namespaces = c.Name, c.Server, c.Project, c.Namespaces
		row.ClusterResources, row.Shard = c.ClusterResources, c.Shard
		if c.Server != v1alpha1.KubernetesInternalAPIServerAddr {
			rc, err := c.RawRestConfig()
			switch {
			case err != nil:
				row.Error = err.Error()
			case rc.ExecProvider != nil:
				row.Auth = "exec:" + rc.ExecProvider.Command
			case len(rc.CertData) > 0:
				row.Auth = "client-cert"
			case rc.BearerToken != "":
				row.Auth = "token"
			default:
				row.Auth = "none"
			}
		}
		out = append(out, row)
	}
	// The generator's selector: the given matchLabels plus the secret-type label (metav1.AddLabelToSelector), as a
	// label selector the API server evaluates.
	matchLabels, err := pairs(selector)
	if err != nil {
		return fmt.Errorf("-selector: %w", err)
	}
	ls := metav1.AddLabelToSelector(&metav1.LabelSelector{MatchLabels: matchLabels}, secretType, "cluster")
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return err
	}
	matched, err := hub.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return err
	}
	names := []string{}
	for _, s := range matched.Items {
		names = append(names, string(s.Data["name"]))
	}
	// Without a selector the generator also yields the local cluster when no Secret is for it.
	if len(matchLabels) == 0 {
		inCluster := false
		for _, r := range out {
			if r.Server == v1alpha1.KubernetesInternalAPIServerAddr {
				inCluster = true
			}
		}
		if !inCluster {
			names = append(names, "in-cluster")
		}
	}
	sort.Strings(names)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"clusters": out, "generator": names, "selector": sel.String()})
}
