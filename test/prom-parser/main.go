// Command promparse reads the Prometheus text exposition format on stdin with the parser Prometheus itself uses
// (github.com/prometheus/common/expfmt TextParser, legacy name validation as node_exporter's textfile collector and the
// Pushgateway apply) and prints the parsed metric families as JSON on stdout. A parse error is one line on stderr and
// exit 1. fleet's tests run it on `-o prometheus` output so the format is checked by the real parser, not by hand.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

type sample struct {
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
}

type family struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Type    string   `json:"type"`
	Samples []sample `json:"samples"`
}

func main() {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse error:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	out := []family{}
	for _, name := range names {
		mf := families[name]
		f := family{Name: name, Help: mf.GetHelp(), Type: mf.GetType().String(), Samples: []sample{}}
		seen := map[string]bool{}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			key := ""
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
				key += lp.GetName() + "\x00" + lp.GetValue() + "\x00"
			}
			// Prometheus rejects a scrape with two samples of one series; the text parser alone does not check it.
			if seen[key] {
				fmt.Fprintf(os.Stderr, "parse error: duplicate series in %s: %v\n", name, labels)
				os.Exit(1)
			}
			seen[key] = true
			var v float64
			switch {
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			}
			f.Samples = append(f.Samples, sample{Labels: labels, Value: v})
		}
		out = append(out, f)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
