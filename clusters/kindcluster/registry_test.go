// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"strings"
	"testing"
)

func TestNodesReachPlainHTTPRegistriesAsThePusherDoes(t *testing.T) {
	for ref, want := range map[string]string{
		"localhost:5001/dra/testdriver:abc":  "localhost:5001",
		"127.0.0.1:5001/testdriver@sha256:1": "127.0.0.1:5001",
		"10.0.0.5:5000/td:1":                 "10.0.0.5:5000",
		"registry.example.com/dra/td:1":      "",
		"kind-e2e/testdriver:abc":            "",
	} {
		if got := PlainHTTPRegistryHost(ref); got != want {
			t.Errorf("PlainHTTPRegistryHost(%q) = %q, want %q", ref, got, want)
		}
	}
	for host, endpoint := range map[string]string{
		"localhost:5001": "http://172.18.0.1:5001", // this machine, as the nodes reach it
		"10.0.0.5:5000":  "http://10.0.0.5:5000",   // reached where it is
	} {
		toml := hostsTOML(host, "172.18.0.1")
		if !strings.Contains(toml, "server = \""+endpoint+"\"") || !strings.Contains(toml, "[host.\""+endpoint+"\"]") {
			t.Errorf("hosts.toml of %s:\n%s", host, toml)
		}
	}
}
