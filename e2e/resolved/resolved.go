// SPDX-License-Identifier: Apache-2.0

// Package resolved is one release's run, resolved once and written into
// that release's artifacts (run.json) before anything reads it: the
// runner (e2e/run) writes it per release, column and class; the in-cluster
// entry (e2e/cmd/incluster) writes it from the Job's variables; the suite,
// the sign-off and bench read it. Nothing that reads it resolves a release
// string, a default or a decision again: "does the upgrade spec run" is
// UpgradeFor's answer, written here and read everywhere else.
//
// It is a leaf: the release table and the standard library only, so the
// suite and its image link no runner.
package resolved

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Schema is run.json's version: a reader refuses another, since a field
// it would miss could change what a run checks.
const Schema = 1

// FileName is the resolved run's file in a release's artifacts folder.
const FileName = "run.json"

// Run is one release's run as every process reads it.
type Run struct {
	Schema int `json:"schema"`
	// Given is K8S_VERSION as the user gave it (a minor or a pinned
	// patch): an existing cluster must run that (a patch only where one
	// was given), and refusals quote it.
	Given string `json:"given" variable:"K8S_VERSION"`
	// Release is the release table's row the run checks: its patch
	// ("1.35.4"). A cluster booted from another patch's image (kind's
	// published one) says so in the report; the table's row stays this.
	Release string `json:"release"`
	// Profile is the gate profile of a cluster the suite makes.
	Profile string `json:"profile" variable:"PROFILE"`
	// Features is the DRA feature set (release.DefaultSet: "defaults");
	// which allocator kube-scheduler uses under it is the suite's to read
	// from the cluster (Env.Allocator), not a value resolved here.
	Features string  `json:"features" variable:"FEATURES"`
	Cluster  Cluster `json:"cluster"`
	Driver   Driver  `json:"driver"`
	Filters  Filters `json:"filters"`
	Upgrade  Upgrade `json:"upgrade"`
	Layout   Layout  `json:"layout"`
}

// Cluster is the cluster the run goes against.
type Cluster struct {
	Name string `json:"name" variable:"CLUSTER_NAME"`
	// Kubeconfig is an existing cluster's kubeconfig (absolute), Context
	// its context ("" its current one); both empty where the suite makes
	// the cluster.
	Kubeconfig string `json:"kubeconfig,omitempty" variable:"KUBECONFIG"`
	Context    string `json:"context,omitempty" variable:"KUBECONTEXT"`
	// NodeImage is the node image a cluster the suite makes boots from
	// (a reference the runner got), or its source ("auto", ...) where
	// nothing got it before the suite.
	NodeImage string `json:"nodeImage,omitempty" variable:"NODE_IMAGE"`
	// Keep keeps the cluster after the run (KEEP_CLUSTER=1).
	Keep bool `json:"keep,omitempty" variable:"KEEP_CLUSTER"`
}

// Existing says whether the run goes against a cluster it did not make.
func (c Cluster) Existing() bool { return c.Kubeconfig != "" }

// Driver is whose devices the specs claim.
type Driver struct {
	// Image is a pushed test driver image the nodes pull
	// (TESTDRIVER_IMAGE); Archive and Tag an image archive built for the
	// run and loaded into the nodes. All empty: the suite builds it.
	Image   string `json:"image,omitempty" variable:"TESTDRIVER_IMAGE"`
	Archive string `json:"archive,omitempty"`
	Tag     string `json:"tag,omitempty"`
	// Vendor is a driver of the user's own (DRIVER and its class), nil
	// for the bundled one.
	Vendor *Vendor `json:"vendor,omitempty"`
}

// Vendor is the run's driver of the user's own, the zero Vendor (no
// name) for the bundled one: readers take its fields without a nil check
// of their own.
func (r Run) Vendor() Vendor {
	if r.Driver.Vendor == nil {
		return Vendor{}
	}
	return *r.Driver.Vendor
}

// Vendor is a DRA driver of the user's own on an existing cluster.
type Vendor struct {
	Name          string `json:"name" variable:"DRIVER"`
	DeviceClass   string `json:"deviceClass" variable:"DEVICE_CLASS"`
	AdminCheck    string `json:"adminCheck,omitempty" variable:"ADMIN_CHECK"`
	WorkloadImage string `json:"workloadImage,omitempty" variable:"WORKLOAD_IMAGE"`
	Namespace     string `json:"namespace,omitempty" variable:"DRIVER_NAMESPACE"`
}

// Filters are the run's Ginkgo filters, as given.
type Filters struct {
	Labels string `json:"labels,omitempty" variable:"LABELS"`
	Focus  string `json:"focus,omitempty" variable:"FOCUS"`
	Skip   string `json:"skip,omitempty" variable:"SKIP"`
}

// Upgrade is whether the in-place upgrade spec runs, decided once
// (UpgradeFor).
type Upgrade struct {
	// Runs: the spec is selected and nothing declared skips it; Next is
	// then the release it upgrades to.
	Runs bool   `json:"runs"`
	Next string `json:"next,omitempty"`
	// Why says why it does not run: the release table's declared skip,
	// word for word (the report judges a skip by it), or that the filters
	// leave the spec out.
	Why string `json:"why,omitempty"`
	// Declared: Why is the release table's declared skip of release
	// switching in the run's mode, and OutOfReach that the run (not the
	// release) keeps the spec from running: the report counts the skip
	// by them. Neither where the filters leave the spec out.
	Declared   bool `json:"declared,omitempty"`
	OutOfReach bool `json:"outOfReach,omitempty"`
	// Bits is the status file of the next release's bits the runner gets
	// beside the suite, set where Runs is.
	Bits string `json:"bits,omitempty"`
}

// Layout is where the run's files are.
type Layout struct {
	// Root is the repository (where relative paths were taken from);
	// Output its build folder; Artifacts this release's reports folder;
	// Timeline the steps the runner timed before the suite ("" none).
	Root      string `json:"root"`
	Output    string `json:"output"`
	Artifacts string `json:"artifacts"`
	Timeline  string `json:"timeline,omitempty"`
}

// Rel is the release table's row of the run, with its feature set folded
// in: a lookup of what was resolved, which cannot fail on a run that
// Write accepted. It is looked up as it was given: the row of a minor
// ("1.35") may boot kind's published image of another patch, while the
// row of a patch, even the table's own ("1.35.4"), is built at that patch
// (release.Get), so Release alone would not be the row the run resolved.
func (r Run) Rel() (release.Release, error) {
	given := r.Given
	if given == "" {
		given = r.Release
	}
	rel, err := release.Resolve(given, r.Features)
	if err == nil && rel.Version != r.Release {
		err = fmt.Errorf("K8S_VERSION %s is Kubernetes %s, not the run's %s", given, rel.Version, r.Release)
	}
	return rel, err
}

// check refuses a run no resolver would have written.
func (r Run) check() error {
	switch {
	case r.Schema != Schema:
		return fmt.Errorf("schema %d, this program reads %d: resolve the run again with this checkout", r.Schema, Schema)
	case r.Release == "" || r.Features == "" || r.Profile == "":
		return fmt.Errorf("no release, feature set or profile")
	case r.Layout.Artifacts == "":
		return fmt.Errorf("no artifacts folder")
	case r.Upgrade.Runs && r.Upgrade.Next == "":
		return fmt.Errorf("the upgrade runs, to no release")
	case !r.Upgrade.Runs && r.Upgrade.Why == "":
		return fmt.Errorf("the upgrade does not run, for no reason")
	}
	if _, err := r.Rel(); err != nil {
		return err
	}
	return nil
}

// Write puts the run into dir's run.json and says where.
func Write(dir string, r Run) (string, error) {
	r.Schema = Schema
	if err := r.check(); err != nil {
		return "", fmt.Errorf("resolved run: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	return path, os.WriteFile(path, append(data, '\n'), 0o644)
}

// Read is the run a resolver wrote into path.
func Read(path string) (Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Run{}, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.check(); err != nil {
		return Run{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// UpgradeFor is THE decision whether the in-place upgrade spec runs: the
// release table's declared skips for release switching in mode m (an
// existing cluster, a feature set, the newest release, UPGRADE=0), then
// whether the filters select the spec (selected: the caller's reading of
// the label filter, focus and skip against the spec's labels and name).
func UpgradeFor(rel release.Release, m release.Mode, selected bool) Upgrade {
	if skip, declared := rel.SkipFor(release.NeedReleaseSwitching, m); declared {
		return Upgrade{Why: skip.Reason, Declared: true, OutOfReach: skip.OutOfReach()}
	}
	next, ok := rel.Next()
	if !ok {
		// The table declares the newest release; this is its guard.
		return Upgrade{Why: fmt.Sprintf("Kubernetes %s has no next release", rel.Minor)}
	}
	if !selected {
		return Upgrade{Why: "the run's filters leave the upgrade spec out"}
	}
	return Upgrade{Runs: true, Next: next.Minor}
}
