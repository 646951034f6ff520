// fleet-credential answers the exec entries `fleet kubeconfig export` writes from fleet's credential cache, and hands
// everything else to fleet.
//
// kubectl runs an exec plugin before every invocation's first request, so what a cache hit costs is added to every
// kubectl call. A Node process costs about 20 ms before it runs a line; this program costs a millisecond or two. It
// reads exactly what `fleet kubeconfig credential` reads on a hit (src/export/credential-fast.ts and
// src/export/credential-cache.ts are the definition; test/unit/credential-reader.test.ts runs both on the same
// entries and compares them byte for byte) and decides nothing of its own: a miss, an entry it cannot read, a
// second call from the same kubectl (the first credential was probably refused), any argument it does not expect, all
// replace this process with fleet (execve, so kubectl stays the parent and sees fleet's output and exit code).
//
// Usage (as export writes it): fleet-credential --fleet FLEET kubeconfig credential --cluster C [--provider P]
// [--fleet-config F] [--kubeconfig K] [--context X]
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The entry format of src/export/credential-cache.ts (VERSION there).
const entryVersion = 1

var credentialFlags = []string{"cluster", "provider", "fleet-config", "kubeconfig", "context"}
var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

type credential struct {
	Token                 string `json:"token,omitempty"`
	ClientCertificateData string `json:"clientCertificateData,omitempty"`
	ClientKeyData         string `json:"clientKeyData,omitempty"`
}

// entry keeps the fields in the order credential-cache.ts writes them, so a rewritten entry reads the same to fleet.
type entry struct {
	V          int         `json:"v"`
	Cluster    string      `json:"cluster"`
	Expires    string      `json:"expires"`
	Credential *credential `json:"credential,omitempty"`
	HandedTo   []int       `json:"handedTo"`
	Suspect    *string     `json:"suspect,omitempty"`
}

// identity is credentialIdentity() of credential-fast.ts: the same keys in the same order, absent ones left out.
type identity struct {
	Cluster     *string `json:"cluster,omitempty"`
	Provider    *string `json:"provider,omitempty"`
	FleetConfig *string `json:"fleetConfig,omitempty"`
	Kubeconfig  *string `json:"kubeconfig,omitempty"`
	Context     *string `json:"context,omitempty"`
	Server      *string `json:"server,omitempty"`
	CA          *string `json:"ca,omitempty"`
}

type request struct {
	apiVersion string
	server     *string
	caHash     *string
}

func main() {
	args := os.Args[1:]
	if len(args) < 2 || args[0] != "--fleet" || args[1] == "" {
		fmt.Fprintln(os.Stderr, "fleet-credential: run by the exec entries of `fleet kubeconfig export` as: fleet-credential --fleet FLEET kubeconfig credential --cluster NAME ...")
		os.Exit(2)
	}
	fleet, rest := args[1], args[2:]
	if out, ok := fromCache(rest); ok {
		if _, err := os.Stdout.Write(out); err == nil {
			os.Exit(0)
		}
		os.Exit(1)
	}
	runFleet(fleet, rest)
}

// runFleet replaces this process with fleet, which answers with the same arguments (and says what is wrong, if anything).
func runFleet(fleet string, args []string) {
	path := fleet
	if !strings.Contains(fleet, "/") {
		found, err := exec.LookPath(fleet)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleet-credential: %s: not found on PATH (install fleet, or export again with --command /absolute/path/to/fleet)\n", fleet)
			os.Exit(1)
		}
		path = found
	}
	err := syscall.Exec(path, append([]string{fleet}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "fleet-credential: cannot run %s: %v\n", fleet, err)
	os.Exit(1)
}

// fromCache returns the ExecCredential to print when the cache holds one for this kubectl, as credential-fast.ts would.
func fromCache(args []string) ([]byte, bool) {
	if len(args) < 2 || args[0] != "kubeconfig" || args[1] != "credential" {
		return nil, false
	}
	flags, ok := exportedFlags(args[2:])
	if !ok {
		return nil, false
	}
	req, ok := readExecRequest(os.Getenv("KUBERNETES_EXEC_INFO"))
	if !ok {
		return nil, false
	}
	dir, ok := cacheDir()
	if !ok || !ours(dir) {
		return nil, false
	}
	id := identity{Cluster: flags["cluster"], Provider: flags["provider"], FleetConfig: flags["fleet-config"], Kubeconfig: flags["kubeconfig"], Context: flags["context"], Server: req.server, CA: req.caHash}
	key, err := jsonText(id)
	if err != nil {
		return nil, false
	}
	path := filepath.Join(dir, sha256Hex(key)+".json")
	e, ok := readEntry(path)
	if !ok || e.Credential == nil {
		return nil, false
	}
	expires, err := time.Parse(time.RFC3339, e.Expires)
	if err != nil || !expires.After(time.Now()) {
		return nil, false
	}
	caller := os.Getppid()
	if slices.Contains(e.HandedTo, caller) {
		// Asked twice by one kubectl before the end: the first was probably refused. Dropped here as fleet drops it;
		// fleet then fetches a fresh one and checks it against this fingerprint.
		fp, err := fingerprint(*e.Credential)
		if err != nil {
			return nil, false
		}
		_ = writeEntry(path, entry{V: e.V, Cluster: e.Cluster, Expires: e.Expires, HandedTo: []int{}, Suspect: &fp})
		return nil, false
	}
	e.HandedTo = append(e.HandedTo, caller)
	// Handed out only once the handover is recorded: the refusal rule above depends on it.
	if writeEntry(path, e) != nil {
		return nil, false
	}
	out, err := execCredential(req.apiVersion, *e.Credential, e.Expires)
	if err != nil {
		return nil, false
	}
	return out, true
}

// exportedFlags reads `--name value` pairs of the exported form only, like exportedFlags() in credential-fast.ts.
func exportedFlags(args []string) (map[string]*string, bool) {
	flags := map[string]*string{}
	for i := 0; i < len(args); i += 2 {
		name, found := strings.CutPrefix(args[i], "--")
		if !found || !slices.Contains(credentialFlags, name) || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
			return nil, false
		}
		if flags[name] != nil {
			return nil, false
		}
		value := args[i+1]
		flags[name] = &value
	}
	return flags, flags["cluster"] != nil
}

// readExecRequest reads KUBERNETES_EXEC_INFO as exec-info.ts does; anything it would refuse goes to fleet, which says why.
func readExecRequest(raw string) (request, bool) {
	if strings.TrimSpace(raw) == "" {
		return request{apiVersion: execAPIVersions[0]}, true
	}
	var info struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
		Spec       *struct {
			Cluster *struct {
				Server any `json:"server"`
				CA     any `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"spec"`
	}
	if json.Unmarshal([]byte(raw), &info) != nil || info.Kind != "ExecCredential" {
		return request{}, false
	}
	version, isString := info.APIVersion.(string)
	if !isString || !slices.Contains(execAPIVersions, version) {
		return request{}, false
	}
	req := request{apiVersion: version}
	if info.Spec != nil && info.Spec.Cluster != nil {
		if server, ok := info.Spec.Cluster.Server.(string); ok && server != "" {
			req.server = &server
		}
		if ca, ok := info.Spec.Cluster.CA.(string); ok && ca != "" {
			hash := sha256Hex([]byte(ca))
			req.caHash = &hash
		}
	}
	return req, true
}

// cacheDir is credentialCacheDir(): $XDG_CACHE_HOME/fleet/credentials when absolute, else ~/.cache/fleet/credentials.
func cacheDir() (string, bool) {
	if xdg := os.Getenv("XDG_CACHE_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "fleet", "credentials"), true
	}
	home := os.Getenv("HOME")
	if home == "" {
		return "", false
	}
	return filepath.Join(home, ".cache", "fleet", "credentials"), true
}

// ours is the cache's own check: a directory (not a link) of this user that group and others cannot write to.
func ours(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

func readEntry(path string) (entry, bool) {
	// O_NOFOLLOW: an entry is a file fleet wrote, never a link to one.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return entry{}, false
	}
	defer f.Close()
	var e entry
	dec := json.NewDecoder(f)
	if dec.Decode(&e) != nil || e.V != entryVersion || e.HandedTo == nil {
		return entry{}, false
	}
	return e, true
}

// writeEntry replaces the entry atomically with a 0600 file, as fleet's writeFileAtomic does. Ctrl-C (or a SIGTERM to
// kubectl's process group) during those few syscalls is held until the file is in place or removed, so no temporary
// file is left in the cache, and then ends the process; the default handling is back before fleet may be exec'd.
func writeEntry(path string, e entry) error {
	text, err := jsonText(e)
	if err != nil {
		return err
	}
	// Caught, not ignored: an ignored signal would stay ignored in fleet after execve.
	held := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, held...)
	defer func() {
		signal.Reset(held...)
		select {
		case sig := <-caught:
			// Interrupted: an interrupt is a failure, now that the cache is whole. Ended by the signal itself.
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
			time.Sleep(time.Second)
			os.Exit(130)
		default:
		}
	}()
	// CreateTemp makes the file 0600.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// fingerprint is credentialFingerprint(): SHA-256 of the JSON array [token, certificate, key].
func fingerprint(c credential) (string, error) {
	text, err := jsonText([]string{c.Token, c.ClientCertificateData, c.ClientKeyData})
	if err != nil {
		return "", err
	}
	return sha256Hex(text), nil
}

// execCredential is execCredentialJson() of exec-info.ts, byte for byte.
func execCredential(apiVersion string, c credential, expires string) ([]byte, error) {
	type status struct {
		Token                 string `json:"token,omitempty"`
		ClientCertificateData string `json:"clientCertificateData,omitempty"`
		ClientKeyData         string `json:"clientKeyData,omitempty"`
		ExpirationTimestamp   string `json:"expirationTimestamp"`
	}
	s := status{Token: c.Token, ExpirationTimestamp: expires}
	if c.ClientCertificateData != "" && c.ClientKeyData != "" {
		s.ClientCertificateData, s.ClientKeyData = c.ClientCertificateData, c.ClientKeyData
	}
	text, err := jsonText(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Status     status `json:"status"`
	}{apiVersion, "ExecCredential", s})
	if err != nil {
		return nil, err
	}
	return append(text, '\n'), nil
}

// jsonText is JSON.stringify's text for these values: no HTML escaping, no trailing newline.
func jsonText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
