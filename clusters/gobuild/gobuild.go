// SPDX-License-Identifier: Apache-2.0

// Package gobuild is the one set of Go build settings every binary of this
// project is compiled with: the runner and e2e-cluster (the Makefile), the
// bundled driver's image, the suite (Ginkgo and the compile beside the node
// image), the node image's own small binaries and, with its module's
// settings besides, the node image's Kubernetes, containerd, etcd and CoreDNS.
//
// Why one set: the Go build cache keys every package by its flags. With the
// go command's defaults here (cgo on, full paths, DWARF) and the node image's
// (-trimpath, no DWARF, no cgo) a cold machine compiled the standard library
// and every module the runner and the driver share twice, and the driver's
// image, built with -trimpath and without cgo, all of its 971 packages again
// after the runner had compiled most of them.
//
// The settings change no behaviour: -trimpath records module paths instead
// of this machine's folders, and the compiler skips the DWARF that the
// linker strips from the images' binaries anyway (stack traces come from the
// line tables, which stay). Without cgo, name lookups use Go's own resolver
// and binaries are static, which the images need.
package gobuild

import (
	"os/exec"
	"slices"
	"strings"
)

// Flags are go build's flags for every compile of this project.
var Flags = []string{"-trimpath", "-gcflags=all=-dwarf=false"}

// CgoOff is the environment entry every compile of this project runs with.
const CgoOff = "CGO_ENABLED=0"

// Environ is env for a go command that compiles this project's packages:
// CGO_ENABLED=0, and GOFLAGS holding Flags besides what the user set there
// (in the environment or with go env -w), so that a go command started
// outside make (the runner's Ginkgo and its compile beside) shares the
// packages make's compiles put in the build cache.
func Environ(env []string) []string {
	goflags, set := lookup(env, "GOFLAGS")
	if !set {
		// go env -w writes GOFLAGS to a file that an environment
		// variable replaces: keep what it says.
		if out, err := exec.Command("go", "env", "GOFLAGS").Output(); err == nil {
			goflags = strings.TrimSpace(string(out))
		}
	}
	have := strings.Fields(goflags)
	for _, f := range Flags {
		if !slices.Contains(have, f) {
			have = append(have, f)
		}
	}
	return append(slices.Clone(env), CgoOff, "GOFLAGS="+strings.Join(have, " "))
}

// lookup is the last value of key in env, as exec uses it.
func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}
