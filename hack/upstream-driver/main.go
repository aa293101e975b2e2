// SPDX-License-Identifier: Apache-2.0

// Command upstream-driver packages a DRA driver this project did not write,
// upstream's own test driver (k8s.io/kubernetes/test/e2e/dra/test-driver, at
// the k8s.io/kubernetes version go.mod requires), so that the suite can be
// run against it as a vendor's driver (hack/vendor-e2e.sh). It writes a
// docker-save image archive with the one static binary and the manifests
// that deploy it as a kubelet plugin with a DeviceClass, and prints
// "<tag> <archive> <workload tag> <workload archive>": the driver's image and
// a workload image with a shell, as a vendor's would have.
package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

const (
	pkg        = "k8s.io/kubernetes/test/e2e/dra/test-driver"
	repository = "kind-e2e/upstream-dra-test-driver"
	binary     = "dra-test-driver"
)

// The values the manifests and hack/vendor-e2e.sh share.
type values struct {
	Image       string
	Namespace   string
	DaemonSet   string
	Driver      string // the plugin's --drivername default (app/server.go)
	DeviceClass string
	Devices     int
}

//go:embed deploy.yaml.tmpl
var manifests string

func main() {
	out := flag.String("out", "_output/upstream-driver", "folder for the binary and the image archive")
	root := flag.String("source-root", ".", "the repository root, whose go.mod pins k8s.io/kubernetes")
	manifest := flag.String("manifest", "", "where to write the manifests (default <out>/deploy.yaml)")
	flag.Parse()
	if *manifest == "" {
		*manifest = filepath.Join(*out, "deploy.yaml")
	}
	tag, archive, err := build(*root, *out)
	if err == nil {
		err = writeManifest(*manifest, values{Image: tag, Namespace: "upstream-dra-driver", DaemonSet: "dra-test-driver",
			Driver: "test-driver.cdi.k8s.io", DeviceClass: "upstream-test-driver", Devices: 4})
	}
	var wtag, warchive string
	if err == nil {
		wtag, warchive, err = workload(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream-driver:", err)
		os.Exit(1)
	}
	fmt.Println(tag, archive, wtag, warchive)
}

// workload is a vendor's kind of workload image, for WORKLOAD_IMAGE and
// ADMIN_CHECK: a shell and the usual tools (Debian's static busybox, one
// binary under each name it answers to), which the suite's own workload
// image, two static binaries and nothing else, does not have.
func workload(outDir string) (tag, archive string, err error) {
	dir, err := filepath.Abs(filepath.Join(outDir, "busybox"))
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	// apt-get download fetches the package alone, installing nothing.
	get := exec.Command("apt-get", "download", "-q", "busybox-static")
	get.Dir = dir
	if msg, err := get.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("apt-get download busybox-static: %v\n%s", err, msg)
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "busybox-static_*.deb"))
	if len(debs) == 0 {
		return "", "", fmt.Errorf("apt-get download busybox-static wrote no package in %s", dir)
	}
	root := filepath.Join(dir, "root")
	if msg, err := exec.Command("dpkg-deb", "-x", debs[len(debs)-1], root).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("unpacking %s: %v\n%s", debs[len(debs)-1], err, msg)
	}
	bin := filepath.Join(root, "bin", "busybox")
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", "", err
	}
	var files []nodesource.ArchiveFile
	for _, name := range []string{"busybox", "sh", "sleep", "env", "grep", "cat", "ls", "true", "false"} {
		files = append(files, nodesource.ArchiveFile{Path: "/bin/" + name, Mode: 0o755, Source: bin})
	}
	sum := sha256.Sum256(data)
	tag = "kind-e2e/vendor-workload:" + hex.EncodeToString(sum[:])[:12]
	archive = filepath.Join(outDir, "vendor-workload-image.tar")
	img := nodesource.ArchiveImage{Tags: []string{tag}, Entrypoint: []string{"/bin/sh"}, Files: files}
	return tag, archive, img.WriteFile(archive)
}

// build compiles the driver as the suite's own is (static, so the image
// needs no base) and writes its archive. go.mod pins the driver as a tool,
// so it builds at exactly the k8s.io/kubernetes version the suite reads its
// promises from.
func build(root, outDir string) (tag, archive string, err error) {
	built, err := image.GoImage{
		Repository: repository, Archive: "upstream-dra-test-driver-image.tar", Entrypoint: "/" + binary,
		Binaries: []image.Binary{{Name: binary, Package: pkg}},
	}.Build(root, outDir)
	return built.Tag, built.Archive, err
}

func writeManifest(name string, v values) error {
	t, err := template.New("deploy").Option("missingkey=error").Parse(manifests)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := t.Execute(f, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
