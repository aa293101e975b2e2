package kindcluster

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// A registry on this machine's loopback ("localhost:5001", where `make
// registry-up` serves) is not the nodes' loopback: inside a node container
// localhost is the node. So the nodes' containerd looks registry hosts up in
// /etc/containerd/certs.d (its config_path, which kind's
// containerdConfigPatches set before containerd first starts), and for each
// local registry a hosts.toml sends pulls of that name to the kind network's
// gateway, this machine, on the same port. Image references stay as the
// user pushed them.

// registryConfigPath is the containerd patch that turns the hosts
// directory on (the CRI plugin's name in kind's version 2 config).
const registryConfigPath = `[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`

// LocalRegistryHost is the registry part of an image reference when it
// names a registry on this machine's loopback ("localhost:5001",
// "127.0.0.1:5001"), and "" for any other.
func LocalRegistryHost(ref string) string {
	host, _, ok := strings.Cut(ref, "/")
	if !ok || !strings.Contains(host, ":") {
		return ""
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		return ""
	}
	if h == "localhost" {
		return host
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return host
	}
	return ""
}

// hostsTOML is containerd's hosts.toml sending pulls of host to the same
// port on gateway, over plain HTTP (a local registry serves no TLS).
func hostsTOML(host, gateway string) (string, error) {
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		return "", err
	}
	endpoint := "http://" + net.JoinHostPort(gateway, port)
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", endpoint, endpoint), nil
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

// pointAtLocalRegistries writes a hosts.toml for each local registry host
// into every node.
func (c *Cluster) pointAtLocalRegistries(hosts []string) error {
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
		toml, err := hostsTOML(host, gateway)
		if err != nil {
			return err
		}
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
