// credential-oracle answers, for many cases in one process, what fleet-credential answers: each stdin line is one
// call, {"args": [...], "env": {...}, "caller": PID, "now": MS}, run through the very package the binary uses
// (cmd/fleet-credential/cache.FromCache) on the cache files the case names; each stdout line is
// {"hit": BOOL, "stdout": BASE64}. test/unit/credential-reader.test.ts feeds it a generated corpus, and the same corpus
// to the fast path fleet runs (src/export/credential-fast.ts), and requires the same answers and the same files left.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/fleet-cli/fleet/cmd/fleet-credential/cache"
)

type call struct {
	Args   []string          `json:"args"`
	Env    map[string]string `json:"env"`
	Caller int               `json:"caller"`
	Now    int64             `json:"now"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var c call
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintf(os.Stderr, "credential-oracle: %v\n", err)
			os.Exit(2)
		}
		text, hit := cache.FromCache(c.Args, func(name string) string { return c.Env[name] }, c.Caller, time.UnixMilli(c.Now))
		line, _ := json.Marshal(map[string]any{"hit": hit, "stdout": base64.StdEncoding.EncodeToString(text)})
		out.Write(append(line, '\n'))
		out.Flush()
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "credential-oracle: %v\n", err)
		os.Exit(2)
	}
}
