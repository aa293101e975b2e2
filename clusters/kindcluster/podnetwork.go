// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The suite's pod network: Debian's (or kindest/node's) ptp and host-local CNI
// plugins with each node's podCIDR, and a route per other node's podCIDR via
// that node's address on the kind network. It needs no image (kindnetd cannot
// be built from the module proxy) and works the same on published and
// offline-built node images.

// PodNetworkConfig is the CNI config list for a node whose pods live in podCIDR.
func PodNetworkConfig(podCIDR string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "e2e-podnet",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, podCIDR)
}

// Route is one `ip route replace` a node needs.
type Route struct{ CIDR, Via string }

// RoutesFor lists the routes node `self` needs to reach every other node's pods.
func RoutesFor(self string, cidrs, addrs map[string]string) []Route {
	var out []Route
	for name, cidr := range cidrs {
		if name != self {
			out = append(out, Route{CIDR: cidr, Via: addrs[name]})
		}
	}
	return out
}

func installPodNetwork(ctx context.Context, c *Cluster) error {
	nodeContainers, err := c.Nodes()
	if err != nil {
		return err
	}
	// kube-controller-manager assigns podCIDRs shortly after each node registers.
	cidrs := map[string]string{}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, n := range list.Items {
			if n.Spec.PodCIDR != "" {
				cidrs[n.Name] = n.Spec.PodCIDR
			}
		}
		return len(cidrs) == len(nodeContainers), nil
	})
	if err != nil {
		return fmt.Errorf("nodes without podCIDR after 2m (have %v): %w", cidrs, err)
	}
	addrs := map[string]string{}
	for _, n := range nodeContainers {
		v4, _, err := n.IP()
		if err != nil {
			return err
		}
		addrs[n.String()] = v4
	}
	for _, n := range nodeContainers {
		name := n.String()
		conf := PodNetworkConfig(cidrs[name])
		if err := n.Command("sh", "-c", "mkdir -p /etc/cni/net.d && cat > /etc/cni/net.d/10-e2e-podnet.conflist").
			SetStdin(strings.NewReader(conf)).Run(); err != nil {
			return fmt.Errorf("writing CNI config on %s: %w", name, err)
		}
		for _, r := range RoutesFor(name, cidrs, addrs) {
			if err := n.Command("ip", "route", "replace", r.CIDR, "via", r.Via).Run(); err != nil {
				return fmt.Errorf("route %s via %s on %s: %w", r.CIDR, r.Via, name, err)
			}
		}
	}
	return nil
}

func waitNodesReady(ctx context.Context, c *Cluster) error {
	var notReady []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		notReady = nil
		for _, n := range list.Items {
			if !nodeReady(n) {
				notReady = append(notReady, n.Name)
			}
		}
		return len(list.Items) > 0 && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("nodes not Ready after 3m: %v: %w", notReady, err)
	}
	return nil
}

func nodeReady(n corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitSystemPods waits until every kube-system pod runs and is Ready (CoreDNS,
// kube-proxy, the control plane).
func waitSystemPods(ctx context.Context, c *Cluster) error {
	var pending []string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending = nil
		for _, p := range list.Items {
			if !podReady(p) {
				pending = append(pending, fmt.Sprintf("%s (%s)", p.Name, p.Status.Phase))
			}
		}
		return len(list.Items) > 0 && len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("kube-system pods not Ready after 4m: %v: %w", pending, err)
	}
	return nil
}

func podReady(p corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
