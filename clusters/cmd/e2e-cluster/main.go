// Command e2e-cluster builds node images and creates, switches and deletes the
// suite's kind clusters. The runner (e2e/run, behind make) and people call
// it; the Ginkgo suites use the same packages from Go.
//
//	e2e-cluster node-image --release 1.35 [--source auto|pull|build|IMAGE]
//	e2e-cluster up --release 1.35 --profile default --name NAME [--kubeconfig FILE] [--registry localhost:5001]
//	e2e-cluster down --name NAME
//	e2e-cluster toggle --name NAME --release 1.35 --component kube-controller-manager --admin-access=false
//	e2e-cluster export-logs --name NAME --dir DIR
//	e2e-cluster load --name NAME --archive FILE
//	e2e-cluster profiles --release 1.36
//	e2e-cluster upgrade-bits --release 1.35 [--labels FILTER] [--plan] [--status FILE]   (the next release's bits for the upgrade spec, or "none")
//	e2e-cluster switch-release --name NAME --release 1.35 --to 1.36
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// usageError marks bad input: one line, exit 2.
type usageError struct{ error }

const usage = `usage: e2e-cluster COMMAND [flags]

Builds node images and creates, switches and deletes the suite's kind clusters.

  node-image      --release 1.35 [--source auto|pull|build|present|IMAGE]   get or build the release's node image
  upgrade-bits    --release 1.35 [--labels FILTER] [--plan] [--status FILE]
                  the next release's kubelet and control-plane images for the upgrade spec
                  (--plan: only say which release, or "none")
  up              --release 1.35 --profile default --name NAME [--kubeconfig FILE] [--registry localhost:5001]
  down            --name NAME
  toggle          --name NAME --release 1.35 --component kube-controller-manager --admin-access=false
  switch-release  --name NAME --release 1.35 --to 1.36
  export-logs     --name NAME --dir DIR
  load            --name NAME --archive FILE   an image archive into every node
  profiles        --release 1.36

"e2e-cluster COMMAND -h" lists a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:])
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "e2e-cluster:", err)
	var u usageError
	if errors.As(err, &u) {
		os.Exit(2)
	}
	os.Exit(1)
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("missing command: node-image, up, down, toggle, export-logs, load, profiles, upgrade-bits or switch-release (e2e-cluster --help says more)")}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(usage)
		return nil
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	relName := fs.String("release", envOr("K8S_VERSION", release.Default), "Kubernetes release (minor or pinned patch)")
	profName := fs.String("profile", envOr("PROFILE", "default"), "gate profile")
	features := fs.String("features", envOr("FEATURES", release.DefaultSet), "DRA feature set of the cluster (up): "+release.DefaultSet+" or one the release lists")
	name := fs.String("name", envOr("CLUSTER_NAME", kindcluster.DefaultName), "kind cluster name")
	source := fs.String("source", envOr("NODE_IMAGE", "auto"), "node image source: "+strings.Join(nodesource.Specs, ", ")+" or an image reference")
	kubeconfig := fs.String("kubeconfig", "", "where to write the cluster's kubeconfig")
	out := fs.String("out", envOr("OUTPUT_DIR", "_output"), "output folder")
	component := fs.String("component", "", "component to switch (toggle)")
	adminAccess := fs.Bool("admin-access", true, "DRAAdminAccess value to switch to (toggle)")
	dir := fs.String("dir", "_artifacts/logs", "where to export logs (export-logs)")
	labels := fs.String("labels", "", "Ginkgo label filter of the run (upgrade-bits: \"none\" when it excludes the upgrade spec)")
	toName := fs.String("to", "", "release to switch the cluster to in place (switch-release)")
	archive := fs.String("archive", "", "docker-save image archive to load into every node (load)")
	plan := fs.Bool("plan", false, "upgrade-bits: say only which release the run needs (or \"none\"), get nothing")
	status := fs.String("status", "", "upgrade-bits: file to write the bits, or why there are none, into (what the suite waits for)")
	registry := fs.String("registry", "", "up: a registry on this machine or a private address (such as localhost:5001) whose images the nodes pull over plain HTTP")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // the flag package printed the command's flags
		}
		return usageError{err}
	}
	rel, err := release.Resolve(*relName, *features)
	if err != nil {
		return usageError{err}
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	images, err := nodesource.New(*source, *out, root, os.Stdout)
	if err != nil {
		return usageError{fmt.Errorf("--source: %w", err)}
	}

	switch cmd {
	case "profiles":
		for _, n := range profile.RunnableOn(rel) {
			p, _ := profile.Get(n)
			fmt.Printf("%-24s %s\n", n, p.Description)
		}
		return nil
	case "features":
		for _, n := range rel.SetNames() {
			s, _ := rel.Set(n)
			fmt.Printf("%-10s %s\n", n, s.Description)
		}
		return nil
	case "node-image":
		img, err := images.NodeImage(ctx, rel)
		if err != nil {
			return err
		}
		fmt.Println(img.Ref)
		return nil
	case "up":
		prof, err := profile.Get(*profName)
		if err != nil {
			return usageError{err}
		}
		if err := prof.CheckRunnable(rel); err != nil {
			return usageError{err}
		}
		// Refuse a taken name before any slow image work.
		if err := kindcluster.CheckNameFree(*name); err != nil {
			return usageError{err}
		}
		img, err := images.NodeImage(ctx, rel)
		if err != nil {
			return err
		}
		rel = img.Release
		var registries []string
		if *registry != "" {
			host, err := plainHTTPRegistry(*registry)
			if err != nil {
				return usageError{err}
			}
			registries = append(registries, host)
		}
		c, err := kindcluster.Create(ctx, kindcluster.Options{Name: *name, Release: rel, Profile: prof, Image: img.Ref, KubeconfigPath: *kubeconfig, Progress: os.Stdout,
			PlainHTTPRegistries: registries})
		if err != nil {
			return err
		}
		fmt.Printf("cluster %s is up (Kubernetes %s, profile %s, DRA feature set %s); kubeconfig: %s\n", c.Name, rel.Version, prof.Name, rel.DefaultFeatures().Name, c.KubeconfigPath)
		return nil
	case "down":
		return kindcluster.Delete(*name)
	case "upgrade-bits":
		next, ok := rel.Next()
		wanted, err := upgradeSelected(*labels)
		if err != nil {
			return usageError{err}
		}
		// Under a DRA feature set the upgrade spec is a declared skip
		// (another release's set names other gates): no bits for it.
		if !ok || !wanted || rel.FeatureSetName != "" {
			fmt.Println("none")
			return nil
		}
		if *plan {
			fmt.Println(next.Minor)
			return nil
		}
		if *status != "" {
			// What the suite sees until the bits or an error are written.
			if err := nodesource.WriteBitsPending(*status, os.Getpid()); err != nil {
				return err
			}
		}
		bits, err := images.ReleaseBits(ctx, next, filepath.Join(*out, "release-bits", next.Minor))
		if *status != "" {
			if werr := nodesource.WriteBitsStatus(*status, bits, err); werr != nil {
				return errors.Join(err, werr)
			}
		}
		if err != nil {
			return err
		}
		fmt.Println(bits.Image)
		return nil
	case "switch-release":
		to, err := release.Get(*toName)
		if err != nil {
			return usageError{fmt.Errorf("--to: %w", err)}
		}
		c, err := kindcluster.Attach(*name, rel, *kubeconfig)
		if err != nil {
			return err
		}
		img, err := images.NodeImage(ctx, to)
		if err != nil {
			return err
		}
		bits, err := nodesource.ExtractReleaseBits(ctx, img, filepath.Join(*out, "release-bits", to.Minor))
		if err != nil {
			return err
		}
		c.Progress = os.Stdout
		steps, err := c.SwitchRelease(ctx, bits)
		if err != nil {
			return err
		}
		fmt.Printf("cluster %s runs Kubernetes %s (%v)\n", c.Name, to.Version, steps)
		return nil
	case "toggle":
		c, err := kindcluster.Attach(*name, rel, *kubeconfig)
		if err != nil {
			return err
		}
		c.Progress = os.Stdout
		took, err := c.SetAdminAccess(ctx, profile.Component(*component), *adminAccess)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s=%t in force after %s (%s)\n", *component, release.Gate, *adminAccess, took.Round(100_000_000), c.RestartedBy(profile.Component(*component)))
		return nil
	case "export-logs":
		return kindcluster.ExportLogs(*name, *dir)
	case "load":
		// An image archive into every node, as the suite loads its driver's.
		if *archive == "" {
			return usageError{fmt.Errorf("load: give --archive")}
		}
		c, err := kindcluster.Attach(*name, rel, *kubeconfig)
		if err != nil {
			return err
		}
		return c.LoadImageArchive(*archive)
	}
	return usageError{fmt.Errorf("unknown command %q: use %s", cmd, strings.Join([]string{"node-image", "up", "down", "toggle", "export-logs", "load", "profiles", "features", "upgrade-bits", "switch-release"}, ", "))}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// upgradeLabels are the labels of the in-place upgrade spec (Serial and
// Disruptive from the e2e framework's decorators).
var upgradeLabels = []string{"Serial", "Disruptive", "upgrade"}

// upgradeSelected says whether a Ginkgo label filter runs the upgrade spec,
// so that a run that does not need the next release never builds its image.
func upgradeSelected(filter string) (bool, error) {
	if strings.TrimSpace(filter) == "" {
		return true, nil
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return false, fmt.Errorf("label filter %q: %w", filter, err)
	}
	return match(upgradeLabels), nil
}

// plainHTTPRegistry is the host of up's --registry (a host, or a host and
// the path REGISTRY gives the pusher: "localhost:5001", "10.0.0.5:5000/dra"),
// read as the pusher reads REGISTRY, when the nodes are to reach it over
// plain HTTP; any other registry they reach over HTTPS as they are, and
// needs no flag.
func plainHTTPRegistry(registry string) (string, error) {
	host := registryhost.OfPrefix(registry)
	switch {
	case host == "":
		return "", fmt.Errorf("--registry %s: not a registry host (such as localhost:5001), with or without a path", registry)
	case !registryhost.PlainHTTP(host):
		return "", fmt.Errorf("--registry %s: only a registry on a loopback or private address is reached over plain HTTP; the nodes pull from any other over HTTPS as they are", registry)
	}
	return host, nil
}
