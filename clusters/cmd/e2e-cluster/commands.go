// SPDX-License-Identifier: Apache-2.0

package main

// Each command's flags and what runs it (main.go's table).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

func nodeImageCmd(fs *flag.FlagSet) func(context.Context) error {
	relName := releaseFlag(fs)
	source, _ := sourceFlags(fs)
	refFile := refFileFlag(fs)
	return func(ctx context.Context) error {
		rel, err := releaseOf(*relName)
		if err != nil {
			return err
		}
		images, err := source()
		if err != nil {
			return err
		}
		img, err := images.NodeImage(ctx, rel)
		if err != nil {
			return err
		}
		return writeRef(*refFile, img.Ref)
	}
}

// upgradeBitsCmd gets the next release's bits for the in-place upgrade
// spec. Whether that spec runs (filters, feature set, release) is the
// runner's decision (e2e/resolved.UpgradeFor), which starts this only
// where it does; a release with no next one is bad input.
func upgradeBitsCmd(fs *flag.FlagSet) func(context.Context) error {
	// --features: the runner passes the run's set; a set the release does
	// not list is refused, and the bits are the same under every set.
	rel := releaseFlags(fs)
	source, out := sourceFlags(fs)
	status := fs.String("status", "", "file to write the bits, or why there are none, into (what the suite waits for)")
	refFile := refFileFlag(fs)
	return func(ctx context.Context) error {
		rel, err := rel()
		if err != nil {
			return err
		}
		next, ok := rel.Next()
		if !ok {
			return usageError{fmt.Errorf("upgrade-bits: Kubernetes %s is the newest release: there is no next release to upgrade to", rel.Minor)}
		}
		images, err := source()
		if err != nil {
			return err
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
		return writeRef(*refFile, bits.Image)
	}
}

func upCmd(fs *flag.FlagSet) func(context.Context) error {
	resolve := releaseFlags(fs)
	profName := fs.String("profile", envOr("PROFILE", "default"), "gate profile")
	name := nameFlag(fs)
	source, _ := sourceFlags(fs)
	kubeconfig := kubeconfigFlag(fs)
	registry := fs.String("registry", "", "a registry on this machine or a private address (such as localhost:5001) whose images the nodes pull over plain HTTP")
	return func(ctx context.Context) error {
		rel, err := resolve()
		if err != nil {
			return err
		}
		images, err := source()
		if err != nil {
			return err
		}
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
	}
}

func downCmd(fs *flag.FlagSet) func(context.Context) error {
	name := nameFlag(fs)
	return func(context.Context) error { return kindcluster.Delete(*name) }
}

// attachFlags are a cluster's name, the release and feature set it runs
// (--release, --features) and its kubeconfig, for a command that works on
// a cluster that is up.
func attachFlags(fs *flag.FlagSet) func() (*kindcluster.Cluster, error) {
	name := nameFlag(fs)
	resolve := releaseFlags(fs)
	kubeconfig := kubeconfigFlag(fs)
	return func() (*kindcluster.Cluster, error) {
		rel, err := resolve()
		if err != nil {
			return nil, err
		}
		return kindcluster.Attach(*name, rel, *kubeconfig)
	}
}

func switchReleaseCmd(fs *flag.FlagSet) func(context.Context) error {
	attach := attachFlags(fs)
	toName := fs.String("to", "", "release to switch the cluster to in place")
	source, out := sourceFlags(fs)
	return func(ctx context.Context) error {
		to, err := release.Get(*toName)
		if err != nil {
			return usageError{fmt.Errorf("--to: %w", err)}
		}
		images, err := source()
		if err != nil {
			return err
		}
		c, err := attach()
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
	}
}

func toggleCmd(fs *flag.FlagSet) func(context.Context) error {
	attach := attachFlags(fs)
	component := fs.String("component", "", "component to switch")
	adminAccess := fs.Bool("admin-access", true, "DRAAdminAccess value to switch to")
	return func(ctx context.Context) error {
		c, err := attach()
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
	}
}

func exportLogsCmd(fs *flag.FlagSet) func(context.Context) error {
	name := nameFlag(fs)
	dir := fs.String("dir", "_artifacts/logs", "where to export logs")
	return func(context.Context) error { return kindcluster.ExportLogs(*name, *dir) }
}

// loadCmd loads an image archive into every node, as the suite loads its
// driver's.
func loadCmd(fs *flag.FlagSet) func(context.Context) error {
	attach := attachFlags(fs)
	archive := fs.String("archive", "", "docker-save image archive to load into every node")
	return func(context.Context) error {
		if *archive == "" {
			return usageError{fmt.Errorf("load: give --archive")}
		}
		c, err := attach()
		if err != nil {
			return err
		}
		return c.LoadImageArchive(*archive)
	}
}

func profilesCmd(fs *flag.FlagSet) func(context.Context) error {
	relName := releaseFlag(fs)
	return func(context.Context) error {
		rel, err := releaseOf(*relName)
		if err != nil {
			return err
		}
		for _, n := range profile.RunnableOn(rel) {
			p, _ := profile.Get(n)
			fmt.Printf("%-24s %s\n", n, p.Description)
		}
		return nil
	}
}

func featuresCmd(fs *flag.FlagSet) func(context.Context) error {
	relName := releaseFlag(fs)
	return func(context.Context) error {
		rel, err := releaseOf(*relName)
		if err != nil {
			return err
		}
		for _, n := range rel.SetNames() {
			s, _ := rel.Set(n)
			fmt.Printf("%-10s %s\n", n, s.Description)
		}
		return nil
	}
}
