// server-oracle: how kubectl (client-go over Go's net/url and net/http) reads an API server URL, the oracle of the
// server comparison property test (test/unit/server-key-property.test.ts, src/kubeconfig/server.ts). Reads a JSON array
// of server strings on stdin and writes, for each, the key Go's reading gives: the scheme (url.Parse lower-cases it),
// the userinfo, the host as written (ASCII case folded: DNS and crypto/tls compare names case-insensitively), the port
// net/http dials (the scheme's default for none, as its canonicalAddr), the path without trailing slashes (client-go
// joins API paths with path.Join), the query and fragment; and whether net.ParseIP reads the host as an address (if
// not, net.Dial resolves it as a name). A string url.Parse refuses, or not http(s) with a host, has no key.
package main

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"strings"
)

type answer struct {
	Key string `json:"key,omitempty"`
	IP  bool   `json:"ip"`
	Err string `json:"err,omitempty"`
}

func main() {
	var in []string
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := make([]answer, len(in))
	for i, s := range in {
		u, err := url.Parse(s)
		if err != nil {
			out[i] = answer{Err: err.Error()}
			continue
		}
		if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			out[i] = answer{Err: "not an http(s) URL with a host"}
			continue
		}
		host := strings.ToLower(u.Hostname())
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		user := ""
		if u.User != nil {
			user = u.User.String() + "@"
		}
		key := u.Scheme + "://" + user + host + ":" + port + strings.TrimRight(u.EscapedPath(), "/")
		if u.RawQuery != "" || u.ForceQuery {
			key += "?" + u.RawQuery
		}
		if u.Fragment != "" {
			key += "#" + u.EscapedFragment()
		}
		out[i] = answer{Key: key, IP: net.ParseIP(u.Hostname()) != nil}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
