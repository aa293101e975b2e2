// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// ShimPath is where runc-capshim lives inside the node.
const ShimPath = "/usr/local/bin/runc-capshim"

// criPlugin is the CRI plugin's key under [plugins] in a v2 config.
const criPlugin = "io.containerd.grpc.v1.cri"

// cdiSpecDirs are where the CRI plugin reads CDI specs: the DRA driver writes
// its specs to /var/run/cdi.
var cdiSpecDirs = []string{"/etc/cdi", "/var/run/cdi"}

// ContainerdConfig adapts kind's base containerd config (v2 format) for these
// node images:
//   - every runc runtime goes through runc-capshim, so privileged pods (kube-proxy,
//     the DRA driver) start on hosts whose capability bounding set is incomplete;
//   - restrict_oom_score_adj is on: lowering an OOM score needs CAP_SYS_RESOURCE;
//   - CDI is stated on (containerd 2.x defaults to it; the DRA driver depends on it).
//
// The config is decoded, edited as TOML values and encoded again, so the
// result is the same document whatever kind's layout, comments or key order;
// what the edit needs must be there, or kind's config changed shape and this
// says so instead of writing a config that silently lacks the shim.
func ContainerdConfig(kindConfig string) (string, error) {
	var cfg map[string]any
	if _, err := toml.Decode(kindConfig, &cfg); err != nil {
		return "", fmt.Errorf("kind's containerd config: %w", err)
	}
	cri := table(cfg, "plugins", criPlugin)
	runtimes := 0
	for _, v := range table(cri, "containerd", "runtimes") {
		handler, _ := v.(map[string]any)
		if options := table(handler, "options"); options != nil {
			options["BinaryName"] = ShimPath
			runtimes++
		}
	}
	_, oom := cri["restrict_oom_score_adj"]
	if runtimes == 0 || !oom || cri == nil {
		return "", fmt.Errorf("kind's containerd config changed shape (runtimes options: %d, restrict_oom_score_adj: %t, cri section: %t)", runtimes, oom, cri != nil)
	}
	cri["restrict_oom_score_adj"] = true
	cri["enable_cdi"] = true
	cri["cdi_spec_dirs"] = cdiSpecDirs
	var out bytes.Buffer
	if err := toml.NewEncoder(&out).Encode(cfg); err != nil {
		return "", fmt.Errorf("encoding the containerd config: %w", err)
	}
	return out.String(), nil
}

// table is the table at path under m, or nil where a step is missing or is
// not a table.
func table(m map[string]any, path ...string) map[string]any {
	for _, key := range path {
		next, ok := m[key].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
