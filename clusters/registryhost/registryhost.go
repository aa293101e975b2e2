// SPDX-License-Identifier: Apache-2.0

// Package registryhost is the one rule for how an image registry is reached
// without TLS: the pusher (testdriver/push) and the nodes of a cluster the
// suite creates (kindcluster's containerd hosts.toml) must agree on it, or
// preflight accepts a registry that the nodes then cannot pull from. It
// reads references with go-containerregistry's pkg/name, the suite's one
// reference parser, and keeps beside it the one part of the distribution
// grammar pkg/name leaves loose (PathComponent), which the pusher and the
// node image source both check.
package registryhost

import (
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Of is the registry part of an image reference ("localhost:5001" of
// "localhost:5001/dra/testdriver:1"), or "" where the reference names no
// registry (a Docker Hub path such as "dra/testdriver:1" or
// "kindest/node:v1.35.0", which Docker and kind pull from docker.io) or is
// no reference at all. pkg/name names Docker Hub "index.docker.io" when a
// reference spells it out ("docker.io/x:1").
func Of(ref string) string {
	// Only the name before a digest says where the image is: a digest
	// pkg/name would refuse (kindcluster's tests pin "…@sha256:1") is for
	// the registry to judge and must not hide the host.
	named, _, _ := strings.Cut(ref, "@")
	// No default registry: pkg/name would otherwise fill in Docker Hub,
	// and the callers ask whether the reference names a registry at all.
	t, err := name.NewTag(named, name.WithDefaultRegistry(""))
	if err != nil {
		return ""
	}
	return t.RegistryStr()
}

// OfPrefix is the registry host of a repository prefix, the form REGISTRY
// and e2e-cluster's --registry take: a host ("localhost:5001"), a host and a
// path ("10.0.0.5:5000/dra"), or a Docker Hub namespace ("dra"), whose host
// is "" as it is for a prefix that names no valid host. The first component
// is read as Docker reads it, a host where it holds a '.' or a ':' or is
// "localhost". It is read as a host only, never through a reference with an
// image name made up for it: pkg/name checks such a name by the rules for
// repositories (v0.20 refused one of a single character), which are not the
// rules for hosts, and a stand-in that broke them refused every registry.
func OfPrefix(prefix string) string {
	first, _, _ := strings.Cut(prefix, "/")
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return ""
	}
	// pkg/name checks a host as a URI authority, which "http:" and "h:1:2"
	// pass: a host with a port ("[v6]" alone has none) must split into a
	// name and a port of digits.
	if strings.Contains(first, ":") && !strings.HasSuffix(first, "]") {
		h, port, err := net.SplitHostPort(first)
		if n, perr := strconv.Atoi(port); err != nil || h == "" || perr != nil || n < 1 || n > 65535 {
			return ""
		}
	}
	reg, err := name.NewRegistry(first, name.StrictValidation)
	if err != nil {
		return ""
	}
	return reg.RegistryStr()
}

// pathComponent is one component of a repository path as the OCI
// distribution spec defines it.
var pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)

// PathComponent says whether s is one component of a repository path
// ("dra", "kind-e2e", "my_images"). pkg/name checks a repository by its
// characters alone, so "a//b", "-a" or "a-" pass it and fail only at the
// registry or in Docker, after the suite has built or pushed something.
func PathComponent(s string) bool { return pathComponent.MatchString(s) }

// hostname strips the port and IPv6 brackets: "h", "h:port", "[v6]" or
// "[v6]:port".
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// Loopback says whether host is this machine's loopback. The nodes of a
// kind cluster reach such a registry at the kind network's gateway.
func Loopback(host string) bool {
	h := hostname(host)
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// PlainHTTP says whether a registry at host may be reached over plain
// HTTP: on a loopback or private address (10/8, 172.16/12, 192.168/16,
// fc00::/7). Every other registry is reached over HTTPS only.
func PlainHTTP(host string) bool {
	if Loopback(host) {
		return true
	}
	ip := net.ParseIP(hostname(host))
	return ip != nil && ip.IsPrivate()
}
