// SPDX-License-Identifier: Apache-2.0

package run

import (
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
