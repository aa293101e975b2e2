// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/imagearchive"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// controlPlaneImages writes one single-layer image archive per image kubeadm
// needs, into dir, from the binaries in bins.
func (b *Builder) controlPlaneImages(ctx context.Context, rec Recipe, bins binaries, rootfs, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := rec.ControlPlaneImages()
	simple := func(tag, src, dst string, entrypoint []string) imagearchive.Image {
		return imagearchive.Image{Tags: []string{tag}, Files: []imagearchive.File{{Path: dst, Mode: 0o755, Source: src}}, Entrypoint: entrypoint}
	}
	images := map[string]imagearchive.Image{
		"etcd":    simple(names["etcd"], bins.etcd, "/usr/local/bin/etcd", nil),
		"coredns": simple(names["coredns"], bins.coredns, "/coredns", []string{"/coredns"}),
		"pause":   simple(names["pause"], bins.pause, "/pause", []string{"/pause"}),
	}
	for _, c := range profile.ControlPlane {
		images[string(c)] = controlPlaneImage(names[string(c)], filepath.Join(bins.kubernetes, string(c)))
	}
	// The pause image also answers to containerd's sandbox_image of kind's config.
	pause := images["pause"]
	if sandbox := "registry.k8s.io/pause:3.10"; sandbox != names["pause"] {
		pause.Tags = append(pause.Tags, sandbox)
	}
	images["pause"] = pause

	proxy, err := kubeProxyImage(names["kube-proxy"], filepath.Join(bins.kubernetes, "kube-proxy"), rootfs)
	if err != nil {
		return err
	}
	images["kube-proxy"] = proxy

	for name, img := range images {
		if err := img.WriteFile(filepath.Join(dir, name+".tar")); err != nil {
			return fmt.Errorf("image %s: %w", name, err)
		}
	}
	return nil
}

// controlPlaneImage is the image of one control-plane component: its binary,
// on PATH, since kubeadm's static pods name the command (`kube-apiserver
// ...`). The node image and a release switch's own build both make it here.
func controlPlaneImage(tag, binary string) imagearchive.Image {
	name := filepath.Base(binary)
	return imagearchive.Image{Tags: []string{tag}, Files: []imagearchive.File{{Path: "/usr/local/bin/" + name, Mode: 0o755, Source: binary}}}
}

// kubeProxyTools are what kube-proxy in nftables mode runs (nft), plus the
// iptables front ends it calls to clean up other modes' rules.
var kubeProxyTools = []string{"/usr/sbin/nft", "/usr/sbin/xtables-nft-multi"}

var kubeProxyToolLinks = map[string]string{
	"/usr/sbin/iptables": "xtables-nft-multi", "/usr/sbin/iptables-save": "xtables-nft-multi",
	"/usr/sbin/iptables-restore": "xtables-nft-multi", "/usr/sbin/ip6tables": "xtables-nft-multi",
	"/usr/sbin/ip6tables-save": "xtables-nft-multi", "/usr/sbin/ip6tables-restore": "xtables-nft-multi",
}

// kubeProxyImage holds kube-proxy and the tools above with their shared
// libraries, copied from the node rootfs (found with ldd inside it).
func kubeProxyImage(tag, binary, rootfs string) (imagearchive.Image, error) {
	img := imagearchive.Image{Tags: []string{tag}}
	img.Files = append(img.Files, imagearchive.File{Path: "/usr/local/bin/kube-proxy", Mode: 0o755, Source: binary})
	libs := map[string]bool{}
	for _, tool := range kubeProxyTools {
		img.Files = append(img.Files, imagearchive.File{Path: tool, Mode: 0o755, Source: filepath.Join(rootfs, tool)})
		out, err := exec.Command("chroot", rootfs, "ldd", tool).Output()
		if err != nil {
			return img, fmt.Errorf("ldd %s in rootfs: %w", tool, err)
		}
		for _, lib := range ParseLDD(string(out)) {
			libs[lib] = true
		}
	}
	for link, target := range kubeProxyToolLinks {
		img.Files = append(img.Files, imagearchive.File{Path: link, Symlink: target})
	}
	var sorted []string
	for lib := range libs {
		sorted = append(sorted, lib)
	}
	sort.Strings(sorted)
	for _, lib := range sorted {
		// Copy the resolved file under the name the loader asks for.
		real, err := filepath.EvalSymlinks(filepath.Join(rootfs, lib))
		if err != nil {
			return img, err
		}
		img.Files = append(img.Files, imagearchive.File{Path: lib, Mode: 0o755, Source: real})
	}
	// xtables loads its extensions at run time, not through ldd.
	ext, _ := filepath.Glob(filepath.Join(rootfs, "usr/lib/x86_64-linux-gnu/xtables/*.so"))
	for _, e := range ext {
		img.Files = append(img.Files, imagearchive.File{Path: "/" + strings.TrimPrefix(strings.TrimPrefix(e, rootfs), "/"), Mode: 0o755, Source: e})
	}
	return img, nil
}

// ParseLDD returns the absolute library paths of ldd's output.
func ParseLDD(out string) []string {
	var libs []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			if path.IsAbs(f) && (i == 0 || fields[i-1] == "=>") {
				libs = append(libs, f)
				break
			}
		}
	}
	return libs
}
