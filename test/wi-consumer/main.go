// Command wi-consumer is a stand-in for a multicluster controller that uses sigs.k8s.io/cluster-inventory-api's access
// library (pkg/access), as multicluster-runtime's cluster-inventory-api provider does: it reads a ClusterProfile from
// the hub, turns it and the --clusterprofile-provider-file into a rest.Config with access.BuildConfigFromCP, and asks
// the member who it is (SelfSubjectReview) with that config. fleet's e2e tests run it against what `fleet wi setup
// --consumer cluster-inventory` wrote. It prints one JSON line: {"username": ..., "groups": [...]}; errors go to stderr
// with exit 1.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
)

func main() {
	hubKubeconfig := flag.String("hub-kubeconfig", "", "kubeconfig of the hub, where the ClusterProfile is")
	namespace := flag.String("namespace", "", "the ClusterProfile's namespace")
	name := flag.String("name", "", "the ClusterProfile's name")
	providerFile := access.SetupProviderFileFlag()
	requests := flag.Int("requests", 1, "how many SelfSubjectReviews to send through one rest.Config")
	flag.Parse()
	if err := run(*hubKubeconfig, *namespace, *name, *providerFile, *requests); err != nil {
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

func run(hubKubeconfig, namespace, name, providerFile string, requests int) error {
	hubConfig, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		return fmt.Errorf("hub kubeconfig: %w", err)
	}
	hubClient, err := rest.HTTPClientFor(hubConfig)
	if err != nil {
		return err
	}
	raw, err := call(hubClient, "GET", fmt.Sprintf("%s/apis/multicluster.x-k8s.io/v1alpha1/namespaces/%s/clusterprofiles/%s", hubConfig.Host, namespace, name), nil)
	if err != nil {
		return err
	}
	var profile v1alpha1.ClusterProfile
	if err := json.Unmarshal(raw, &profile); err != nil {
		return fmt.Errorf("ClusterProfile: %w", err)
	}
	accessConfig, err := access.NewFromFile(providerFile)
	if err != nil {
		return err
	}
	config, err := accessConfig.BuildConfigFromCP(&profile)
	if err != nil {
		return err
	}
	memberClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return err
	}
	review := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	var last []byte
	for i := 0; i < requests; i++ {
		if last, err = call(memberClient, "POST", config.Host+"/apis/authentication.k8s.io/v1/selfsubjectreviews", review); err != nil {
			return err
		}
	}
	var answer struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(last, &answer); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"username": answer.Status.UserInfo.Username, "groups": answer.Status.UserInfo.Groups, "server": config.Host})
}
