// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/imagearchive"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

// SwitchBits names the files BuildSwitchBits writes into its folder: the
// kubelet binary and one archive of the control plane's images. They are
// the files a release switch reads, whether built here or exported from a
// node image.
type SwitchBits struct {
	Kubelet, Archive string
}

// CanBuildSwitchBits says why a switch's bits cannot be built here, or nil:
// they are Go builds for the nodes (linux/amd64) and need no root and no
// debootstrap, unlike the whole node image (CanBuild).
func CanBuildSwitchBits() error {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return fmt.Errorf("a release's kubelet and control-plane images can only be built on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return nil
}

// BuildSwitchBits builds only what an in-place switch to rec's release
// installs: its kubelet and the control plane's images (the same images,
// byte for byte, as the node image of rec carries), into bits. A run needs
// the next release for its upgrade spec alone; building its whole node
// image (containerd, etcd, CoreDNS, kube-proxy, kubeadm, kubectl, the root
// filesystem) cost about two minutes more on a 2-core VM, for files the
// switch never reads.
func (b *Builder) BuildSwitchBits(ctx context.Context, rec Recipe, bits SwitchBits) (map[profile.Component]string, error) {
	start := time.Now()
	logPath, done, err := b.openLog("build-bits-" + rec.Release.Version + ".log")
	if err != nil {
		return nil, err
	}
	defer done()
	fmt.Fprintf(b.Progress, "release-bits: building the kubelet and control-plane images of Kubernetes %s (log: %s)\n", rec.Release.Version, logPath)
	bins := b.binaries(rec)
	t := time.Now()
	if err := b.buildKubernetes(ctx, rec, bins.kubernetes, switchCommands); err != nil {
		return nil, fmt.Errorf("release bits of %s: %w (see %s)", rec.Release.Version, err, logPath)
	}
	fmt.Fprintf(b.Progress, "release-bits: kubernetes   done in %s\n", since(t))
	names := rec.ControlPlaneImages()
	images := map[profile.Component]string{}
	var archive []imagearchive.Image
	for _, c := range profile.ControlPlane {
		archive = append(archive, controlPlaneImage(names[string(c)], filepath.Join(bins.kubernetes, string(c))))
		images[c] = names[string(c)]
	}
	if err := imagearchive.WriteArchive(bits.Archive, archive...); err != nil {
		return nil, fmt.Errorf("release bits of %s: %w", rec.Release.Version, err)
	}
	if err := copyFile(filepath.Join(bins.kubernetes, "kubelet"), bits.Kubelet, 0o755); err != nil {
		return nil, fmt.Errorf("release bits of %s: %w", rec.Release.Version, err)
	}
	fmt.Fprintf(b.Progress, "release-bits: Kubernetes %s's kubelet and control-plane images built in %s\n", rec.Release.Version, since(start))
	return images, nil
}
