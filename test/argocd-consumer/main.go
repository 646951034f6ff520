// Command argocd-consumer reads an Argo CD cluster Secret from the hub the way Argo CD does (its `config` key
// unmarshalled into Argo CD's own v1alpha1.ClusterConfig, `server` as Cluster.Server) and asks the cluster who it is
// (SelfSubjectReview) through the rest.Config Argo CD builds from it (Cluster.RawRestConfig). fleet's e2e tests run it
// against what `fleet wi setup --consumer argocd` wrote. It prints one JSON line: {"username": ..., "server": ...};
// errors go to stderr with exit 1.
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
	flag.Parse()
	if err := run(*hubKubeconfig, *namespace, *name); err != nil {
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
