// kubeconfig-oracle: client-go's own kubeconfig loader (clientcmd.Load, what kubectl 1.35 runs on every file of
// KUBECONFIG) as an oracle for fleet's text edits of a kubeconfig (test/unit/kubeconfig-edit-property.test.ts). It
// reads JSON lines {"text": "..."} on stdin and writes one JSON line per input: what client-go made of the text (the
// clusters' servers, the users' tokens, the contexts' cluster, user and namespace, current-context), or its error. One
// process answers a whole batch, so a property of 10,000 cases costs one start-up.
package main

import (
	"bufio"
	"encoding/json"
	"os"

	"k8s.io/client-go/tools/clientcmd"
)

type context struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace"`
}

type answer struct {
	Error    string             `json:"error,omitempty"`
	Clusters map[string]string  `json:"clusters,omitempty"`
	Users    map[string]string  `json:"users,omitempty"`
	Contexts map[string]context `json:"contexts,omitempty"`
	Current  string             `json:"current,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			_ = enc.Encode(answer{Error: "bad request: " + err.Error()})
			continue
		}
		config, err := clientcmd.Load([]byte(req.Text))
		if err != nil {
			_ = enc.Encode(answer{Error: err.Error()})
			continue
		}
		a := answer{Clusters: map[string]string{}, Users: map[string]string{}, Contexts: map[string]context{}, Current: config.CurrentContext}
		for name, c := range config.Clusters {
			a.Clusters[name] = c.Server
		}
		for name, u := range config.AuthInfos {
			a.Users[name] = u.Token
		}
		for name, c := range config.Contexts {
			a.Contexts[name] = context{Cluster: c.Cluster, User: c.AuthInfo, Namespace: c.Namespace}
		}
		_ = enc.Encode(a)
	}
	if err := in.Err(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}
