// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/nodeimage"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// ReleaseBits are what an in-place release switch installs: one release's
// kubelet binary and its control-plane images, taken out of that release's node
// image. Node images keep their images only inside containerd's content store
// (kind's build, and ours, import the archives and delete them), so the
// extraction starts containerd in a throw-away container of the image and
// exports them from there. Our offline images and the published kindest/node
// images are handled alike.
type ReleaseBits struct {
	Release release.Release
	Image   string
	Dir     string // holds kubelet and control-plane.tar
	// Images are the references inside that archive, per component.
	Images map[profile.Component]string
}

// Kubelet is the path of the release's kubelet binary.
func (b *ReleaseBits) Kubelet() string { return filepath.Join(b.Dir, "kubelet") }

// Archive is the path of the control-plane images' archive.
func (b *ReleaseBits) Archive() string { return filepath.Join(b.Dir, "control-plane.tar") }

// exportScript starts the image's own containerd and prints its image list.
const exportScript = `containerd > /tmp/containerd.log 2>&1 &
for _ in $(seq 1 100); do ctr version > /dev/null 2>&1 && break; sleep 0.2; done
ctr -n k8s.io images ls -q`

// ExtractReleaseBits copies the kubelet and the control-plane images out of
// node image img into dir, or finds them there from an earlier run of the same
// image.
func ExtractReleaseBits(ctx context.Context, img Image, dir string) (*ReleaseBits, error) {
	// The image's own patch is the version every switch step waits for.
	r, image, id := img.Release, img.Ref, img.ID
	if bits, ok := cachedBits(dir, id, r); ok {
		bits.Image = image
		return bits, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("e2e-extract-%s-%d", strings.ReplaceAll(r.Minor, ".", "-"), os.Getpid())
	docker := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("docker %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
		return string(out), nil
	}
	// Privileged: containerd inside needs its mounts, as in the image build.
	if _, err := docker("run", "-d", "--privileged", "--name", name, "--entrypoint", "sleep", image, "infinity"); err != nil {
		return nil, fmt.Errorf("starting node image %s: %w", image, err)
	}
	defer exec.Command("docker", "rm", "-f", name).Run()
	list, err := docker("exec", name, "sh", "-c", exportScript)
	if err != nil {
		return nil, fmt.Errorf("listing the images of %s: %w", image, err)
	}
	refs, err := ControlPlaneRefs(list, r.GitVersion())
	if err != nil {
		return nil, fmt.Errorf("node image %s: %w", image, err)
	}
	// --local: through containerd 2.x's transfer API, ctr has been seen to
	// exit before the archive was complete (a tar cut short by 6 KB).
	export := append([]string{"exec", name, "ctr", "-n", "k8s.io", "images", "export", "--local", "--platform", "linux/amd64", "/tmp/control-plane.tar"}, refs...)
	if _, err := docker(export...); err != nil {
		return nil, fmt.Errorf("exporting %v from %s: %w", refs, image, err)
	}
	bits := &ReleaseBits{Release: r, Image: image, Dir: dir, Images: map[profile.Component]string{}}
	if _, err := docker("cp", name+":/tmp/control-plane.tar", bits.Archive()); err != nil {
		return nil, err
	}
	if err := checkTar(bits.Archive()); err != nil {
		return nil, fmt.Errorf("the images exported from %s: %w", image, err)
	}
	// -L: an image may keep the kubelet behind a symlink.
	if _, err := docker("cp", "-L", name+":/usr/bin/kubelet", filepath.Join(dir, "kubelet")); err != nil {
		return nil, fmt.Errorf("copying the kubelet out of %s: %w", image, err)
	}
	for i, comp := range profile.ControlPlane {
		bits.Images[comp] = refs[i]
	}
	return bits, saveBits(bits, id)
}

// bitsRecord says which image a folder of release bits came from, so that a
// later run (or the downgrade of the same run) reuses it instead of starting
// containerd in the image again.
type bitsRecord struct {
	ImageID string                       `json:"imageID"`
	Version string                       `json:"version"`
	Images  map[profile.Component]string `json:"images"`
}

const bitsRecordFile = "bits.json"

func saveBits(b *ReleaseBits, id string) error {
	data, err := json.Marshal(bitsRecord{ImageID: id, Version: b.Release.Version, Images: b.Images})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.Dir, bitsRecordFile), data, 0o644)
}

// cachedBits returns the bits in dir when they came from image id and are
// whole (the archive reads to its end).
func cachedBits(dir, id string, r release.Release) (*ReleaseBits, bool) {
	data, err := os.ReadFile(filepath.Join(dir, bitsRecordFile))
	if err != nil {
		return nil, false
	}
	var rec bitsRecord
	if json.Unmarshal(data, &rec) != nil || rec.ImageID != id || rec.Version != r.Version || len(rec.Images) != len(profile.ControlPlane) {
		return nil, false
	}
	b := &ReleaseBits{Release: r, Dir: dir, Images: rec.Images}
	if _, err := os.Stat(b.Kubelet()); err != nil || checkTar(b.Archive()) != nil {
		return nil, false
	}
	return b, true
}

// checkTar reads an archive to its end, so that a truncated export fails
// here with its name rather than later inside a node's containerd.
func checkTar(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := tar.NewReader(f)
	for {
		_, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s is not a whole tar archive: %w", path, err)
		}
	}
}

// ControlPlaneRefs picks, from `ctr images ls -q` output, the image of each
// switched component at version ("v1.36.3"); every one must be there.
func ControlPlaneRefs(list, version string) ([]string, error) {
	var refs, missing []string
	for _, comp := range profile.ControlPlane {
		found := ""
		for _, ref := range strings.Fields(list) {
			repo, tag, ok := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
			// Some builds name images per architecture (kube-apiserver-amd64).
			if ok && tag == version && (repo == string(comp) || repo == string(comp)+"-amd64") {
				found = ref
				break
			}
		}
		if found == "" {
			missing = append(missing, string(comp)+":"+version)
			continue
		}
		refs = append(refs, found)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no image for %s among %d images", strings.Join(missing, ", "), len(strings.Fields(list)))
	}
	return refs, nil
}

func (s *source) ReleaseBits(ctx context.Context, r release.Release, dir string) (*ReleaseBits, error) {
	ref, build, err := s.locate(ctx, r)
	if err != nil {
		return nil, err
	}
	if build == nil {
		img, err := Inspect(ctx, ref, r)
		if err != nil {
			return nil, err
		}
		return ExtractReleaseBits(ctx, img, dir)
	}
	if err := nodeimage.CanBuildSwitchBits(); err != nil {
		return nil, fmt.Errorf("%v; pass a kind node image of Kubernetes %s with UPGRADE_NODE_IMAGE=<image>", err, r.Minor)
	}
	// Bits built without their node image are keyed by the tag that image
	// would have: the same recipe gives the same files.
	id, what := "built "+build.tag, build.tag+" (its kubelet and control-plane images, built without the rest of the node image)"
	if bits, ok := cachedBits(dir, id, build.recipe.Release); ok {
		bits.Image = what
		return bits, nil
	}
	if err := errors.Join(os.RemoveAll(dir), os.MkdirAll(dir, 0o755)); err != nil {
		return nil, err
	}
	bits := &ReleaseBits{Release: build.recipe.Release, Image: what, Dir: dir}
	b := *s.builder
	b.Yield = true
	if bits.Images, err = b.BuildSwitchBits(ctx, build.recipe, nodeimage.SwitchBits{Kubelet: bits.Kubelet(), Archive: bits.Archive()}); err != nil {
		return nil, err
	}
	return bits, saveBits(bits, id)
}
