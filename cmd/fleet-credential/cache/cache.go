// Package cache is fleet-credential's reading of fleet's credential cache: the one reader rule of
// src/export/credential-cache.ts (the definition) and src/export/exec-info.ts, in Go. The binary uses it, and so does
// the batch oracle of the differential test (test/credential-oracle), which feeds it and the fast path fleet runs
// (src/export/credential-fast.ts) the same generated entries and requires the same answer byte for byte.
//
// The rule: an entry is opened without following a link and without blocking (O_NOFOLLOW|O_NONBLOCK), must then be a
// regular file of at most MaxEntryBytes, valid UTF-8, and exactly the canonical text fleet writes for its value (so
// unknown, miscased or repeated keys, other spellings of a number or a string, whitespace and trailing bytes are all
// "no entry": encoding/json's case-insensitive keys, duplicate keys and trailing data cannot make it read what fleet
// would not). Every handover is a file of its own made with O_CREAT|O_EXCL, which records it and tells whether this
// parent had the credential before in one atomic step, so concurrent readers lose no handover.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// EntryVersion is ENTRY_VERSION of credential-cache.ts.
const EntryVersion = 2

// MaxEntryBytes is ENTRY_MAX_BYTES of credential-cache.ts: the same bound on both sides.
const MaxEntryBytes = 1 << 20

var credentialFlags = []string{"cluster", "provider", "fleet-config", "kubeconfig", "context"}
var execAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// Credential is CachedCredential: nil fields are absent.
type Credential struct {
	Token                 *string `json:"token"`
	ClientCertificateData *string `json:"clientCertificateData"`
	ClientKeyData         *string `json:"clientKeyData"`
}

// Entry is an entry of credential-cache.ts.
type Entry struct {
	V          int         `json:"v"`
	Cluster    string      `json:"cluster"`
	Expires    string      `json:"expires"`
	ID         string      `json:"id"`
	Credential *Credential `json:"credential"`
	Suspect    *string     `json:"suspect"`
}

// Request is what readExecRequest() of exec-info.ts returns.
type Request struct {
	APIVersion    string
	Server        string
	CAHash        *string
	Insecure      bool
	TLSServerName *string
}

var (
	hex32   = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex64   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	seconds = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
)

// FromCache returns the ExecCredential to print for `kubeconfig credential ARGS` when the cache in the environment's
// cache directory holds one for caller, as answerFromCache() of credential-fast.ts does; false where fleet must run.
func FromCache(args []string, getenv func(string) string, caller int, now time.Time) ([]byte, bool) {
	if len(args) < 2 || args[0] != "kubeconfig" || args[1] != "credential" {
		return nil, false
	}
	flags, ok := ExportedFlags(args[2:])
	if !ok {
		return nil, false
	}
	req, ok := ReadExecRequest(getenv("KUBERNETES_EXEC_INFO"))
	if !ok {
		return nil, false
	}
	dir, ok := Dir(getenv)
	if !ok || !ours(dir) {
		return nil, false
	}
	path := filepath.Join(dir, Key(flags, req)+".json")
	e, ok := ReadEntryFile(path)
	if !ok || e.Credential == nil || e.Cluster != *flags["cluster"] {
		return nil, false
	}
	expires, err := time.Parse(time.RFC3339, e.Expires)
	if err != nil || !expires.After(now) {
		return nil, false
	}
	first, err := record(path, e.ID, caller)
	if err != nil {
		return nil, false
	}
	if !first {
		// Asked twice by one kubectl before the end: the first was probably refused. Dropped here as fleet drops it;
		// fleet then fetches a fresh one and checks it against this fingerprint.
		fp := fingerprint(*e.Credential)
		_ = writeEntry(path, Entry{V: e.V, Cluster: e.Cluster, Expires: e.Expires, ID: e.ID, Suspect: &fp})
		return nil, false
	}
	return ExecCredential(req.APIVersion, *e.Credential, e.Expires), true
}

// ExportedFlags reads `--name value` pairs of the exported form only, like exportedFlags() in credential-fast.ts.
// A value that is not valid UTF-8 (Node would read it otherwise) goes to fleet.
func ExportedFlags(args []string) (map[string]*string, bool) {
	flags := map[string]*string{}
	for i := 0; i < len(args); i += 2 {
		name, found := strings.CutPrefix(args[i], "--")
		if !found || !slices.Contains(credentialFlags, name) || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") || !utf8.ValidString(args[i+1]) {
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

// ReadExecRequest reads KUBERNETES_EXEC_INFO as exec-info.ts does, keys matched exactly (decoded to maps, not to a
// struct, whose keys encoding/json would match in any case); whatever it refuses goes to fleet, which says why.
func ReadExecRequest(raw string) (Request, bool) {
	if strings.TrimSpace(raw) == "" {
		return Request{}, false
	}
	var value any
	if json.Unmarshal([]byte(raw), &value) != nil {
		return Request{}, false
	}
	info, ok := value.(map[string]any)
	if !ok || info["kind"] != "ExecCredential" {
		return Request{}, false
	}
	version, ok := info["apiVersion"].(string)
	if !ok || !slices.Contains(execAPIVersions, version) {
		return Request{}, false
	}
	spec, _ := info["spec"].(map[string]any)
	cluster, ok := spec["cluster"].(map[string]any)
	if !ok {
		return Request{}, false
	}
	server, ok := cluster["server"].(string)
	if !ok || server == "" {
		return Request{}, false
	}
	req := Request{APIVersion: version, Server: server}
	switch ca := cluster["certificate-authority-data"].(type) {
	case nil:
	case string:
		if ca != "" {
			hash := sha256Hex([]byte(ca))
			req.CAHash = &hash
		}
	default:
		return Request{}, false
	}
	switch insecure := cluster["insecure-skip-tls-verify"].(type) {
	case nil:
	case bool:
		req.Insecure = insecure
	default:
		return Request{}, false
	}
	switch name := cluster["tls-server-name"].(type) {
	case nil:
	case string:
		if name != "" {
			req.TLSServerName = &name
		}
	default:
		return Request{}, false
	}
	return req, true
}

// Key is the entry's file name without .json: SHA-256 of credentialIdentity()'s JSON text.
func Key(flags map[string]*string, req Request) string {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	field := func(name string, value *string) {
		if value == nil {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeString(&b, name)
		b.WriteByte(':')
		writeString(&b, *value)
	}
	field("cluster", flags["cluster"])
	field("provider", flags["provider"])
	field("fleetConfig", flags["fleet-config"])
	field("kubeconfig", flags["kubeconfig"])
	field("context", flags["context"])
	field("server", &req.Server)
	field("ca", req.CAHash)
	if req.Insecure {
		b.WriteString(`,"insecure":true`)
	}
	field("tlsServerName", req.TLSServerName)
	b.WriteByte('}')
	return sha256Hex(b.Bytes())
}

// Dir is credentialCacheDir(): $XDG_CACHE_HOME/fleet/credentials when absolute, else ~/.cache/fleet/credentials.
func Dir(getenv func(string) string) (string, bool) {
	if xdg := getenv("XDG_CACHE_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "fleet", "credentials"), true
	}
	home := getenv("HOME")
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

// ReadEntryFile reads an entry by the rule: never through a link, never waiting on a FIFO or a device, never more
// than MaxEntryBytes.
func ReadEntryFile(path string) (Entry, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Entry{}, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxEntryBytes {
		return Entry{}, false
	}
	text, err := io.ReadAll(io.LimitReader(f, MaxEntryBytes+1))
	if err != nil || len(text) > MaxEntryBytes {
		return Entry{}, false
	}
	return DecodeEntry(text)
}

// DecodeEntry is decodeEntry() of credential-cache.ts: the entry, only when text is its canonical spelling.
func DecodeEntry(text []byte) (Entry, bool) {
	if !utf8.Valid(text) {
		return Entry{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var e Entry
	if dec.Decode(&e) != nil {
		return Entry{}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Entry{}, false
	}
	if e.V != EntryVersion || !validExpires(e.Expires) || !hex32.MatchString(e.ID) {
		return Entry{}, false
	}
	if e.Suspect != nil && !hex64.MatchString(*e.Suspect) {
		return Entry{}, false
	}
	if e.Credential != nil && !validCredential(*e.Credential) {
		return Entry{}, false
	}
	if !bytes.Equal(Canonical(e), text) {
		return Entry{}, false
	}
	return e, true
}

func validCredential(c Credential) bool {
	n := 0
	for _, v := range []*string{c.Token, c.ClientCertificateData, c.ClientKeyData} {
		if v != nil {
			if *v == "" {
				return false
			}
			n++
		}
	}
	return n > 0
}

// validExpires: RFC 3339 in whole seconds, UTC, naming a real instant (no Feb 30, no 24:00, no leap second).
func validExpires(s string) bool {
	if !seconds.MatchString(s) {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	return err == nil && t.UTC().Format("2006-01-02T15:04:05Z") == s
}

// Canonical is canonicalEntry(): JSON.stringify's text of the entry, keys in fleet's order.
func Canonical(e Entry) []byte {
	var b bytes.Buffer
	b.WriteString(`{"v":`)
	b.WriteString(strconv.Itoa(e.V))
	b.WriteString(`,"cluster":`)
	writeString(&b, e.Cluster)
	b.WriteString(`,"expires":`)
	writeString(&b, e.Expires)
	b.WriteString(`,"id":`)
	writeString(&b, e.ID)
	if e.Credential != nil {
		b.WriteString(`,"credential":{`)
		n := 0
		for _, f := range []struct {
			name  string
			value *string
		}{{"token", e.Credential.Token}, {"clientCertificateData", e.Credential.ClientCertificateData}, {"clientKeyData", e.Credential.ClientKeyData}} {
			if f.value == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			writeString(&b, f.name)
			b.WriteByte(':')
			writeString(&b, *f.value)
		}
		b.WriteByte('}')
	}
	if e.Suspect != nil {
		b.WriteString(`,"suspect":`)
		writeString(&b, *e.Suspect)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ExecCredential is execCredentialJson() of exec-info.ts, byte for byte.
func ExecCredential(apiVersion string, c Credential, expires string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":`)
	writeString(&b, apiVersion)
	b.WriteString(`,"kind":"ExecCredential","status":{`)
	if c.Token != nil && *c.Token != "" {
		b.WriteString(`"token":`)
		writeString(&b, *c.Token)
		b.WriteByte(',')
	}
	if c.ClientCertificateData != nil && *c.ClientCertificateData != "" && c.ClientKeyData != nil && *c.ClientKeyData != "" {
		b.WriteString(`"clientCertificateData":`)
		writeString(&b, *c.ClientCertificateData)
		b.WriteString(`,"clientKeyData":`)
		writeString(&b, *c.ClientKeyData)
		b.WriteByte(',')
	}
	b.WriteString(`"expirationTimestamp":`)
	writeString(&b, expires)
	b.WriteString("}}\n")
	return b.Bytes()
}

// fingerprint is credentialFingerprint(): SHA-256 of the JSON array [token, certificate, key].
func fingerprint(c Credential) string {
	or := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	var b bytes.Buffer
	b.WriteByte('[')
	writeString(&b, or(c.Token))
	b.WriteByte(',')
	writeString(&b, or(c.ClientCertificateData))
	b.WriteByte(',')
	writeString(&b, or(c.ClientKeyData))
	b.WriteByte(']')
	return sha256Hex(b.Bytes())
}

// writeString writes s (valid UTF-8) as JSON.stringify does: `"` and `\` escaped, \b \t \n \f \r, other control
// characters as \u00xx in lower case, everything else (U+2028 and U+2029 included, unlike encoding/json) as it is.
func writeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// record makes the handover file of entry id for caller (O_CREAT|O_EXCL): true when it is new, false when this caller
// had the entry before.
func record(path, id string, caller int) (bool, error) {
	name := strings.TrimSuffix(path, ".json") + ".handed-" + id + "-" + strconv.Itoa(caller)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// writeEntry replaces the entry atomically with a 0600 file, as fleet's writeFileAtomic does. Ctrl-C (or a SIGTERM to
// kubectl's process group) during those few syscalls is held until the file is in place or removed, so no temporary
// file is left in the cache, and then ends the process; the default handling is back before fleet may be exec'd.
func writeEntry(path string, e Entry) error {
	text := Canonical(e)
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

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
