// Command argocd-consumer is Argo CD's own code (the argo-cd/v3 module at the version in go.mod) on both sides of an
// Argo CD cluster Secret, for fleet's e2e tests. Three modes:
//
//   - default (no -mode): reads one cluster Secret from the hub the way Argo CD does (its `config` key unmarshalled into
//     Argo CD's own v1alpha1.ClusterConfig, `server` as Cluster.Server) and asks the cluster who it is
//     (SelfSubjectReview) through the rest.Config Argo CD builds from it (Cluster.RawRestConfig). Prints one JSON line:
//     {"username": ..., "server": ...}. Run against what `fleet wi setup --consumer argocd` wrote.
//   - -mode add: what `argocd cluster add` does (add.go): the RBAC it installs on the member (clusterauth's
//     InstallClusterManagerRBAC: ServiceAccount argocd-manager, its role and binding, a never-expiring legacy token
//     Secret), the Cluster its CLI builds (cmd/util NewCluster), and the cluster Secret written by Argo CD's database
//     layer (util/db's CreateCluster, which the API server's cluster service calls). Prints {"secret", "server", ...}.
//   - -mode list: the clusters as Argo CD's database layer reads them (util/db SecretToCluster over the labelled
//     Secrets), and which of them an ApplicationSet cluster generator with -selector matches (the generator's own
//     selector: the given one plus the secret-type label, listed by the API server). Prints one JSON object.
//
// Errors go to stderr with exit 1.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	hubKubeconfig := flag.String("hub-kubeconfig", "", "kubeconfig of the hub, where the Secret is")
	namespace := flag.String("namespace", "", "the Secret's namespace (Argo CD's)")
	name := flag.String("name", "", "the Secret's name")
	mode := flag.String("mode", "", "add (argocd cluster add), list (Argo CD's view of the clusters), or empty (connect with one Secret)")
	var a addOptions
	flag.StringVar(&a.memberKubeconfig, "member-kubeconfig", "", "add: kubeconfig of the member (its current context, as `argocd cluster add CONTEXT`)")
	flag.StringVar(&a.systemNamespace, "system-namespace", "kube-system", "add: where argocd-manager is made (--system-namespace)")
	flag.StringVar(&a.clusterName, "cluster-name", "", "add: the cluster's name in Argo CD (--name)")
	flag.StringVar(&a.namespaces, "namespaces", "", "add: comma-separated namespaces to manage (--namespace, repeated)")
	flag.BoolVar(&a.clusterResources, "cluster-resources", false, "add: --cluster-resources")
	flag.StringVar(&a.project, "project", "", "add: --project")
	flag.Int64Var(&a.shard, "shard", -1, "add: --shard")
	flag.StringVar(&a.labels, "labels", "", "add: comma-separated key=value labels (--label)")
	flag.StringVar(&a.execCommand, "exec-command", "", "add: --exec-command (no RBAC is installed then, as upstream)")
	flag.StringVar(&a.execArgs, "exec-args", "", "add: comma-separated --exec-command-args")
	flag.StringVar(&a.execEnv, "exec-env", "", "add: comma-separated NAME=value --exec-command-env")
	flag.StringVar(&a.awsClusterName, "aws-cluster-name", "", "add: --aws-cluster-name")
	flag.StringVar(&a.awsRoleArn, "aws-role-arn", "", "add: --aws-role-arn")
	flag.BoolVar(&a.tokenOnly, "token-only", false, "add: leave the member's client certificate out of the rest.Config, as for a user whose kubeconfig has none (NewCluster then stores the bearer token)")
	selector := flag.String("selector", "", "list: an ApplicationSet cluster generator's matchLabels selector (k=v,...)")
	flag.Parse()
	var err error
	switch *mode {
	case "":
		err = run(*hubKubeconfig, *namespace, *name)
	case "add":
		a.hubKubeconfig, a.namespace = *hubKubeconfig, *namespace
		err = add(a)
	case "list":
		err = list(*hubKubeconfig, *namespace, *selector)
	default:
		err = fmt.Errorf("-mode: %q is not add, list or empty", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func call(client *http.Client, method, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, url, res.StatusCode, out)
	}
	return out, nil
}

func run(hubKubeconfig, namespace, name string) error {
	hubConfig, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		return fmt.Errorf("hub kubeconfig: %w", err)
	}
	hubClient, err := rest.HTTPClientFor(hubConfig)
	if err != nil {
		return err
	}
	raw, err := call(hubClient, "GET", fmt.Sprintf("%s/api/v1/namespaces/%s/secrets/%s", hubConfig.Host, namespace, name), nil)
	if err != nil {
		return err
	}
	var secret struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(raw, &secret); err != nil {
		return err
	}
	field := func(k string) ([]byte, error) { return base64.StdEncoding.DecodeString(secret.Data[k]) }
	server, err := field("server")
	if err != nil {
		return err
	}
	configJSON, err := field("config")
	if err != nil {
		return err
	}
	cluster := v1alpha1.Cluster{Server: string(server)}
	if err := json.Unmarshal(configJSON, &cluster.Config); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	config, err := cluster.RawRestConfig()
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		return err
	}
	out, err := call(client, "POST", config.Host+"/apis/authentication.k8s.io/v1/selfsubjectreviews", []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		return err
	}
	var answer struct {
		Status struct {
			UserInfo struct {
				Username string `json:"username"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"username": answer.Status.UserInfo.Username, "server": config.Host})
}
