// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Upstream's e2e framework (k8s.io/kubernetes/test/e2e/framework,
// ginkgowrapper.go) labels a spec that needs a feature gate with
// framework.WithFeatureGate, and upstream's jobs select specs by those
// labels: a spec of this suite that needs DRAAdminAccess carries the same
// ones, for the gate's maturity in the release under test, so that the
// same filters select it.

// Upstream is one label upstream's framework gives a spec, and whether it
// also writes it into the spec's name, in brackets ("[Beta]"), as it does
// for all but BetaOffByDefault.
type Upstream struct {
	Label  string
	InName bool
}

// FeatureGate is what framework.WithFeatureGate gives a spec that needs gate
// at a maturity (level "Alpha", "Beta", or "" for GA) and default:
// "FeatureGate:<gate>"; the level, where there is one; where the gate is
// off by default "Feature:OffByDefault", and for a beta gate also
// BetaOffByDefault, as a label only. The order is the framework's, which is
// the order of the bracketed tags in the name.
func FeatureGate(gate, level string, onByDefault bool) []Upstream {
	out := []Upstream{{"FeatureGate:" + gate, true}}
	if level != "" {
		out = append(out, Upstream{level, true})
	}
	if !onByDefault {
		out = append(out, Upstream{"Feature:OffByDefault", true})
		if level == "Beta" {
			out = append(out, Upstream{"BetaOffByDefault", false})
		}
	}
	return out
}

// AdminAccessGate is FeatureGate for DRAAdminAccess at its maturity in rel,
// as the release table gives it: what rel's own e2e framework, with rel's
// gate registry, writes.
func AdminAccessGate(rel release.Release) []Upstream {
	return FeatureGate(release.Gate, Level(rel.GateState), rel.GateDefault())
}

// Level is a maturity as upstream's framework spells it in a label:
// "Alpha", "Beta", "" for GA (locked or not).
func Level(s release.GateState) string {
	switch s {
	case release.Alpha:
		return "Alpha"
	case release.Beta:
		return "Beta"
	}
	return ""
}

// upstreamLabels are the labels AdminAccessGate gives on any release the
// table knows.
func upstreamLabels() []string {
	seen := map[string]bool{}
	var out []string
	for _, minor := range release.Minors() {
		rel, err := release.Get(minor)
		if err != nil {
			continue
		}
		for _, u := range AdminAccessGate(rel) {
			if !seen[strings.ToLower(u.Label)] {
				seen[strings.ToLower(u.Label)] = true
				out = append(out, u.Label)
			}
		}
	}
	return out
}
