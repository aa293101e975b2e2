package kindcluster

import (
	"strings"
	"testing"
)

func TestOnlyALoopbackRegistryIsLocal(t *testing.T) {
	for ref, want := range map[string]string{
		"localhost:5001/dra/testdriver:abc":  "localhost:5001",
		"127.0.0.1:5001/testdriver@sha256:1": "127.0.0.1:5001",
		"registry.example.com/dra/td:1":      "",
		"10.0.0.5:5000/td:1":                 "",
		"kind-e2e/testdriver:abc":            "",
		"localhost/td:1":                     "",
	} {
		if got := LocalRegistryHost(ref); got != want {
			t.Errorf("LocalRegistryHost(%q) = %q, want %q", ref, got, want)
		}
	}
	toml, err := hostsTOML("localhost:5001", "172.18.0.1")
	if err != nil || !strings.Contains(toml, `server = "http://172.18.0.1:5001"`) || !strings.Contains(toml, `[host."http://172.18.0.1:5001"]`) {
		t.Errorf("hosts.toml: %v\n%s", err, toml)
	}
}
