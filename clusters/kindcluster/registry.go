// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"fmt"
	"net"
	"os/exec"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
)

// A registry the suite may reach over plain HTTP (registryhost.PlainHTTP:
// loopback or private) is one the nodes must reach over plain HTTP too, or
// preflight would accept a reference they cannot pull. Their containerd
// looks registry hosts up in /etc/containerd/certs.d (its config_path,
// which kind's containerdConfigPatches set before containerd first starts),
// and for each such registry a hosts.toml says how: a registry on this
// machine's loopback ("localhost:5001", where `make registry-up` serves) is
// not the nodes' loopback (inside a node container localhost is the node),
// so its pulls go to the kind network's gateway, this machine, on the same
// port; a private address is reached as it is. Image references stay as
// the user pushed them.

// registryConfigPath is the containerd patch that turns the hosts
// directory on (the CRI plugin's name in kind's version 2 config).
const registryConfigPath = `[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`

// PlainHTTPRegistryHost is the registry part of an image reference when the
// nodes must reach it over plain HTTP, and "" for any other.
func PlainHTTPRegistryHost(ref string) string {
	if host := registryhost.Of(ref); registryhost.PlainHTTP(host) {
		return host
	}
	return ""
}

// hostsTOML is containerd's hosts.toml for a plain-HTTP registry at host:
// a loopback one at the same port of gateway, any other where it is.
func hostsTOML(host, gateway string) string {
	endpoint := "http://" + host
	if registryhost.Loopback(host) {
		endpoint = "http://" + gateway
		if _, port, err := net.SplitHostPort(host); err == nil {
			endpoint = "http://" + net.JoinHostPort(gateway, port)
		}
	}
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", endpoint, endpoint)
}

// kindGateway is the IPv4 gateway of kind's Docker network: this machine,
// as the nodes reach it.
func kindGateway() (string, error) {
	out, err := exec.Command("docker", "network", "inspect", "kind", "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}").Output()
	if err != nil {
		return "", fmt.Errorf("reading the kind network's gateway: %w", err)
	}
	for _, g := range strings.Fields(string(out)) {
		if ip := net.ParseIP(g); ip != nil && ip.To4() != nil {
			return g, nil
		}
	}
	return "", fmt.Errorf("the kind network has no IPv4 gateway (%q)", strings.TrimSpace(string(out)))
}

// pointAtPlainHTTPRegistries writes a hosts.toml for each plain-HTTP registry
// host into every node.
func (c *Cluster) pointAtPlainHTTPRegistries(hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	gateway, err := kindGateway()
	if err != nil {
		return err
	}
	all, err := c.Nodes()
	if err != nil {
		return err
	}
	for _, host := range hosts {
		toml := hostsTOML(host, gateway)
		for _, n := range all {
			path := "/etc/containerd/certs.d/" + host + "/hosts.toml"
			// containerd reads the folder at each pull: no restart.
			if err := n.Command("sh", "-c", `mkdir -p "$(dirname "$0")" && cat > "$0"`, path).SetStdin(strings.NewReader(toml)).Run(); err != nil {
				return fmt.Errorf("pointing %s's containerd at the registry %s: %w", n, host, err)
			}
		}
	}
	return nil
}
