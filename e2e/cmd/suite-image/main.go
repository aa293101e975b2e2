// SPDX-License-Identifier: Apache-2.0

// Command suite-image builds the image that runs the suite from inside the
// cluster it tests (e2e/suitejob), and writes what runs it there: the Job
// with the ServiceAccount and RBAC it needs (incluster.yaml), and the same
// container as a Sonobuoy plugin definition (sonobuoy-plugin.yaml), each
// carrying make e2e's variables set here. It prints the image's tag and
// archive path, and the platform it was built for (--platform: this
// machine's architecture on Linux unless told; make incluster-e2e reads
// the nodes'). make incluster-e2e does all of it and more in one command.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

func main() {
	out := flag.String("out", "_output/suite-image", "folder for the binaries, the archive and the manifests")
	root := flag.String("source-root", ".", "the repository root")
	ns := flag.String("namespace", suitejob.DefaultNamespace, "namespace of the Job and its ServiceAccount")
	platform := flag.String("platform", image.HostPlatform().String(), "the nodes' platform (os/architecture), which the binaries are compiled for and the image's config names")
	flag.Parse()
	p, err := image.ParsePlatform(*platform)
	if err == nil {
		err = image.CheckPlatform(context.Background(), p)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "suite-image: --platform %s: %v\n", *platform, err)
		os.Exit(2)
	}
	if err := run(*root, *out, *ns, p); err != nil {
		fmt.Fprintln(os.Stderr, "suite-image:", err)
		os.Exit(1)
	}
}

func run(root, out, ns string, p image.Platform) error {
	built, err := suitejob.BuildImage(root, out, p)
	if err != nil {
		return err
	}
	v := suitejob.Values{Image: built.Tag, Namespace: ns, Env: suitejob.Environment(os.Getenv)}
	for file, render := range map[string]func(suitejob.Values) ([]byte, error){"incluster.yaml": suitejob.Job, "sonobuoy-plugin.yaml": suitejob.SonobuoyPlugin} {
		data, err := render(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, file), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Println(built.Tag, built.Archive, built.Platform)
	return nil
}
