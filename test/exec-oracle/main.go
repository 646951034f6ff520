// exec-oracle answers, one JSON line per JSON line on stdin, what Go and client-go 1.35 decide about a command: the
// oracle of test/unit/invocation-properties.test.ts, which asks fleet the same questions on the same directory tree.
//
//	{"op":"lookpath","name":N,"path":P|null,"godebug":G|null}
//	  -> exec.LookPath(N) and exec.Command(N).Path/.Err with PATH=P (unset when null) and GODEBUG=G, run in the
//	     current directory; "abs" is the Path made absolute against it without cleaning, "ino" the file it names.
//	{"op":"allowlist","name":N,"path":P|null,"godebug":G|null,"allowlist":[...],"id":I}
//	  -> whether client-go's exec authenticator (k8s.io/client-go v0.35 plugin/pkg/client/auth/exec) lets the plugin
//	     run under credentialPluginPolicy Allowlist: an Authenticator is built with the policy (unique per case, so its
//	     cache of resolved entries is fresh) and asked for a credential; the allowlist check's own errors are a refusal,
//	     anything after it (the plugin started, or failed to start) means the check let it through.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	clientauthentication "k8s.io/client-go/pkg/apis/clientauthentication"
	execauth "k8s.io/client-go/plugin/pkg/client/auth/exec"
	"k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
)

type request struct {
	Op        string   `json:"op"`
	Name      string   `json:"name"`
	Path      *string  `json:"path"`
	Godebug   *string  `json:"godebug"`
	Allowlist []string `json:"allowlist"`
	ID        int      `json:"id"`
}

type looked struct {
	LookPath string `json:"lookPath"`
	LookErr  string `json:"lookErr"`
	CmdPath  string `json:"cmdPath"`
	CmdErr   string `json:"cmdErr"`
	Abs      string `json:"abs"`
	Ino      uint64 `json:"ino"`
}

type allowed struct {
	Allowed bool   `json:"allowed"`
	Err     string `json:"err"`
}

// errKind names an exec error the way the test compares them: "" (none), "dot" (ErrDot), "notfound" (ErrNotFound),
// or the underlying error's text.
func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, exec.ErrDot):
		return "dot"
	case errors.Is(err, exec.ErrNotFound):
		return "notfound"
	}
	var e *exec.Error
	if errors.As(err, &e) {
		return e.Err.Error()
	}
	return err.Error()
}

func setenv(name string, value *string) {
	if value == nil {
		os.Unsetenv(name)
	} else {
		os.Setenv(name, *value)
	}
}

func main() {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			panic(err)
		}
		setenv("PATH", r.Path)
		// Go reads GODEBUG again when it is set (os.Setenv tells the runtime), so execerrdot follows each case.
		setenv("GODEBUG", r.Godebug)
		switch r.Op {
		case "lookpath":
			lp, lerr := exec.LookPath(r.Name)
			cmd := exec.Command(r.Name)
			res := looked{LookPath: lp, LookErr: errKind(lerr), CmdPath: cmd.Path, CmdErr: errKind(cmd.Err)}
			res.Abs = cmd.Path
			if !filepath.IsAbs(res.Abs) {
				res.Abs = strings.TrimRight(wd, "/") + "/" + res.Abs
			}
			if st, err := os.Stat(cmd.Path); err == nil {
				res.Ino = st.Sys().(*syscall.Stat_t).Ino
			}
			enc.Encode(res)
		case "allowlist":
			entries := []api.AllowlistEntry{}
			for _, e := range r.Allowlist {
				entries = append(entries, api.AllowlistEntry{Name: e})
			}
			conf := &api.ExecConfig{
				APIVersion:      "client.authentication.k8s.io/v1",
				Command:         r.Name,
				Args:            []string{"case", itoa(r.ID)},
				InteractiveMode: api.NeverExecInteractiveMode,
				PluginPolicy:    api.PluginPolicy{PolicyType: api.PluginPolicyAllowlist, Allowlist: entries},
			}
			a, err := execauth.GetAuthenticator(conf, &clientauthentication.Cluster{Server: "https://oracle.invalid"})
			if err != nil {
				enc.Encode(allowed{Allowed: false, Err: "config: " + err.Error()})
				break
			}
			c := &transport.Config{}
			if err := a.UpdateTransportConfig(c); err != nil {
				panic(err)
			}
			_, err = c.TLS.GetCertHolder.GetCert()
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			refused := strings.Contains(msg, "credential plugin allowlist") || strings.Contains(msg, "not allowed: policy")
			enc.Encode(allowed{Allowed: !refused, Err: msg})
		default:
			panic("unknown op " + r.Op)
		}
		out.Flush()
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
