// Package nodesource is where the images a run boots come from, and the one
// part of clusters/ that knows whether this host can pull: kind's published,
// digest-pinned kindest/node images where a registry answers, or images this
// project builds from Go modules and Debian packages where none does
// (nodeimage, with the capability shim and the image-archive writer it needs
// beside it, under this folder). Cluster code, e2e/testenv, the upgrade spec
// and the commands reach it only through Source, Image and ReleaseBits, so
// they read the same whichever way an image was got.
package nodesource

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/nodeimage"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Source gives a release's node image, present in the local Docker.
type Source interface {
	NodeImage(ctx context.Context, r release.Release) (Image, error)
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
var Specs = []string{string(nodeimage.Auto), string(nodeimage.Pull), string(nodeimage.Build), string(nodeimage.Present)}

// imageRef is the shape of an image reference: [registry[:port]/]path[:tag][@sha256:digest].
var imageRef = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)

// CheckSpec says why spec is neither a source word nor an image reference.
func CheckSpec(spec string) error {
	for _, s := range Specs {
		if spec == s {
			return nil
		}
	}
	if strings.Contains(spec, ":") && imageRef.MatchString(spec) {
		return nil
	}
	return fmt.Errorf("%q is neither a source (%s) nor an image reference such as kindest/node:v1.35.0", spec, strings.Join(Specs, ", "))
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
	return &source{spec: nodeimage.Source(spec), builder: &nodeimage.Builder{Out: filepath.Join(out, "nodeimage"), RepoRoot: repoRoot, Progress: progress}}, nil
}

type source struct {
	spec    nodeimage.Source
	builder *nodeimage.Builder
}

func (s *source) NodeImage(ctx context.Context, r release.Release) (Image, error) {
	ref, err := s.builder.Ensure(ctx, r, s.spec)
	if err != nil {
		return Image{}, err
	}
	return Inspect(ctx, ref, r)
}

// Inspect describes ref, an image in the local Docker, as a node image of
// release r: its ID and the patch it runs, which must be of r's minor.
func Inspect(ctx context.Context, ref string, r release.Release) (Image, error) {
	v, err := nodeimage.ImageVersion(ctx, ref)
	if err != nil {
		return Image{}, err
	}
	at, err := r.AtPatch(v)
	if err != nil {
		return Image{}, fmt.Errorf("node image %s: %w (it must be a kind node image of Kubernetes %s)", ref, err, r.Minor)
	}
	id, err := nodeimage.ImageID(ctx, ref)
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: ref, ID: id, Release: at}, nil
}
