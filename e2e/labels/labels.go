// SPDX-License-Identifier: Apache-2.0

// Package labels holds the suite's spec groups (Ginkgo labels), the labels
// upstream's e2e framework gives a spec that needs a feature gate, and the
// check of a label filter against every label a spec carries, for the
// suite and for the runner's preflight (e2e/run).
package labels

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// Known are the spec groups; README.md lists what each covers. Serial and
// Disruptive are the e2e framework's own labels (framework.WithSerial,
// framework.WithDisruptive), spelt as it spells them; Ginkgo matches labels
// without regard to case, and so does Check.
var Known = []string{"allocation", "allocators", "authz", "consumable", "daemonset", "Disruptive", "driver", "extended", "lock", "metrics", "partitionable", "prioritized", "Serial", "skew", "smoke", "taints", "toggle", "upgrade"}

// FrameworkLabels are the labels the e2e framework's decorators give a spec.
var FrameworkLabels = map[string]string{"WithSerial": "Serial", "WithDisruptive": "Disruptive"}

// The parts of a filter that name labels, as Ginkgo's parser reads them
// (types/label_filter.go): a regular expression between slashes; a label
// set's operation, "key: operation argument", where the space after the
// colon tells the key from a label that holds a colon
// ("FeatureGate:DRAAdminAccess"), and the argument is a {list} or runs to
// the next operator; any other word is a label.
var (
	regexPart = regexp.MustCompile(`/[^/]*/`)
	setPart   = regexp.MustCompile(`([^&|!,()/:\s][^&|!,()/:]*?)\s*:\s+([A-Za-z]+)\s*(\{[^}]*\}|[^&|!,()/]*)`)
	word      = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*(?::[A-Za-z0-9_-]+)?`)
)

// Check refuses a filter Ginkgo cannot parse, or one that names a label no
// spec carries: such a filter silently selects nothing, which must not read
// as a green run. The labels are the spec groups and the framework's
// (Known), each requirement's ID (KEP5018-AUTHZ-01 selects that
// requirement's specs) and upstream's feature-gate labels on any release
// (AdminAccessGate). A regular expression must match one of them, and a
// label set's operation that asks for values (containsAny, containsAll,
// consistsOf) must name values a spec can carry under that key, one for
// containsAny, all for the others: "FeatureGate: containsAny
// DRAAdminAccess", as upstream's jobs write it, is "FeatureGate:DRAAdminAccess".
func Check(filter string) error {
	if _, err := types.ParseLabelFilter(filter); err != nil {
		return fmt.Errorf("label filter %q does not parse: %v", filter, firstLine(err.Error()))
	}
	all := allLabels()
	known := map[string]bool{}
	for _, l := range all {
		known[strings.ToLower(l)] = true
	}
	var unknown []string
	rest := regexPart.ReplaceAllStringFunc(filter, func(re string) string {
		r, err := regexp.Compile(re[1 : len(re)-1])
		if err != nil || !slices.ContainsFunc(all, r.MatchString) {
			unknown = append(unknown, re)
		}
		return " "
	})
	rest = setPart.ReplaceAllStringFunc(rest, func(set string) string {
		m := setPart.FindStringSubmatch(set)
		key := strings.TrimSpace(m[1])
		var missing []string
		values := strings.Split(strings.Trim(strings.TrimSpace(m[3]), "{}"), ",")
		for _, v := range values {
			if l := key + ":" + strings.TrimSpace(v); !known[strings.ToLower(l)] {
				missing = append(missing, l)
			}
		}
		switch strings.ToLower(m[2]) {
		case "containsany":
			if len(missing) == len(values) {
				unknown = append(unknown, missing...)
			}
		case "containsall", "consistsof":
			unknown = append(unknown, missing...)
		}
		return " "
	})
	for _, w := range word.FindAllString(rest, -1) {
		if !known[strings.ToLower(w)] {
			unknown = append(unknown, w)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sorted := append([]string(nil), Known...)
	sort.Slice(sorted, func(i, j int) bool { return strings.ToLower(sorted[i]) < strings.ToLower(sorted[j]) })
	upstream := upstreamLabels()
	sort.Strings(upstream)
	first, last := requirements.All[0], requirements.All[len(requirements.All)-1]
	return fmt.Errorf("unknown label %s in filter %q: labels are %s; a KEP requirement's ID, %s to %s (docs/kep-5018.md); upstream's feature-gate labels %s",
		strings.Join(unknown, ", "), filter, strings.Join(sorted, ", "), first.ID, last.ID, strings.Join(upstream, ", "))
}

// allLabels are the labels a spec may carry on some release.
func allLabels() []string {
	out := append([]string(nil), Known...)
	for _, r := range requirements.All {
		out = append(out, r.ID)
	}
	return append(out, upstreamLabels()...)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
