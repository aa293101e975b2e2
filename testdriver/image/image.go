// SPDX-License-Identifier: Apache-2.0

// Package image builds the test driver's container image: one layer holding
// the static testdriver and workload binaries, written from Go with no base
// image. Its tag is a hash of the binaries, so a source change gives a new tag
// and an unchanged one rebuilds nothing in the cluster.
//
// The binaries are compiled for one platform (GOOS, GOARCH: this machine's
// architecture on Linux unless told, or the nodes' that make incluster-e2e
// reads from the cluster), and the image's config names that platform: a
// runtime believes the config and execs the binaries, so a config that says
// amd64 over binaries of another machine dies with "exec format error" only
// once a pod starts.
package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
)

// Repository is the image name without tag.
const Repository = "kind-e2e/testdriver"

// Built is a written image archive.
type Built struct {
	Tag      string // e.g. kind-e2e/testdriver:3f2a...
	Archive  string // docker-save archive path
	Platform Platform
}

// Build compiles both binaries from repoRoot into outDir and writes the
// archive, for HostPlatform.
func Build(repoRoot, outDir string) (Built, error) {
	return BuildContext(context.Background(), repoRoot, outDir)
}

// BuildContext is Build, its compiles killed when ctx ends.
func BuildContext(ctx context.Context, repoRoot, outDir string) (Built, error) {
	return Driver.BuildContext(ctx, repoRoot, outDir)
}

// Driver is the bundled driver's image: the driver and the workload its
// specs' pods run.
var Driver = GoImage{
	Repository: Repository, Archive: "testdriver-image.tar", Entrypoint: "/testdriver",
	Binaries: []Binary{{Name: "testdriver", Package: "./testdriver/cmd/testdriver"}, {Name: "workload", Package: "./testdriver/cmd/workload"}},
}

// GoImage is an image of static Go binaries and nothing else, tagged with
// their hash: the bundled driver's, the suite's own (e2e/cmd/suite-image)
// and upstream's test driver's (hack/upstream-driver) are built the same way.
type GoImage struct {
	Repository string   // the tag's repository: kind-e2e/testdriver
	Archive    string   // the archive's file name in the output folder
	Entrypoint string   // a binary's path in the image: /testdriver
	Env        []string // the image's environment (default PATH only)
	Binaries   []Binary
	// Platform is what the binaries are compiled for and the config
	// names; the zero value is HostPlatform.
	Platform Platform
}

// Binary is one Go package compiled into the image at /Name.
type Binary struct {
	Name, Package string
	// Test compiles the package's tests (go test -c) instead.
	Test bool
	// Tags are the build tags the package needs (the suite's entry: e2e).
	Tags []string
}

// Build compiles the binaries from repoRoot into outDir and writes the
// archive there.
func (g GoImage) Build(repoRoot, outDir string) (Built, error) {
	return g.BuildContext(context.Background(), repoRoot, outDir)
}

// BuildContext is Build, its compiles killed when ctx ends. Before it
// returns, the archive is read back as a runtime reads it (Inspect): its
// config must name the platform and every binary must be an ELF of that
// platform's machine, so a compile that went elsewhere (a GOARCH in
// GOFLAGS' way, a toolchain wrapper) fails here, not in a pod.
func (g GoImage) BuildContext(ctx context.Context, repoRoot, outDir string) (Built, error) {
	p := g.Platform
	if p == (Platform{}) {
		p = HostPlatform()
	}
	outDir, err := filepath.Abs(outDir)
	if err != nil {
		return Built{}, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Built{}, err
	}
	h := sha256.New()
	var files []nodesource.ArchiveFile
	for _, b := range g.Binaries {
		out := filepath.Join(outDir, b.Name)
		args := []string{"build"}
		if b.Test {
			args = []string{"test", "-c"}
		}
		if len(b.Tags) > 0 {
			args = append(args, "-tags", strings.Join(b.Tags, ","))
		}
		// The project's flags come with gobuild.Environ, in GOFLAGS.
		args = append(args, "-ldflags", "-s -w", "-o", out, b.Package)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = repoRoot
		// Cancelled, the go command is killed but its compiles are not: their
		// output is not waited for past that.
		cmd.WaitDelay = 5 * time.Second
		cmd.Env = append(gobuild.Environ(os.Environ()), "GOOS="+p.OS, "GOARCH="+p.Arch)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return Built{}, fmt.Errorf("building %s: %v\n%s", b.Package, err, msg)
		}
		f, err := os.Open(out)
		if err != nil {
			return Built{}, err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return Built{}, err
		}
		files = append(files, nodesource.ArchiveFile{Path: "/" + b.Name, Mode: 0o755, Source: out})
	}
	tag := g.Repository + ":" + hex.EncodeToString(h.Sum(nil))[:12]
	archive := filepath.Join(outDir, g.Archive)
	img := nodesource.ArchiveImage{Tags: []string{tag}, Files: files, Entrypoint: []string{g.Entrypoint}, Env: g.Env,
		OS: p.OS, Architecture: p.Arch}
	if err := img.WriteFile(archive); err != nil {
		return Built{}, err
	}
	built := Built{Tag: tag, Archive: archive, Platform: p}
	contents, err := Inspect(archive, tag)
	if err != nil {
		return Built{}, err
	}
	if err := contents.Matches(p); err != nil {
		return Built{}, fmt.Errorf("the image %s built for %s: %w", tag, p, err)
	}
	return built, nil
}

// ForPlatforms builds the image once per platform, each in a folder of its
// own under outDir (linux-arm64), in the order given.
func (g GoImage) ForPlatforms(ctx context.Context, repoRoot, outDir string, platforms []Platform) ([]Built, error) {
	var out []Built
	for _, p := range platforms {
		g.Platform = p
		b, err := g.BuildContext(ctx, repoRoot, filepath.Join(outDir, p.dir()))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// IndexTag is the tag of the images of several platforms together: one
// image's own, and for several the repository with a hash of their tags,
// so that a change of any platform's binaries gives a new tag.
func IndexTag(images []Built) string {
	if len(images) == 1 {
		return images[0].Tag
	}
	h := sha256.New()
	var repo string
	for _, b := range images {
		repo = b.Tag[:strings.LastIndex(b.Tag, ":")]
		fmt.Fprintln(h, b.Platform, b.Tag)
	}
	return repo + ":" + hex.EncodeToString(h.Sum(nil))[:12]
}
