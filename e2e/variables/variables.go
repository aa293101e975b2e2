// SPDX-License-Identifier: Apache-2.0

// Package variables is THE table of the variables a run reads: their
// names, defaults, meanings, the Ginkgo flags they go to, and which the
// in-cluster Job carries. The runner (e2e/run) resolves and checks
// them (its checks.go, by name) and resolves each release's run from them
// (e2e/resolved), which the suite binary reads instead of flags; the
// in-cluster entry (e2e/cmd/incluster) and the Job (e2e/suitejob) read
// this table without linking the runner's pipeline. A leaf: the standard
// library and the release table's defaults only (a test in e2e/specfiles
// keeps the suite and the in-cluster entry from linking e2e/run again).
package variables

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// Variable is one variable a run reads from make's command line or the
// environment.
type Variable struct {
	Name string
	// Default is the value where the variable is not set; "" is none.
	Default string
	// Shown is the table's default (docs/variables.md) where it is no value
	// of the variable ("all", "—"); otherwise the table shows Default as code.
	Shown string
	// Meaning is docs/variables.md's text: what the variable does, in markdown.
	Meaning string
	// Switch marks a 1-or-0 variable: any other value is refused, and a
	// field of the resolved run it fills is a boolean set by 1.
	Switch bool
	// Ginkgo is the Ginkgo flag the value goes to where it is not empty
	// (--label-filter for the CLI, -ginkgo.label-filter for a compiled
	// suite); "" where none.
	Ginkgo string
	// Job marks the variables the in-cluster Job carries (e2e/suitejob):
	// those that change what the suite checks or how it judges it.
	Job bool
}

// The texts that two variables of one row of docs/variables.md share.
const (
	ownDriver = "with `KUBECONFIG`: a DRA driver of your own and the DeviceClass of its devices; the run claims those devices instead of installing the bundled driver and runs the specs that hold for any driver (see [vendor.md](vendor.md)). Both or neither; a class that does not exist or selects none of the driver's node-local devices, or selects devices that consume shared counters (partitions), a driver with no such devices, or a cluster where some of the class's devices are in use on every node, is refused before anything is built, in one line that says what to do"
	suiteJob  = "`make incluster-e2e`: a suite image pushed before, run instead of one built and pushed; `KEEP=1` keeps the Job's namespace and binding"
	specNames = "Ginkgo regular expressions on spec names; a filter or focus that selects no spec fails the run instead of passing empty"
)

// DefaultClusterName is CLUSTER_NAME's default, kindcluster.DefaultName
// (a test keeps them equal): spelled here so that the in-cluster entry,
// which reads the table, does not link kind and the node images for it.
const DefaultClusterName = "dra-e2e"

// none is the table's default of a variable that has none.
const none = "—"

// Variables is THE table: every variable of a run, in docs/variables.md's
// order. That page's table is this one (go run ./e2e/cmd/run variables
// prints it; a unit test compares the two).
var Variables = []Variable{
	{Name: "K8S_VERSION", Default: release.Default, Job: true,
		Meaning: "release (" + minorRange(release.Minors(), "`") + ", or a patch of one such as `1.35.4`: a patch other than the pin and kind's published image (1.35.8 for 1.35) is built, never booted from an image of another patch: it needs all its modules in the module proxy — not 1.33.11 or 1.33.12, for example); " + release.Default + " is the newest where the gate can still be switched"},
	{Name: "K8S_VERSIONS", Shown: "`$(K8S_VERSION)`",
		Meaning: "several releases in turn (`all`: every supported release); the run fails if any fails"},
	{Name: "PROFILE", Default: "default", Job: true,
		Meaning: "the gate profile the cluster is created with (see \"Profiles\" below)"},
	{Name: "FEATURES", Default: release.DefaultSet, Job: true,
		Meaning: "the DRA feature set every component of the cluster runs with besides `DRAAdminAccess`, and so the allocator implementation kube-scheduler uses for the whole run: `defaults`; `stable` (" + minorRange(withSet("stable", ""), "") + ": consumable capacity and binding conditions off, so the `stable` allocator); `alpha` (" + minorRange(withSet("alpha", ""), "") + ": every DRA alpha gate of the release on with `resource.k8s.io/v1alpha3`; " + allocatorsOf("alpha") + "). A set the release does not list is refused before anything is built; `_output/bin/e2e-cluster features --release 1.36` lists a release's sets. Under a set, features that set turns on (partitionable devices on 1.35, for example) are checked where the defaults declare them skipped, and the in-place upgrade is a declared skip"},
	{Name: "TESTDRIVER_IMAGE", Shown: none, Job: true,
		Meaning: "a pushed driver and workload image (`make testdriver-push REGISTRY=host/path` prints one) that the nodes pull instead of an archive loaded into them; a reference that does not resolve, or a registry that does not answer, is refused before anything is built. A registry on this machine's loopback (`localhost:5001`, `make registry-up`) is reached by the nodes of a cluster the suite creates at the kind network's gateway, one on a private address where it is, both over plain HTTP as the push reaches them (any other registry over HTTPS only)"},
	{Name: "DRIVER", Shown: none, Job: true, Meaning: ownDriver},
	{Name: "DEVICE_CLASS", Shown: none, Job: true, Meaning: ownDriver},
	{Name: "ADMIN_CHECK", Shown: none, Job: true,
		Meaning: "with `DRIVER` and `WORKLOAD_IMAGE`: a shell command that must succeed inside every container given a device with admin access, run with the devices the allocation gave that container in its environment (`DRA_DEVICE_NAME`, `DRA_DEVICE_ATTR_UUID`, …; see [vendor.md](vendor.md)), say `nvidia-smi -i \"$DRA_DEVICE_ATTR_UUID\"`; the bundled workload image has no shell, so without `WORKLOAD_IMAGE` it is refused"},
	{Name: "DRIVER_NAMESPACE", Shown: none, Job: true,
		Meaning: "with `DRIVER`: the namespace of the driver's pods, whose images and versions go into the report's provenance and whose logs into the artifacts (`driver-<pod>.log`); by default the pods are found by their kubelet plugin folder. Given, a namespace with no pods is refused"},
	{Name: "WORKLOAD_IMAGE", Shown: "the bundled workload", Job: true,
		Meaning: "with `DRIVER`: the image the specs' pods run (`sh -c 'exec sleep 86400'`, so it needs `sh` and `sleep`; `ADMIN_CHECK` runs in it)"},
	{Name: "REGISTRY", Shown: none,
		Meaning: "`make incluster-e2e` (and `make testdriver-push`): the registry and path images are pushed to, which the cluster's nodes pull from (`registry.example.com/team`; plain HTTP only to a loopback or private address)"},
	{Name: "REGISTRY_PORT", Default: "5001",
		Meaning: "`make registry-up`: the port the registry on this machine serves on, on the loopback and, for kind's nodes, on the kind network's gateway"},
	{Name: "SUITE_IMAGE", Shown: none, Meaning: suiteJob},
	{Name: "KEEP", Shown: none, Meaning: suiteJob},
	{Name: "DEBIAN_MIRROR", Shown: "apt's own",
		Meaning: "the Debian mirror an offline node image build debootstraps from (needed where apt names none, such as Ubuntu)"},
	{Name: "LABELS", Shown: "all", Ginkgo: "label-filter", Job: true,
		Meaning: "a Ginkgo label filter, e.g. `authz \\|\\| allocation`, `!disruptive`; an unknown label is refused"},
	{Name: "FOCUS", Shown: none, Ginkgo: "focus", Job: true, Meaning: specNames},
	{Name: "SKIP", Shown: none, Ginkgo: "skip", Job: true, Meaning: specNames},
	{Name: "KEEP_CLUSTER", Shown: none, Switch: true,
		Meaning: "`1` keeps the cluster (and the driver) after the run; delete it with `make cluster-down`; `0` or empty deletes it; anything else is refused. With several releases each kept cluster is named `$(CLUSTER_NAME)-1-35` and so on"},
	{Name: "CLUSTER_NAME", Default: DefaultClusterName, Job: true,
		Meaning: "the kind cluster's name, at most 49 characters (kind names a node `<name>-control-plane`, and a hostname takes 63); a name in use is refused before anything is built"},
	{Name: "NODE_IMAGE", Default: "auto",
		Meaning: "`auto` (our offline build if present, else kind v0.33.0's published `kindest/node` for the release, pinned by digest, else an offline build), `pull`, `build`, `present` (only an image already here), or any kind node image of the release's minor (its own patch is what the checks expect)"},
	{Name: "UPGRADE", Default: "1", Switch: true,
		Meaning: "`0` skips the in-place upgrade spec and the build of the next release's bits it needs (`1` or `0` only)"},
	{Name: "UPGRADE_NODE_IMAGE", Default: "auto",
		Meaning: "source of the next release's node image, whose bits the upgrade spec installs (`auto`, `pull`, `build` or an image reference)"},
	{Name: "KUBECONFIG", Shown: none,
		Meaning: "**on the make command line only**: run against that existing cluster, create none"},
	{Name: "KUBECONTEXT", Shown: "its current context",
		Meaning: "with `KUBECONFIG`: the kubeconfig's context to use instead of its current one, by every client of the run (`make e2e` and `make preflight`: the checks and the suite; `make incluster-e2e`: the checks, the Job, its follow-up and its clean-up); a context the kubeconfig lacks, or one given without `KUBECONFIG`, is refused before anything is built"},
	// Four on a 2-core machine: the parallel specs mostly wait on the
	// cluster (the CPU half idle through a run). A third process took the
	// parallel part of a 1.35 run from 123 s to 88 s; a fourth, once the
	// allocators' feature promises ran there too, 1.36's from 129-139 s
	// to 113 s, green (docs/benchmarks.md).
	{Name: "PROCS", Default: "4", Ginkgo: "procs",
		Meaning: "parallel Ginkgo processes (a whole number from 1, checked before anything is built)"},
	{Name: "TIMEOUT", Default: "60m", Ginkgo: "timeout", Job: true,
		Meaning: "Ginkgo's suite timeout per release (a Go duration, checked before anything is built)"},
	{Name: "ARTIFACTS", Default: "_artifacts",
		Meaning: "where reports and logs go, one folder per release (a relative path is taken from the repository's root)"},
	{Name: "GINKGO_ARGS", Shown: none,
		Meaning: "extra Ginkgo flags, e.g. `-v` or `--poll-progress-after=60s`"},
	{Name: "BENCH_REPEAT", Default: "3",
		Meaning: "`make bench`: gate moves off and on per component, and feature-set moves there and back, on the kept cluster"},
}

// The release table's facts the meanings name, read from it, so that a
// release added to the table needs no edit here.

// withSet lists the minors whose row offers the feature set name, and
// where allocator is not "", selects that allocator with it.
func withSet(name, allocator string) []string {
	var out []string
	for _, m := range release.Minors() {
		r, _ := release.Get(m)
		if s, err := r.Set(name); err == nil && s.Name == name && (allocator == "" || s.Allocator == allocator) {
			out = append(out, m)
		}
	}
	return out
}

// allocatorsOf says which allocator the set selects on which releases:
// "the allocator `incubating` on 1.36 and 1.38, `experimental` on 1.34,
// 1.35 and 1.37".
func allocatorsOf(name string) string {
	var parts []string
	for _, a := range []string{"stable", "incubating", "experimental"} {
		if minors := withSet(name, a); len(minors) > 0 {
			parts = append(parts, "`"+a+"` on "+joinAnd(minors))
		}
	}
	return "the allocator " + strings.Join(parts, ", ")
}

// joinAnd is "1.34, 1.35 and 1.37".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// minorRange writes minors, in the table's order, as "1.33–1.38" (each
// within quote) where they run without a gap, otherwise as "1.36, 1.37".
func minorRange(minors []string, quote string) string {
	all := release.Minors()
	if len(minors) > 2 {
		first := slices.Index(all, minors[0])
		if first >= 0 && first+len(minors) <= len(all) && slices.Equal(all[first:first+len(minors)], minors) {
			return quote + minors[0] + quote + "–" + quote + minors[len(minors)-1] + quote
		}
	}
	return quote + strings.Join(minors, quote+", "+quote) + quote
}

// Lookup is the table's variable of that name.
func Lookup(name string) (Variable, bool) {
	for _, v := range Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// From is the variable's value in an environment read with getenv, where
// an empty value is none: the given value, or else the default. The suite
// binary and the in-cluster entry read their variables so.
func (v Variable) From(getenv func(string) string) string {
	if s := getenv(v.Name); s != "" {
		return s
	}
	return v.Default
}

// JobVariables are the names of the variables the in-cluster Job carries.
func JobVariables() []string {
	var out []string
	for _, v := range Variables {
		if v.Job {
			out = append(out, v.Name)
		}
	}
	return out
}

// Markdown is docs/variables.md's table of the variables: a row per variable,
// and one row for neighbours that share their default and meaning
// (`DRIVER`, `DEVICE_CLASS`).
func Markdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for i := 0; i < len(Variables); {
		v := Variables[i]
		names := []string{"`" + v.Name + "`"}
		for i++; i < len(Variables) && Variables[i].Meaning == v.Meaning && Variables[i].shown() == v.shown(); i++ {
			names = append(names, "`"+Variables[i].Name+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, ", "), v.shown(), v.Meaning)
	}
	return b.String()
}

// shown is the table's default of the variable.
func (v Variable) shown() string {
	if v.Shown != "" {
		return v.Shown
	}
	return "`" + v.Default + "`"
}
