// SPDX-License-Identifier: Apache-2.0

// Package nodesource is where the images a run boots come from, and the one
// part of clusters/ that knows whether this host can pull: kind's published,
// digest-pinned kindest/node images where a registry answers, or images this
// project builds from Go modules and Debian packages where none does
// (internal/nodeimage, with the capability shim and the image-archive writer
// it needs beside it under internal/, and the shim's command under cmd/).
// Cluster code, e2e/testenv, the upgrade spec and the commands reach it only
// through Source, Image and ReleaseBits, so they read the same whichever way
// an image was got; the driver's image writes its archive with the same
// writer, through ArchiveImage. Which of present, pulled or built an image is
// decided here (Policy), never in the builder.
package nodesource

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/nodeimage"
	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Source gives a release's node image, present in the local Docker.
type Source interface {
	NodeImage(ctx context.Context, r release.Release) (Image, error)
	// ReleaseBits gets r's kubelet and control-plane images for an in-place
	// switch into dir: out of a node image of r where one is present or
	// can be pulled, else built alone (not the whole node image) at the
	// lowest CPU priority, since they are got beside a run.
	ReleaseBits(ctx context.Context, r release.Release, dir string) (*ReleaseBits, error)
}

// Image is a kind node image in the local Docker.
type Image struct {
	Ref string
	ID  string // Docker's image ID: what a report names and cached bits are keyed by
	// Release is the release asked for at the patch the image runs (kind's
	// published image and the offline build can differ).
	Release release.Release
}

// Specs are the words NODE_IMAGE and UPGRADE_NODE_IMAGE take besides an image
// reference.
var Specs = []string{string(Auto), string(Pull), string(Build), string(Present)}

// CheckSpec says why spec is neither a source word nor an image reference.
// A reference must name its tag or digest: kind and Docker would take
// "latest" for a bare name, which is never a node image this suite pins.
func CheckSpec(spec string) error {
	for _, s := range Specs {
		if spec == s {
			return nil
		}
	}
	if isImageRef(spec) {
		return nil
	}
	return fmt.Errorf("%q is neither a source (%s) nor an image reference such as kindest/node:v1.35.0", spec, strings.Join(Specs, ", "))
}

// isImageRef says whether spec is an image reference with a tag or digest
// of its own ([registry[:port]/]path[:tag][@digest]), read by pkg/name.
func isImageRef(spec string) bool {
	// No default tag, so that a reference without one shows.
	ref, err := name.ParseReference(spec, name.WithDefaultTag(""))
	if err != nil || ref.Identifier() == "" {
		return false
	}
	// pkg/name checks the path's characters only; Docker refuses "a//b" or
	// "-a", but only once the run has got that far. A tag Docker refuses
	// (one that starts with '.' or '-') is refused here for the same reason
	// (beside a digest, pkg/name keeps no tag to look at).
	for _, c := range strings.Split(ref.Context().RepositoryStr(), "/") {
		if !registryhost.PathComponent(c) {
			return false
		}
	}
	if t, ok := ref.(name.Tag); ok && strings.IndexAny(t.TagStr(), ".-") == 0 {
		return false
	}
	return true
}

// New is the source spec names: auto (an image already here, else kind's
// published one, else an offline build), pull, build, present (only what is
// here), or an image reference. out holds the offline build's work; repoRoot
// is this module's root (the build compiles our own small binaries).
func New(spec, out, repoRoot string, progress io.Writer) (Source, error) {
	if err := CheckSpec(spec); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	return &source{spec: Policy(spec), builder: &nodeimage.Builder{Out: filepath.Join(out, "nodeimage"), RepoRoot: repoRoot, Progress: progress}}, nil
}

type source struct {
	spec    Policy // or an image reference
	builder *nodeimage.Builder
}

func (s *source) NodeImage(ctx context.Context, r release.Release) (Image, error) {
	ref, err := s.ensure(ctx, r)
	if err != nil {
		return Image{}, err
	}
	return Inspect(ctx, ref, r)
}

// Inspect describes ref, an image in the local Docker, as a node image of
// release r: its ID and the patch it runs, which must be of r's minor.
func Inspect(ctx context.Context, ref string, r release.Release) (Image, error) {
	v, err := imageVersion(ctx, ref)
	if err != nil {
		return Image{}, err
	}
	at, err := r.AtPatch(v)
	if err != nil {
		return Image{}, fmt.Errorf("node image %s: %w (it must be a kind node image of Kubernetes %s)", ref, err, r.Minor)
	}
	id, err := imageID(ctx, ref)
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: ref, ID: id, Release: at}, nil
}

// imageVersion is the Kubernetes version a kind node image runs, from its
// /kind/version (kindest/node and the offline build both write it).
func imageVersion(ctx context.Context, image string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--entrypoint", "cat", image, "/kind/version").Output()
	if err != nil {
		return "", fmt.Errorf("reading /kind/version of node image %s: %w", image, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// imageID is the local Docker ID of an image (sha256:...), what a report
// names and what cached bits taken out of it are keyed by.
func imageID(ctx context.Context, image string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Output()
	if err != nil {
		return "", fmt.Errorf("inspecting node image %s: %w", image, err)
	}
	return strings.TrimSpace(string(out)), nil
}
