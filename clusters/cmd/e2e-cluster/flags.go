// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// The flags several commands share, each with the variable it defaults
// to where make's variables name it.

func releaseFlag(fs *flag.FlagSet) *string {
	return fs.String("release", envOr("K8S_VERSION", release.Default), "Kubernetes release (minor or pinned patch)")
}

func nameFlag(fs *flag.FlagSet) *string {
	return fs.String("name", envOr("CLUSTER_NAME", kindcluster.DefaultName), "kind cluster name")
}

func kubeconfigFlag(fs *flag.FlagSet) *string {
	return fs.String("kubeconfig", "", "where to write the cluster's kubeconfig")
}

// releaseOf is --release, resolved.
func releaseOf(name string) (release.Release, error) {
	rel, err := release.Get(name)
	if err != nil {
		return rel, usageError{err}
	}
	return rel, nil
}

// releaseFlags are --release and the DRA feature set it runs with
// (--features), for a command that makes or works on a cluster of that
// set; what they resolve to is the release as that cluster runs it.
func releaseFlags(fs *flag.FlagSet) func() (release.Release, error) {
	relName := releaseFlag(fs)
	features := fs.String("features", envOr("FEATURES", release.DefaultSet), "DRA feature set of the cluster: "+release.DefaultSet+" or one the release lists")
	return func() (release.Release, error) {
		rel, err := release.Resolve(*relName, *features)
		if err != nil {
			return rel, usageError{err}
		}
		return rel, nil
	}
}

// sourceFlags are where node images come from (--source) and the output
// folder their builds work in (--out); what they give is the source.
func sourceFlags(fs *flag.FlagSet) (source func() (nodesource.Source, error), out *string) {
	spec := fs.String("source", envOr("NODE_IMAGE", "auto"), "node image source: "+strings.Join(nodesource.Specs, ", ")+" or an image reference")
	out = fs.String("out", envOr("OUTPUT_DIR", "_output"), "output folder")
	return func() (nodesource.Source, error) {
		root, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		images, err := nodesource.New(*spec, *out, root, os.Stdout)
		if err != nil {
			return nil, usageError{fmt.Errorf("--source: %w", err)}
		}
		return images, nil
	}, out
}

// refFileFlag is where a command that gets an image writes its reference,
// for a program: stdout is what people see, its last line no answer.
func refFileFlag(fs *flag.FlagSet) *string {
	return fs.String("ref-file", "", "file to write the image's reference into (for programs; the runner reads it)")
}

// writeRef says ref on stdout and, where asked, in file.
func writeRef(file, ref string) error {
	fmt.Println(ref)
	if file == "" {
		return nil
	}
	return os.WriteFile(file, []byte(ref+"\n"), 0o644)
}
