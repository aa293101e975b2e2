// SPDX-License-Identifier: Apache-2.0

package registryhost

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

func TestOfLoopbackAndPlainHTTP(t *testing.T) {
	for ref, want := range map[string]struct {
		host            string
		loopback, plain bool
	}{
		"localhost:5001/dra/td:1":    {"localhost:5001", true, true},
		"localhost/td:1":             {"localhost", true, true},
		"127.1.2.3:5001/td:1":        {"127.1.2.3:5001", true, true},
		"[::1]:5001/td:1":            {"[::1]:5001", true, true},
		"10.1.2.3:5000/td:1":         {"10.1.2.3:5000", false, true},
		"192.168.1.10:5000/td:1":     {"192.168.1.10:5000", false, true},
		"[fd00::1]:5000/td:1":        {"[fd00::1]:5000", false, true},
		"172.32.0.1:5000/td:1":       {"172.32.0.1:5000", false, false},
		"registry.example.com/td:1":  {"registry.example.com", false, false},
		"localhost.example.com/td:1": {"localhost.example.com", false, false},
		"dra/td:1":                   {"", false, false},
		"kind-e2e/testdriver:abc":    {"", false, false},
	} {
		host := Of(ref)
		if host != want.host || Loopback(host) != want.loopback || PlainHTTP(host) != want.plain {
			t.Errorf("%s: host %q loopback %t plain HTTP %t, want %+v", ref, host, Loopback(host), PlainHTTP(host), want)
		}
	}
}

// Of reads references with pkg/name; these are the shapes where a hand
// split and pkg/name could part ways.
func TestOfEdgeCases(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	for ref, want := range map[string]string{
		"localhost:5001/dra/td:1" + digest:   "localhost:5001", // a digest-pinned tag
		"localhost:5001/dra/td" + digest:     "localhost:5001", // a digest alone
		"127.0.0.1:5001/td@sha256:1":         "127.0.0.1:5001", // a digest pkg/name refuses
		"registry.example.com:443/team/td:1": "registry.example.com:443",
		"localhost/td":                       "localhost", // no tag
		"[fd00::1]:5000/dra/td:1" + digest:   "[fd00::1]:5000",
		"kindest/node:v1.35.0":               "", // Docker Hub, as kind and Docker read it
		"kind-e2e/node:v1.35.4-abc":          "",
		"kindest/node:v1.35.0" + digest:      "",
		"td:1":                               "",
		"docker.io/kindest/node:v1.35.0":     "index.docker.io", // pkg/name's name for Docker Hub
		"localhost:5001":                     "",                // a host alone is a repository and its tag
		"localhost:5001/DRA/td:1":            "",                // no reference
		"localhost:port/td:1":                "",
		"":                                   "",
	} {
		if got := Of(ref); got != want {
			t.Errorf("Of(%q) = %q, want %q", ref, got, want)
		}
	}
}

// The suite reads every reference with pkg/name (Of, the pusher, the node
// image source, the image archive) and relies on it reading a bare
// "localhost" as Docker does, as the registry's host: v0.20 took it for a
// Docker Hub namespace, so a move back below v0.21 fails here.
func TestPkgNameReadsBareLocalhostAsARegistry(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	for ref, want := range map[string]string{ // want: registry|repository|identifier, or "error"
		"localhost/td:1":                "localhost|td|1",
		"localhost/dra/td:1":            "localhost|dra/td|1",
		"localhost/td":                  "localhost|td|latest",
		"localhost/td@" + digest:        "localhost|td|" + digest,
		"localhost/td:1@" + digest:      "localhost|td|" + digest,
		"localhost:5001/td:1":           "localhost:5001|td|1",
		"dra/td:1":                      "index.docker.io|dra/td|1",
		"td:1":                          "index.docker.io|library/td|1",
		"localhost.example.com/td:1":    "localhost.example.com|td|1",
		"localhost/example.com/td:1":    "localhost|example.com/td|1", // a path component may hold a dot
		"localhost/localhost:5001/td:1": "error",
		"localhost/TD:1":                "error",
		"localhost/td@sha256:1":         "error",
		"localhost/":                    "error",
	} {
		got := "error"
		if r, err := name.ParseReference(ref); err == nil {
			got = r.Context().RegistryStr() + "|" + r.Context().RepositoryStr() + "|" + r.Identifier()
		}
		if got != want {
			t.Errorf("ParseReference(%q) = %s, want %s", ref, got, want)
		}
		if strings.Contains(ref, "@") {
			continue
		}
		tagGot := "error"
		if r, err := name.NewTag(ref); err == nil {
			tagGot = r.Context().RegistryStr() + "|" + r.Context().RepositoryStr() + "|" + r.Identifier()
		}
		if tagGot != want {
			t.Errorf("NewTag(%q) = %s, want %s", ref, tagGot, want)
		}
	}
}

func TestPathComponent(t *testing.T) {
	for s, want := range map[string]bool{
		"dra": true, "kind-e2e": true, "my_images": true, "a__b": true, "a--b": true, "v1.35": true,
		"": false, "-a": false, "a-": false, "a___b": false, "A": false, "a:1": false, "a/b": false, ".a": false,
	} {
		if got := PathComponent(s); got != want {
			t.Errorf("PathComponent(%q) = %t, want %t", s, got, want)
		}
	}
}

func TestOfPrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		"localhost:5001":            "localhost:5001",
		"localhost:5001/a":          "localhost:5001",
		"localhost":                 "localhost",
		"127.0.0.1:5001/dra":        "127.0.0.1:5001",
		"[::1]:5001":                "[::1]:5001",
		"[::1]":                     "[::1]",
		"registry.example.com/team": "registry.example.com",
		"dra":                       "", // a Docker Hub namespace
		"dra/team":                  "",
		"http://localhost:5001":     "",
		"localhost:5001:5002":       "",
		"localhost:port":            "",
		"localhost:0":               "",
		":5001":                     "",
		"::1":                       "",
		"":                          "",
	} {
		if got := OfPrefix(prefix); got != want {
			t.Errorf("OfPrefix(%q) = %q, want %q", prefix, got, want)
		}
	}
}
