// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/run"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// The look-ups printImages makes, which its test replaces: the images an
// offline build of a release makes (the release's Kubernetes module, read
// or downloaded), and the bundled driver image's tag (a hash of its
// binaries, so it compiles them, as make testdriver-image does).
var (
	offlineImages = nodesource.OfflineImages
	bundledDriver = func(c run.Config) (string, error) {
		built, err := image.Build(c.Root(), filepath.Join(c.Out(), "testdriver"))
		return built.Tag, err
	}
)

// printImages is make images: every image a run of K8S_VERSIONS with these
// variables pulls, and every one it makes here instead, one a line under
// a # line that says which, each once, for mirroring into a registry the
// nodes reach. For each release: kind's published node image, or the
// offline build's node image and the control-plane images it holds; the
// same of the next release where the upgrade spec runs; then the driver
// and the workload image.
func printImages(ctx context.Context, w, stderr io.Writer, c run.Config) int {
	seen := map[string]bool{}
	group := func(comment string, images ...string) {
		images = slices.DeleteFunc(images, func(i string) bool { return seen[i] })
		if len(images) == 0 {
			return
		}
		fmt.Fprintln(w, "# "+comment)
		for _, i := range images {
			seen[i] = true
			fmt.Fprintln(w, i)
		}
	}
	// node is release r's node image under the source variable's spec
	// (NODE_IMAGE's words, or an image reference).
	node := func(r release.Release, what, variable string) error {
		spec := c.Get(variable)
		switch {
		case !slices.Contains(nodesource.Specs, spec):
			group(fmt.Sprintf("%s: the node image given (pulled where it is not here)", what), spec)
		case r.Published != "" && spec != string(nodesource.Build):
			group(fmt.Sprintf("%s: kind %s's published node image, pulled", what, release.KindVersion), r.Published)
		default:
			tag, held, err := offlineImages(ctx, r, c.Out(), c.Root())
			if err != nil {
				return fmt.Errorf("%s: the offline build's images: %w", what, err)
			}
			why := fmt.Sprintf("kind %s publishes no node image of it", release.KindVersion)
			if r.Published != "" {
				why = variable + "=build"
			}
			group(fmt.Sprintf("%s: %s, so make node-image builds it here offline, nothing pulled; then the images it holds", what, why),
				append([]string{tag}, held...)...)
		}
		return nil
	}
	for _, name := range c.Releases() {
		r, err := release.Get(name)
		if err != nil {
			fmt.Fprintln(stderr, "images:", err)
			return run.ExitRefused
		}
		what := "Kubernetes " + r.Version
		if !c.Existing() {
			if err := node(r, what, "NODE_IMAGE"); err != nil {
				fmt.Fprintln(stderr, "images:", err)
				return 1
			}
		}
		// The upgrade spec's next release, on a cluster the suite makes
		// under the release's defaults (clusters/release's declared skips).
		next, ok := r.Next()
		if ok && !c.Existing() && c.Get("UPGRADE") != "0" && (c.Get("FEATURES") == release.DefaultSet || c.Get("FEATURES") == "") {
			if err := node(next, what+", the upgrade spec's next release "+next.Version, "UPGRADE_NODE_IMAGE"); err != nil {
				fmt.Fprintln(stderr, "images:", err)
				return 1
			}
		}
	}
	driver, workload := c.Get("TESTDRIVER_IMAGE"), c.Get("WORKLOAD_IMAGE")
	own := c.Get("DRIVER") != "" || c.Get("DEVICE_CLASS") != ""
	if driver == "" && (!own || workload == "") {
		tag, err := bundledDriver(c)
		if err != nil {
			fmt.Fprintln(stderr, "images: the bundled driver image:", err)
			return 1
		}
		group("the bundled DRA driver and workload image: built here and loaded into the nodes of a kind cluster, nothing pulled (for a cluster that pulls it: make testdriver-push REGISTRY=host/path, then TESTDRIVER_IMAGE)", tag)
	} else if !own {
		group("the bundled DRA driver and workload image given (TESTDRIVER_IMAGE), pulled by the nodes", driver)
	}
	if own && workload != "" {
		group("the specs' workload image (WORKLOAD_IMAGE), pulled by the nodes", workload)
	}
	if own {
		// A driver of the user's own: its images are its deployment's.
		fmt.Fprintln(w, "# and the images your driver's deployment pulls")
	}
	return 0
}

// printNodeImageTag is make node-image-tag: the tag make node-image (and
// make e2e, where it builds one) gives K8S_VERSION's offline-built node
// image, a hash of its recipe (clusters/nodesource/internal/nodeimage's
// Recipe.Tag: the Kubernetes version, containerd, etcd, CoreDNS and pause,
// the Debian suite and packages, any stand-in, the build's assets),
// alone on stdout. It reads the recipe as the build does (the release's
// Kubernetes module, downloaded where it is not here) and builds nothing:
// the CI workflow's cache key of the image, which changes only where the
// image would.
func printNodeImageTag(ctx context.Context, w, stderr io.Writer, c run.Config) int {
	r, err := release.Get(c.Get("K8S_VERSION"))
	if err != nil {
		fmt.Fprintln(stderr, "node-image-tag:", err)
		return run.ExitRefused
	}
	tag, _, err := offlineImages(ctx, r, c.Out(), c.Root())
	if err != nil {
		fmt.Fprintln(stderr, "node-image-tag: the offline build's recipe:", err)
		return 1
	}
	fmt.Fprintln(w, tag)
	return 0
}
