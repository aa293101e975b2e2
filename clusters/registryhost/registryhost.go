// Package registryhost is the one rule for how an image registry is reached
// without TLS: the pusher (testdriver/push) and the nodes of a cluster the
// suite creates (kindcluster's containerd hosts.toml) must agree on it, or
// preflight accepts a registry that the nodes then cannot pull from.
package registryhost

import (
	"net"
	"strings"
)

// Of is the registry part of an image reference ("localhost:5001" of
// "localhost:5001/dra/testdriver:1"), or "" where the first part names no
// registry (a Docker Hub path such as "dra/testdriver:1").
func Of(ref string) string {
	host, _, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return ""
	}
	return host
}

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
