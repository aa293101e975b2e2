package nodeimage

import (
	"fmt"
	"strings"
)

// ShimPath is where runc-capshim lives inside the node.
const ShimPath = "/usr/local/bin/runc-capshim"

// ContainerdConfig adapts kind's base containerd config (v2 format) for these
// node images:
//   - every runc runtime goes through runc-capshim, so privileged pods (kube-proxy,
//     the DRA driver) start on hosts whose capability bounding set is incomplete;
//   - restrict_oom_score_adj is on: lowering an OOM score needs CAP_SYS_RESOURCE;
//   - CDI is stated on (containerd 2.x defaults to it; the DRA driver depends on it).
func ContainerdConfig(kindConfig string) (string, error) {
	lines := strings.Split(kindConfig, "\n")
	var out []string
	runtimes, oom, cri := 0, false, false
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "restrict_oom_score_adj") {
			out = append(out, strings.Replace(line, "false", "true", 1))
			oom = true
			continue
		}
		out = append(out, line)
		switch {
		case strings.HasPrefix(trimmed, `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.`) && strings.HasSuffix(trimmed, `.options]`):
			out = append(out, fmt.Sprintf("    BinaryName = %q", ShimPath))
			runtimes++
		case trimmed == `[plugins."io.containerd.grpc.v1.cri"]`:
			out = append(out, "  enable_cdi = true", `  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]`)
			cri = true
		}
	}
	if runtimes == 0 || !oom || !cri {
		return "", fmt.Errorf("kind's containerd config changed shape (runtimes options: %d, restrict_oom_score_adj: %t, cri section: %t)", runtimes, oom, cri)
	}
	return strings.Join(out, "\n"), nil
}
