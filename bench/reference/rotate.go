// -command rotate: `fleet creds rotate --all` done by client-go, sending per credential the requests fleet sends
// (checked against `fleet creds rotate -v 6` by test/e2e/bench-reference.test.ts), with the same concurrency rule, for
// the token credentials of fleet's Secret formats that bench/creds-rotate.ts makes (a preset grant). Per Secret:
//
//	hub:    GET lease, POST lease (or PUT an expired one), GET the Secret, PUT it (claim), PUT it (replace),
//	        GET + PUT the Secret (finish), GET + DELETE the lease (release); GET + PUT the lease every 5 s while held
//	member: GET clusterproperties v1beta1 and v1alpha1, GET namespace kube-system (the cluster ID), SSAR (may it mint),
//	        apply the new anchor, TokenRequest, with the new token SSR + SSAR (* * *) + the granted and the denied SSAR,
//	        DELETE the old anchor, with the old token SSR until 401 (250 ms, doubling to 2 s)
//
// and once: GET the fleet Secrets on the hub before, and each namespace's rotation Leases after.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	fleetPrefix = "fleet.dev/"
	annFormat   = fleetPrefix + "credential-format"
	annMethod   = fleetPrefix + "credential-method"
	annIdentity = fleetPrefix + "credential-identity"
	annScope    = fleetPrefix + "credential-scope"
	annAccess   = fleetPrefix + "credential-access"
	annAnchor   = fleetPrefix + "credential-anchor"
	annExpires  = fleetPrefix + "credential-expires"
	annLifetime = fleetPrefix + "credential-lifetime"
	annSha      = fleetPrefix + "kubeconfig-sha256"
	annServer   = fleetPrefix + "cluster-server"
	rotPhase    = fleetPrefix + "rotation-phase"
	rotNew      = fleetPrefix + "rotation-new-anchor"
	rotOld      = fleetPrefix + "rotation-old-anchor"
	rotRun      = fleetPrefix + "rotation-run"
	rotStarted  = fleetPrefix + "rotation-started"
	managedBy   = "app.kubernetes.io/managed-by"
)

type rotated struct {
	Secret struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"secret"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Ms     int64  `json:"durationMs"`
}

// restConfig: JSON both ways, no client-side rate limit, fleet's request time limit, the request log if asked.
func restConfig(cfg *rest.Config, timeout time.Duration) *rest.Config {
	cfg.Timeout = timeout
	cfg.QPS = -1
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	if logRequests {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return logged{rt} })
	}
	return cfg
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func rotateMain(hubKubeconfig, kubeconfigs string, concurrency int, timeout time.Duration) {
	hubCfg, err := clientcmd.BuildConfigFromFlags("", hubKubeconfig)
	if err != nil {
		fatal(err)
	}
	hub := kubernetes.NewForConfigOrDie(restConfig(hubCfg, timeout))
	// Every member context, by server URL: the cluster a credential recorded (fleet.dev/cluster-server).
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: strings.Split(kubeconfigs, ":")}
	raw, err := rules.Load()
	if err != nil {
		fatal(err)
	}
	members := map[string]*kubernetes.Clientset{}
	for name := range raw.Contexts {
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			fatal(err)
		}
		memberConfigs[cfg.Host] = rest.CopyConfig(cfg)
		members[cfg.Host] = kubernetes.NewForConfigOrDie(restConfig(cfg, timeout))
	}
	ctx := context.Background()
	list, err := hub.CoreV1().Secrets("").List(ctx, metav1.ListOptions{LabelSelector: managedBy + "=fleet"})
	if err != nil {
		fatal(err)
	}
	var secrets []corev1.Secret
	namespaces := map[string]bool{}
	for _, s := range list.Items {
		if s.Annotations[annFormat] != "" && s.Annotations[annMethod] != "" {
			secrets = append(secrets, s)
			namespaces[s.Namespace] = true
		}
	}
	run := fmt.Sprintf("ref-%d", os.Getpid())
	items := make([]rotated, len(secrets))
	// fleet's rule: at most `concurrency` credentials in their working steps; one waiting for its old token's refusal
	// gives its place to the next.
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i := range secrets {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			var once sync.Once
			give := func() { once.Do(func() { <-slots }) }
			defer give()
			t0 := time.Now()
			it := &items[i]
			it.Secret.Namespace, it.Secret.Name = secrets[i].Namespace, secrets[i].Name
			if err := rotateOne(ctx, hub, members, secrets[i].Namespace, secrets[i].Name, run, timeout, give); err != nil {
				it.Status, it.Error = "failed", err.Error()
			} else {
				it.Status = "rotated"
			}
			it.Ms = time.Since(t0).Milliseconds()
		}()
	}
	wg.Wait()
	// The sweep: each namespace's rotation Leases, an expired one or this run's removed.
	for ns := range namespaces {
		leases, err := hub.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{LabelSelector: managedBy + "=fleet"})
		if err != nil {
			continue
		}
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == run || expired(&l) {
				rv := l.ResourceVersion
				_ = hub.CoordinationV1().Leases(ns).Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
			}
		}
	}
	failed := false
	for _, it := range items {
		failed = failed || it.Status != "rotated"
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	_ = out.Encode(map[string]any{"kind": "ReferenceRotation", "items": items})
	if failed {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

func expired(l *coordinationv1.Lease) bool {
	if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second).Before(time.Now())
}

func leaseName(secret string) string { return "fleet-rotate-" + sha(secret)[:12] }

// acquire takes the Secret's Lease (create, or take over an expired one), waiting up to 60 s for a live holder, and
// renews it every 5 s until released.
func acquire(ctx context.Context, hub *kubernetes.Clientset, ns, secret, run string) (func(), error) {
	leases := hub.CoordinationV1().Leases(ns)
	name := leaseName(secret)
	deadline := time.Now().Add(60 * time.Second)
	for {
		now := metav1.NewMicroTime(time.Now())
		seconds := int32(15)
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			fresh := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{managedBy: "fleet"}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &run, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}}
			_, err = leases.Create(ctx, fresh, metav1.CreateOptions{FieldManager: "fleet"})
		} else if err == nil && expired(l) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.AcquireTime, l.Spec.RenewTime = &run, &seconds, &now, &now
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: "fleet"})
		} else if err == nil {
			err = errors.New("busy")
		}
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && err.Error() != "busy" || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(time.Second)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if l, err := leases.Get(ctx, name, metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == run {
					now := metav1.NewMicroTime(time.Now())
					l.Spec.RenewTime = &now
					_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		if l, err := leases.Get(ctx, name, metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == run {
			rv := l.ResourceVersion
			_ = leases.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		}
	}, nil
}

// The kubeconfig a Secret holds (Argo CD's JSON config, whose bearer token is what changes), by format.
func kubeconfigKey(format string) string {
	switch format {
	case "multicluster-runtime":
		return "kubeconfig"
	case "cluster-api", "flux":
		return "value"
	case "argocd":
		return "config"
	}
	return ""
}

func tokenIn(format string, text []byte) (string, error) {
	if format == "argocd" {
		var c struct {
			BearerToken string `json:"bearerToken"`
		}
		err := json.Unmarshal(text, &c)
		return c.BearerToken, err
	}
	cfg, err := clientcmd.Load(text)
	if err != nil {
		return "", err
	}
	for _, u := range cfg.AuthInfos {
		return u.Token, nil
	}
	return "", errors.New("no user")
}

// The preset grants bench/creds-rotate.ts uses, and the checks fleet derives from a grant (src/creds/verify.ts).
var presets = map[string]authorizationv1.ResourceAttributes{"pod-lister": {Verb: "get", Resource: "pods"}}

func probes(access, scope string) (granted, denied authorizationv1.ResourceAttributes, err error) {
	g, ok := presets[strings.TrimPrefix(access, "preset ")]
	if !ok {
		return g, g, fmt.Errorf("the reference knows the presets %v, not %q", presets, access)
	}
	namespaces := []string{}
	if scope != "" && scope != "cluster-wide" {
		namespaces = strings.Split(strings.TrimPrefix(scope, "namespaces "), ",")
	}
	if len(namespaces) > 0 {
		g.Namespace = namespaces[0]
		d := g
		d.Namespace = "kube-system"
		return g, d, nil
	}
	return g, authorizationv1.ResourceAttributes{Verb: "delete", Resource: "namespaces"}, nil
}

func ssar(ctx context.Context, cs *kubernetes.Clientset, a authorizationv1.ResourceAttributes) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// tokenClient: the member with a bearer token instead of the context's credential (client-go shares the transport).
func tokenClient(of *rest.Config, token string, timeout time.Duration) *kubernetes.Clientset {
	cfg := rest.AnonymousClientConfig(of)
	cfg.BearerToken = token
	return kubernetes.NewForConfigOrDie(restConfig(cfg, timeout))
}

func rotateOne(ctx context.Context, hub *kubernetes.Clientset, members map[string]*kubernetes.Clientset, ns, name, run string, timeout time.Duration, give func()) error {
	release, err := acquire(ctx, hub, ns, name, run)
	if err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	defer release()
	secrets := hub.CoreV1().Secrets(ns)
	s, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	a := s.Annotations
	format := a[annFormat]
	key := kubeconfigKey(format)
	oldToken, err := tokenIn(format, s.Data[key])
	if err != nil {
		return err
	}
	member, ok := members[a[annServer]]
	if !ok {
		return fmt.Errorf("no member context for %s", a[annServer])
	}
	idParts := strings.Split(a[annIdentity], ":")
	saNs, sa := idParts[2], idParts[3]
	// The target, found as fleet finds it: the cluster ID (ClusterProperty, else kube-system's uid), may it mint.
	for _, v := range []string{"v1beta1", "v1alpha1"} {
		_ = member.Discovery().RESTClient().Get().AbsPath("/apis/about.k8s.io/" + v + "/clusterproperties/cluster.clusterset.k8s.io").Do(ctx).Error()
	}
	if _, err := member.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		return err
	}
	if ok, err := ssar(ctx, member, authorizationv1.ResourceAttributes{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: saNs}); err != nil || !ok {
		return fmt.Errorf("may not mint: %v", err)
	}
	// Claim: the new anchor's name recorded before it exists.
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	newAnchor := fmt.Sprintf("%s-fleet-anchor-%s-%s", sa, sha(ns + "/" + name)[:8], hex.EncodeToString(suffix))
	oldAnchor := a[annAnchor]
	a[rotPhase], a[rotNew], a[rotOld], a[rotRun], a[rotStarted] = "claimed", saNs+"/"+newAnchor, oldAnchor, run, time.Now().UTC().Format(time.RFC3339)
	if s, err = secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	// Anchor (server-side apply) and mint.
	anchor := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": map[string]any{
		"name": newAnchor, "namespace": saNs,
		"labels":      map[string]string{managedBy: "fleet", fleetPrefix + "credential": sha(a[annIdentity])[:16]},
		"annotations": map[string]string{annMethod: a[annMethod], annIdentity: a[annIdentity], annScope: a[annScope], annAccess: a[annAccess]},
	}}
	body, _ := json.Marshal(anchor)
	force := true
	applied, err := member.CoreV1().Secrets(saNs).Patch(ctx, newAnchor, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "fleet", Force: &force})
	if err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	seconds := int64(86400)
	if l := a[annLifetime]; l != "" {
		_, _ = fmt.Sscan(l, &seconds)
	}
	tr, err := member.CoreV1().ServiceAccounts(saNs).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds, BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: newAnchor, UID: applied.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("mint: %w", err)
	}
	// Verify with the new token: who, the power warning's review, one granted, one denied.
	memberCfg := memberConfigs[a[annServer]]
	fresh := tokenClient(memberCfg, tr.Status.Token, timeout)
	me, err := fresh.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || me.Status.UserInfo.Username != a[annIdentity] {
		return fmt.Errorf("verify identity: %v", err)
	}
	if _, err := ssar(ctx, fresh, authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}); err != nil {
		return err
	}
	granted, denied, err := probes(a[annAccess], a[annScope])
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		ok, err := ssar(ctx, fresh, granted)
		if ok || time.Now().After(deadline) {
			if !ok {
				return fmt.Errorf("verify granted: %v", err)
			}
			break
		}
	}
	if ok, err := ssar(ctx, fresh, denied); err != nil || ok {
		return fmt.Errorf("verify denied: %v", err)
	}
	// Replace: the new credential in every key of the format, phase replaced.
	text := strings.ReplaceAll(string(s.Data[key]), oldToken, tr.Status.Token)
	s.Data[key] = []byte(text)
	a = s.Annotations
	a[annAnchor], a[annExpires], a[annSha], a[rotPhase] = saNs+"/"+newAnchor, tr.Status.ExpirationTimestamp.UTC().Format(time.RFC3339), sha(text), "replaced"
	if _, err = secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	// Before the deletion, what fleet looks at (src/creds/still-used.ts): the old anchor itself on the member, and every
	// other hub Secret, which must not hold the old token.
	oldNs, oldName, _ := strings.Cut(oldAnchor, "/")
	if _, err := member.CoreV1().Secrets(oldNs).Get(ctx, oldName, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("still-used: %w", err)
	}
	others, err := hub.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("still-used: %w", err)
	}
	for _, o := range others.Items {
		if o.Namespace == s.Namespace && o.Name == s.Name {
			continue
		}
		for _, v := range o.Data {
			if strings.Contains(string(v), oldToken) {
				return fmt.Errorf("still used by hub Secret %s/%s", o.Namespace, o.Name)
			}
		}
	}
	// Revoke, then wait (without a place) for the old token's refusal.
	if err := member.CoreV1().Secrets(oldNs).Delete(ctx, oldName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("revoke: %w", err)
	}
	give()
	old := tokenClient(memberCfg, oldToken, timeout)
	wait := 250 * time.Millisecond
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, err := old.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if apierrors.IsUnauthorized(err) {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the old token still authenticates")
		}
		time.Sleep(wait)
		wait = min(2*time.Second, 2*wait)
	}
	// Finish: the rotation annotations removed (re-read first, as fleet does).
	s, err = secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, k := range []string{rotPhase, rotNew, rotOld, rotRun, rotStarted} {
		delete(s.Annotations, k)
	}
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

// memberConfigs: each member's rest.Config by server URL, for clients with another credential on the same cluster.
var memberConfigs = map[string]*rest.Config{}
