// fleet-reference: the fastest honest client for fleet's fleet-wide commands, the reference bench/run.ts measures fleet
// against (issue 23). For every context of one kubeconfig it sends, with client-go, exactly the requests fleet sends
// for the command (checked against `fleet ... -v 6` by bench/reference/requests.test.ts), at fleet's concurrency, with
// client-go's shared transports, and prints one JSON document of the answers, as fleet's -o json does.
//
//	fleet-reference -command whoami|can-i|verify [-kubeconfig FILE] [-concurrency 16] [-timeout 10s]
//	fleet-reference -command rotate -hub-kubeconfig FILE -kubeconfig MEMBER[:MEMBER...]   (rotate.go)
//	fleet-reference -command exporter-collect -hub-kubeconfig FILE -hub-namespace NS [-collections K -interval D]   (exporter.go)
//
// whoami:  POST selfsubjectreviews, POST selfsubjectaccessreviews (* * *: fleet's cluster-admin warning)
// can-i:   GET /api, GET /apis (aggregated discovery, decoded: is selfsubjectreviews a known resource, and its scope), POST
//
//	selfsubjectaccessreviews (create selfsubjectreviews.authentication.k8s.io)
//
// verify:  GET /version, GET /readyz, POST selfsubjectreviews, POST selfsubjectaccessreviews (* * *)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var logRequests, protobuf bool

// logged prints each request as fleet -v 6 does: METHOD URL STATUS, and the answer's content type (which document the
// server sent: the test compares it with fleet's -v 8 response headers).
type logged struct{ next http.RoundTripper }

func (l logged) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.next.RoundTrip(r)
	if err == nil {
		fmt.Fprintf(os.Stderr, "%s %s %s content-type=%s\n", r.Method, r.URL.String(), res.Status, res.Header.Get("Content-Type"))
	}
	return res, err
}

type item struct {
	Cluster  string   `json:"cluster"`
	OK       bool     `json:"ok"`
	Username string   `json:"username,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Allowed  *bool    `json:"allowed,omitempty"`
	Version  string   `json:"version,omitempty"`
	Error    string   `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file whose every context is a cluster")
	command := flag.String("command", "whoami", "whoami | can-i | verify | rotate | exporter-collect")
	hubKubeconfig := flag.String("hub-kubeconfig", "", "rotate: the hub's kubeconfig (-kubeconfig: the members', colon-separated)")
	concurrency := flag.Int("concurrency", 16, "clusters at a time (fleet's default)")
	timeout := flag.Duration("timeout", 10*time.Second, "time limit of each request (fleet's default --request-timeout)")
	flag.BoolVar(&logRequests, "log", false, "print METHOD URL STATUS of every request on stderr (as fleet -v 6 does), to compare the two")
	flag.BoolVar(&protobuf, "protobuf", false, "send and accept protobuf for the reviews (client-go's default for built-in types) instead of fleet's JSON: not the same requests, only to show what protobuf is worth")
	hubNamespace := flag.String("hub-namespace", "", "exporter-collect: the hub namespace whose consumer Secrets are read")
	collections := flag.Int("collections", 1, "exporter-collect: collections to run in this process")
	interval := flag.Duration("interval", 0, "exporter-collect: wait between collections")
	flag.Parse()
	if *command == "exporter-collect" {
		exporterMain(*kubeconfig, *hubKubeconfig, *hubNamespace, *concurrency, *timeout, *collections, *interval)
		return
	}
	if *command == "rotate" {
		rotateMain(*hubKubeconfig, *kubeconfig, *concurrency, *timeout)
		return
	}
	if *command != "whoami" && *command != "can-i" && *command != "verify" {
		fmt.Fprintf(os.Stderr, "-command %s: expected whoami, can-i, verify or rotate\n", *command)
		os.Exit(2)
	}
	raw, err := clientcmd.LoadFromFile(*kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *kubeconfig, err)
		os.Exit(2)
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)

	items := make([]item, len(names))
	slots := make(chan struct{}, *concurrency)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			items[i] = one(raw, name, *command, *timeout)
		}()
	}
	wg.Wait()
	failed := false
	for _, it := range items {
		failed = failed || !it.OK
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	if err := out.Encode(map[string]any{"kind": "ReferenceList", "command": *command, "items": items}); err != nil {
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func one(raw *clientcmdapi.Config, name, command string, timeout time.Duration) item {
	it := item{Cluster: name}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		it.Error = err.Error()
		return it
	}
	cfg.Timeout = timeout
	// No client-side rate limit: fleet has none, and 2 to 4 requests per cluster would never reach client-go's anyway.
	cfg.QPS = -1
	// fleet speaks JSON (there is no protobuf codec for Kubernetes types in its stack); the same requests means JSON here
	// too, not client-go's default protobuf for built-in types (-protobuf measures that).
	if !protobuf {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
	if logRequests {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return logged{rt} })
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		it.Error = err.Error()
		return it
	}
	ctx := context.Background()
	switch command {
	case "whoami":
		err = whoami(ctx, cs, &it)
	case "can-i":
		err = canI(ctx, cs, &it)
	case "verify":
		err = verify(ctx, cs, &it)
	}
	if err != nil {
		it.Error = err.Error()
		return it
	}
	it.OK = true
	return it
}

func whoami(ctx context.Context, cs *kubernetes.Clientset, it *item) error {
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	it.Username, it.Groups = review.Status.UserInfo.Username, review.Status.UserInfo.Groups
	all := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"},
	}}
	answer, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, all, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	it.Allowed = &answer.Status.Allowed
	return nil
}

// aggregatedDiscovery is the Accept header fleet sends for discovery (src/access/discovery.ts): the aggregated
// document, v2 then v2beta1, else the plain group list.
const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

func canI(ctx context.Context, cs *kubernetes.Clientset, it *item) error {
	// Discovery as fleet asks for it and uses it: both aggregated documents, decoded, the resource looked up (known?
	// namespaced?), as kubectl's RESTMapper would before it asks.
	found := false
	for _, path := range []string{"/api", "/apis"} {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath(path).SetHeader("Accept", aggregatedDiscovery).DoRaw(ctx)
		if err != nil {
			return err
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					if g.Name == "authentication.k8s.io" && r.Resource == "selfsubjectreviews" {
						found = true
					}
				}
			}
		}
	}
	if !found {
		return fmt.Errorf("the server does not have resource selfsubjectreviews.authentication.k8s.io")
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	}}
	answer, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	it.Allowed = &answer.Status.Allowed
	return nil
}

func verify(ctx context.Context, cs *kubernetes.Clientset, it *item) error {
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	it.Version = v.GitVersion
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return err
	}
	return whoami(ctx, cs, it)
}
