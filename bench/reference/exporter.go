// -command exporter-collect: one `fleet exporter` collection done by client-go, repeated -collections times in one
// process -interval apart (bench/exporter.ts compares the two; it also compares the request multisets of one small
// collection, fleet -v 6 against -log). Per collection, for -kubeconfig's every context and -hub-kubeconfig's hub,
// exactly what fleet's collection sends (src/exporter/collect.ts):
//
//	clusters (16 at a time):    GET /version, GET /readyz, POST SSR, POST SSAR (* * *)          (clusters verify)
//	hub (one after another):    GET secrets ?limit=500 for each of the 5 consumer selectors (continue pages), GET
//	                            clusterprofiles, GET /apis/kustomize.toolkit.fluxcd.io and its kustomizations, GET
//	                            /apis/helm.toolkit.fluxcd.io and its helmreleases, in -hub-namespace
//	credentials (16 at a time): every context: POST SSR, POST SSAR (* * *); every multicluster-runtime Secret (its
//	                            kubeconfig decoded, a client built from it): POST SSR, POST SSAR (* * *), then two
//	                            SelfSubjectRulesReviews at once (namespace default and cluster-wide.fleet.invalid):
//	                            fleet's risk report of an adoptable credential                   (creds list --live)
//
// One JSON line per collection on stdout: n, durationMs, requests, clusters, credentials, rssKiB (VmRSS after it).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var requestCount atomic.Int64

type counted struct{ next http.RoundTripper }

func (c counted) RoundTrip(r *http.Request) (*http.Response, error) {
	requestCount.Add(1)
	return c.next.RoundTrip(r)
}

var consumerSelectors = []string{
	"labelSelector=" + url.QueryEscape("sigs.k8s.io/multicluster-runtime-kubeconfig=true"),
	"fieldSelector=" + url.QueryEscape("type=cluster.x-k8s.io/secret"),
	"labelSelector=" + url.QueryEscape("x-k8s.io/cluster-inventory-consumer"),
	"labelSelector=" + url.QueryEscape("argocd.argoproj.io/secret-type=cluster"),
	"labelSelector=" + url.QueryEscape("app.kubernetes.io/managed-by=fleet"),
}

func clientFor(cfg *rest.Config, timeout time.Duration) (*kubernetes.Clientset, error) {
	cfg.Timeout = timeout
	cfg.QPS = -1
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		if logRequests {
			return counted{logged{rt}}
		}
		return counted{rt}
	})
	return kubernetes.NewForConfig(cfg)
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

func limitEach[T any](items []T, concurrency int, fn func(T)) {
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			fn(it)
		}()
	}
	wg.Wait()
}

type listed struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string][]byte `json:"data"`
	} `json:"items"`
}

func getAll(ctx context.Context, hub *kubernetes.Clientset, path, query string) ([]byte, []listed, error) {
	var pages []listed
	cont := ""
	for {
		q := "limit=500"
		if cont != "" {
			q += "&continue=" + url.QueryEscape(cont)
		}
		if query != "" {
			q += "&" + query
		}
		raw, err := hub.CoreV1().RESTClient().Get().RequestURI(path + "?" + q).DoRaw(ctx)
		if err != nil {
			return nil, pages, err
		}
		var l listed
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, pages, err
		}
		pages = append(pages, l)
		if l.Metadata.Continue == "" {
			return raw, pages, nil
		}
		cont = l.Metadata.Continue
	}
}

type credential struct {
	cfg    *rest.Config
	secret bool
}

func reviewAll(ctx context.Context, cs *kubernetes.Clientset) error {
	all := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"},
	}}
	_, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, all, metav1.CreateOptions{})
	return err
}

func collectOnce(kubeconfig, hubKubeconfig, hubNamespace string, concurrency int, timeout time.Duration) (clusters, creds int, err error) {
	ctx := context.Background()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return 0, 0, err
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	cfgOf := func(r *clientcmdapi.Config, name string) (*rest.Config, error) {
		return clientcmd.NewNonInteractiveClientConfig(*r, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	}
	// clusters verify
	limitEach(names, concurrency, func(name string) {
		cfg, err := cfgOf(raw, name)
		if err != nil {
			return
		}
		cs, err := clientFor(cfg, timeout)
		if err != nil {
			return
		}
		var it item
		_ = verify(ctx, cs, &it)
	})
	// hub listing
	hubCfg, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		return len(names), 0, err
	}
	hub, err := clientFor(hubCfg, timeout)
	if err != nil {
		return len(names), 0, err
	}
	ns := "/api/v1/namespaces/" + hubNamespace + "/secrets"
	var credentials []credential
	for _, name := range names {
		if cfg, err := cfgOf(raw, name); err == nil {
			credentials = append(credentials, credential{cfg: cfg})
		}
	}
	for i, sel := range consumerSelectors {
		_, pages, err := getAll(ctx, hub, ns, sel)
		if err != nil {
			return len(names), 0, err
		}
		if i != 0 {
			continue
		}
		for _, p := range pages {
			for _, s := range p.Items {
				kc, err := clientcmd.Load(s.Data["kubeconfig"])
				if err != nil {
					continue
				}
				cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, kc.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
				if err != nil {
					continue
				}
				credentials = append(credentials, credential{cfg: cfg, secret: true})
			}
		}
	}
	if _, _, err := getAll(ctx, hub, "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/"+hubNamespace+"/clusterprofiles", ""); err != nil {
		fmt.Fprintf(os.Stderr, "clusterprofiles: %v\n", err)
	}
	for _, g := range [][2]string{{"kustomize.toolkit.fluxcd.io", "v1/namespaces/" + hubNamespace + "/kustomizations"}, {"helm.toolkit.fluxcd.io", "v2/namespaces/" + hubNamespace + "/helmreleases"}} {
		if _, err := hub.CoreV1().RESTClient().Get().AbsPath("/apis/" + g[0]).DoRaw(ctx); err != nil {
			continue
		}
		_, _, _ = getAll(ctx, hub, "/apis/"+g[0]+"/"+g[1], "")
	}
	// creds list --live
	limitEach(credentials, concurrency, func(c credential) {
		cs, err := clientFor(c.cfg, timeout)
		if err != nil {
			return
		}
		var it item
		if err := whoami(ctx, cs, &it); err != nil || !c.secret {
			return
		}
		var wg sync.WaitGroup
		for _, n := range []string{"default", "cluster-wide.fleet.invalid"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: n}}
				_, _ = cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, review, metav1.CreateOptions{})
			}()
		}
		wg.Wait()
	})
	return len(names), len(credentials), nil
}

func exporterMain(kubeconfig, hubKubeconfig, hubNamespace string, concurrency int, timeout time.Duration, collections int, interval time.Duration) {
	out := json.NewEncoder(os.Stdout)
	for n := 1; n <= collections; n++ {
		before := requestCount.Load()
		started := time.Now()
		clusters, creds, err := collectOnce(kubeconfig, hubKubeconfig, hubNamespace, concurrency, timeout)
		ms := float64(time.Since(started).Microseconds()) / 1000
		line := map[string]any{"n": n, "durationMs": ms, "requests": requestCount.Load() - before, "clusters": clusters, "credentials": creds, "rssKiB": rssKiB()}
		if err != nil {
			line["error"] = err.Error()
		}
		_ = out.Encode(line)
		if n < collections {
			time.Sleep(interval)
		}
	}
}
