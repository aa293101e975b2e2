// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

// up's --registry and the pusher's REGISTRY are the same registry given two
// ways (hack/incluster-e2e.sh passes both): every form the pusher takes for
// a plain-HTTP registry, the cluster tool takes too, and the host the nodes
// are pointed at is the host of every reference the pusher writes there.
// A stand-in image name once made the cluster tool refuse them all.
func TestRegistryFlagTakesEveryPlainHTTPRegistryThePusherDoes(t *testing.T) {
	for _, c := range []struct{ registry, tag, host string }{
		{"localhost:5001", "kind-e2e/testdriver:abc", "localhost:5001"},
		{"localhost:5001/dra", "kind-e2e/testdriver:abc", "localhost:5001"},
		{"127.0.0.1:5001", "kind-e2e/testdriver:abc", "127.0.0.1:5001"},
		{"[::1]:5001/dra", "kind-e2e/testdriver:abc", "[::1]:5001"},
		{"10.0.0.5:5000", "kind-e2e/testdriver:abc", "10.0.0.5:5000"},
		{"192.168.1.2:5000/team/dra", "kind-e2e/testdriver:abc", "192.168.1.2:5000"},
		{"localhost:5001/a", "kind-e2e/testdriver:abc", "localhost:5001"}, // a one-character path
		{"localhost:5001/dra", "kind-e2e/t:1", "localhost:5001"},          // a one-character image
		{"localhost/dra", "kind-e2e/testdriver:abc", "localhost"},
	} {
		host, err := plainHTTPRegistry(c.registry)
		if err != nil || host != c.host {
			t.Errorf("--registry %s: got %q, %v; want %q", c.registry, host, err, c.host)
			continue
		}
		ref, err := push.Reference(c.registry, c.tag)
		if err != nil {
			t.Errorf("REGISTRY=%s: the pusher refused it: %v", c.registry, err)
			continue
		}
		if got := kindcluster.PlainHTTPRegistryHost(ref); got != host {
			t.Errorf("REGISTRY=%s: the pusher writes %s, whose plain-HTTP host for the nodes is %q, not %q", c.registry, ref, got, host)
		}
	}
	for registry, why := range map[string]string{
		"registry.example.com/team": "only a registry on a loopback or private address",
		"203.0.113.7:5000":          "only a registry on a loopback or private address",
		"dra":                       "not a registry host",
		"http://localhost:5001":     "not a registry host",
		"localhost:5001:5002":       "not a registry host",
	} {
		if _, err := plainHTTPRegistry(registry); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("--registry %s: got %v, want an error saying %q", registry, err, why)
		}
	}
}
