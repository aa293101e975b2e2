// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"context"
	"io"
	"path/filepath"
	"slices"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/nodeimage"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// OfflineImages names what the offline build of release r makes: the node
// image's tag and the images it preloads into containerd (kubeadm's list
// of the release), from the recipe make node-image reads (the release's
// Kubernetes module, downloaded into the module cache where it is not
// there). Nothing is built, and no image is pulled.
func OfflineImages(ctx context.Context, r release.Release, out, repoRoot string) (tag string, images []string, err error) {
	b := &nodeimage.Builder{Out: filepath.Join(out, "nodeimage"), RepoRoot: repoRoot, Progress: io.Discard}
	rec, err := b.Recipe(ctx, r)
	if err != nil {
		return "", nil, err
	}
	if tag, err = rec.Tag(); err != nil {
		return "", nil, err
	}
	for _, image := range rec.ControlPlaneImages() {
		images = append(images, image)
	}
	slices.Sort(images)
	return tag, images, nil
}
