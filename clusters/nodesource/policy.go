// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/nodeimage"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Policy says where a node image may come from.
type Policy string

const (
	Auto  Policy = "auto"  // an image with the recipe's tag, else pull kindest/node, else build
	Pull  Policy = "pull"  // kindest/node only
	Build Policy = "build" // offline build only (or its existing tag)
	// Present takes only an image already in the local Docker (ours with the
	// recipe's tag, or kindest/node) and never pulls or builds.
	Present Policy = "present"
)

// ensure returns a node image for release r that exists in the local Docker,
// building it where locate says a build is the way.
func (s *source) ensure(ctx context.Context, r release.Release) (string, error) {
	ref, build, err := s.locate(ctx, r)
	if err != nil || build == nil {
		return ref, err
	}
	if err := nodeimage.CanBuild(); err != nil {
		return "", fmt.Errorf("%v; pass a kind node image of Kubernetes %s with NODE_IMAGE=<image>", err, r.Minor)
	}
	fmt.Fprintf(s.builder.Progress, "node-image: building %s from Go modules and Debian packages\n", build.tag)
	return build.tag, s.builder.Build(ctx, build.recipe, build.tag)
}

// toBuild is an offline build that locate found to be the way: the recipe
// and the tag its node image gets.
type toBuild struct {
	recipe nodeimage.Recipe
	tag    string
}

// locate finds a node image for release r in the local Docker: an explicit
// reference as given (pulled if absent); otherwise our offline build's tag
// if present, kind's published image (pinned by digest) if present or
// pullable; and only then the offline build to make (what to build, the
// whole node image or a switch's bits, and whether this host can, is the
// caller's). The offline builder only builds: this is the one place
// that decides.
func (s *source) locate(ctx context.Context, r release.Release) (string, *toBuild, error) {
	src, b := s.spec, s.builder
	switch src {
	case Auto, Pull, Build, Present:
	default:
		if strings.Contains(string(src), ":") { // an explicit image reference
			if present(ctx, string(src)) {
				return string(src), nil, nil
			}
			return string(src), nil, pull(ctx, string(src))
		}
		return "", nil, fmt.Errorf("unknown node image source %q: use auto, pull, build, present or an image reference", src)
	}
	if src == Pull {
		if r.Published == "" {
			return "", nil, fmt.Errorf("kind %s publishes no node image of Kubernetes %s: use NODE_IMAGE=build (or auto), or an image reference", release.KindVersion, r.Version)
		}
		return r.Published, nil, pull(ctx, r.Published)
	}
	rec, err := b.Recipe(ctx, r)
	if err != nil {
		return "", nil, err
	}
	tag, err := rec.Tag()
	if err != nil {
		return "", nil, err
	}
	if present(ctx, tag) {
		fmt.Fprintf(b.Progress, "node-image: %s is present\n", tag)
		return tag, nil, nil
	}
	if src == Build {
		return "", &toBuild{recipe: rec, tag: tag}, nil
	}
	if r.Published != "" && present(ctx, r.Published) {
		fmt.Fprintf(b.Progress, "node-image: %s is present\n", r.Published)
		return r.Published, nil, nil
	}
	if src == Present {
		return "", nil, fmt.Errorf("no node image for Kubernetes %s is present (neither %s nor %s); make node-image K8S_VERSION=%s makes one", r.Minor, tag, orNone(r.Published), r.Minor)
	}
	if r.Published == "" {
		fmt.Fprintf(b.Progress, "node-image: kind %s publishes no node image of Kubernetes %s\n", release.KindVersion, r.Version)
	} else if err := pull(ctx, r.Published); err == nil {
		return r.Published, nil, nil
	} else {
		fmt.Fprintf(b.Progress, "node-image: %s cannot be pulled: %s\n", r.Published, oneLine(err.Error()))
	}
	return "", &toBuild{recipe: rec, tag: tag}, nil
}

func present(ctx context.Context, image string) bool {
	_, err := imageID(ctx, image)
	return err == nil
}

func pull(ctx context.Context, image string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "pull", image).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker pull %s: %v: %s", image, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "a published image"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
