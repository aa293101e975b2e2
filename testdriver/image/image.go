// Package image builds the test driver's container image: one layer holding
// the static testdriver and workload binaries, written from Go with no base
// image. Its tag is a hash of the binaries, so a source change gives a new tag
// and an unchanged one rebuilds nothing in the cluster.
package image

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/imagearchive"
)

// Repository is the image name without tag.
const Repository = "kind-e2e/testdriver"

// Built is a written image archive.
type Built struct {
	Tag     string // e.g. kind-e2e/testdriver:3f2a...
	Archive string // docker-save archive path
}

// Build compiles both binaries from repoRoot into outDir and writes the archive.
func Build(repoRoot, outDir string) (Built, error) {
	outDir, err := filepath.Abs(outDir)
	if err != nil {
		return Built{}, err
	}
	bins := map[string]string{"testdriver": "./testdriver/cmd/testdriver", "workload": "./testdriver/cmd/workload"}
	h := sha256.New()
	var files []imagearchive.File
	for _, name := range []string{"testdriver", "workload"} {
		out := filepath.Join(outDir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, bins[name])
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return Built{}, fmt.Errorf("building %s: %v\n%s", name, err, msg)
		}
		f, err := os.Open(out)
		if err != nil {
			return Built{}, err
		}
		io.Copy(h, f)
		f.Close()
		files = append(files, imagearchive.File{Path: "/" + name, Mode: 0o755, Source: out})
	}
	tag := Repository + ":" + hex.EncodeToString(h.Sum(nil))[:12]
	archive := filepath.Join(outDir, "testdriver-image.tar")
	img := imagearchive.Image{Tags: []string{tag}, Files: files, Entrypoint: []string{"/testdriver"}}
	return Built{Tag: tag, Archive: archive}, img.WriteFile(archive)
}
