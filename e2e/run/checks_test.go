// SPDX-License-Identifier: Apache-2.0

package run

import (
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

// The checks are kept apart from the table (e2e/variables), by name: each
// names a variable of the table, every switch has one, and every variable
// the table checked when the checks were its rows' still is, so that the
// move left nothing unchecked.
func TestEveryCheckNamesAVariable(t *testing.T) {
	for name := range checks {
		if _, ok := variables.Lookup(name); !ok {
			t.Errorf("checks.go checks %s, which the table (e2e/variables) does not have", name)
		}
	}
	for _, v := range variables.Variables {
		if v.Switch && checks[v.Name] == nil {
			t.Errorf("%s is a switch without its check", v.Name)
		}
	}
	checked := []string{"K8S_VERSIONS", "PROFILE", "FEATURES", "DRIVER", "DRIVER_NAMESPACE", "LABELS", "FOCUS", "SKIP",
		"KEEP_CLUSTER", "CLUSTER_NAME", "NODE_IMAGE", "UPGRADE", "UPGRADE_NODE_IMAGE", "KUBECONTEXT", "PROCS", "TIMEOUT",
		"GINKGO_ARGS", "BENCH_REPEAT"}
	for _, name := range checked {
		if checks[name] == nil {
			t.Errorf("%s is no longer checked (checks.go)", name)
		}
	}
}

// A cluster name is refused where kind's control-plane node name would not
// fit a hostname (63 characters): 49 is the most, fewer where
// KEEP_CLUSTER=1 adds each release to the name; a cluster given with
// KUBECONFIG is no kind cluster.
func TestClusterNameFitsANodesHostname(t *testing.T) {
	name := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		set   []string
		given []string
		want  string // "" where the name passes
	}{
		{set: []string{"CLUSTER_NAME", name(49)}},
		{set: []string{"CLUSTER_NAME", name(50)}, want: `CLUSTER_NAME "` + name(50) + `" is too long: kind names the control-plane node ` + name(50) + `-control-plane, 64 characters, and a node's hostname takes at most 63: give at most 49 characters`},
		{set: []string{"CLUSTER_NAME", name(52), "K8S_VERSIONS", "1.35 1.36"}, want: "give at most 49 characters"},
		{set: []string{"CLUSTER_NAME", name(45), "K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1"}, want: "give at most 44 characters, and KEEP_CLUSTER=1 names each release's cluster as " + name(45) + "-1-35"},
		{set: []string{"CLUSTER_NAME", name(44), "K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1"}},
		{set: []string{"CLUSTER_NAME", name(60), "KUBECONFIG", "k"}, given: []string{"KUBECONFIG"}},
	} {
		err := checkClusterName(Resolve(env(c.set...), c.given, "/r"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: refused: %v", c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: %v; want one line containing %q", c.set, err, c.want)
		}
	}
}
