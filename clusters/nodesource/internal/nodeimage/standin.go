// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A stand-in takes the place of a module the Kubernetes module requires
// and the Go module proxy does not serve here: Kubernetes 1.38 moved its
// iptables client (pkg/util/iptables) into sigs.k8s.io/iptables-wrappers,
// whose v1.0.0 the proxy refuses, and the kubelet and kube-proxy import
// it. The stand-in keeps that module's API as 1.38 calls it
// (standin/iptables.go.txt) over the package as it was before the move,
// read from the last Kubernetes module that has it. Where the proxy serves
// the module, it is used and no stand-in is made; the image's tag and its
// label say which.

//go:embed standin
var standinFiles embed.FS

// iptablesWrappers is the module, and legacyIPTables where its package
// lived before the move (the newest release table module that has it).
const (
	iptablesWrappers = "sigs.k8s.io/iptables-wrappers"
	legacyIPTables   = "k8s.io/kubernetes@v1.37.2"
	legacyIPTablesIn = "pkg/util/iptables"
)

// StandIn is one module a node image's Kubernetes is built against in
// place of the one its go.mod requires.
type StandIn struct {
	Module, Version string
	// From says what the stand-in is made of, for the image's label.
	From string
}

func (s StandIn) String() string {
	return fmt.Sprintf("%s@%s (not served by the module proxy; stood in for by %s)", s.Module, s.Version, s.From)
}

// standInDigest is what the stand-ins put into the image's tag.
func standInDigest(ins []StandIn) string {
	if len(ins) == 0 {
		return ""
	}
	h := sha256.New()
	for _, s := range ins {
		fmt.Fprintln(h, s.String())
	}
	b, _ := standinFiles.ReadFile("standin/iptables.go.txt")
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// standInsFor are the stand-ins the Kubernetes module in moduleDir needs
// here: each module it requires that has one and that the proxy does not
// serve (go mod download answers at once either way).
func (b *Builder) standInsFor(ctx context.Context, moduleDir, toolchain string) ([]StandIn, error) {
	version, err := requiredVersion(filepath.Join(moduleDir, "go.mod"), iptablesWrappers)
	if err != nil || version == "" {
		return nil, err
	}
	_, err = b.downloadModule(ctx, iptablesWrappers+"@"+version, toolchain)
	switch {
	case err == nil:
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !refused(err):
		// A fault on the way (a network error, a toolchain that did not
		// come) is no answer: never build against a stand-in for it.
		return nil, fmt.Errorf("is %s@%s served here? %w", iptablesWrappers, version, err)
	}
	return []StandIn{{Module: iptablesWrappers, Version: version, From: legacyIPTables + " " + legacyIPTablesIn + " behind the " + version + " API"}}, nil
}

// writeStandIn writes the stand-in module for s under the output folder,
// with the requirements of the Kubernetes module in moduleDir (so that
// its replaces and versions hold), and returns its folder.
func (b *Builder) writeStandIn(ctx context.Context, s StandIn, moduleDir string) (string, error) {
	legacyDir, err := b.downloadModule(ctx, legacyIPTables, "")
	if err != nil {
		return "", err
	}
	// Absolute: go.mod takes a relative replacement for a module path.
	dir, err := filepath.Abs(filepath.Join(b.Out, "src", "standin-"+strings.ReplaceAll(s.Module, "/", "_")+"-"+s.Version))
	if err != nil {
		return "", err
	}
	os.RemoveAll(dir)
	for _, d := range []string{"pkg/iptables", "internal/legacy"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", err
		}
	}
	api, _ := standinFiles.ReadFile("standin/iptables.go.txt")
	if err := os.WriteFile(filepath.Join(dir, "pkg/iptables/iptables.go"), api, 0o644); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(filepath.Join(legacyDir, legacyIPTablesIn))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(legacyDir, legacyIPTablesIn, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "internal/legacy", e.Name()), src, 0o644); err != nil {
			return "", err
		}
	}
	var mod strings.Builder
	fmt.Fprintf(&mod, "module %s\n\ngo 1.25.0\n\n", s.Module)
	for _, m := range []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/klog/v2", "k8s.io/utils"} {
		v, err := requiredVersion(filepath.Join(moduleDir, "go.mod"), m)
		if err != nil || v == "" {
			return "", fmt.Errorf("stand-in for %s: %s's go.mod requires no %s (%v)", s.Module, moduleDir, m, err)
		}
		fmt.Fprintf(&mod, "require %s %s\n", m, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod.String()), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// refused says whether the module proxy answered that it does not serve
// the module (403 or 404, "not available", "not found").
func refused(err error) bool {
	msg := err.Error()
	for _, s := range []string{"403 Forbidden", "404 Not Found", "410 Gone", "not available", "not found"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// requiredVersion is the version go.mod requires of module, or "".
func requiredVersion(goMod, module string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module && strings.HasPrefix(fields[1], "v") {
			return fields[1], nil
		}
	}
	return "", s.Err()
}
