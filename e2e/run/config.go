// SPDX-License-Identifier: Apache-2.0

// Package run is a run of the suite from this machine, as one Go program:
// the resolve step that turns the variables of e2e/variables' table into a
// Config, their checks (checks.go, by name), and the pipeline of named
// steps that make e2e, make signoff, make bench and make e2e-release go
// through (e2e/cmd/run): preflight, then per release the driver image and
// the suite's compile and the next release's bits (each got beside the
// steps after it), the node image, and the suite under Ginkgo, then the
// sign-off. The suite and the in-cluster entry read the table, never this
// package.
package run

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

// Config is a run's variables resolved: each variable of the table with
// its value, which of them were given on make's command line, and the
// repository the run works in. A step that changes a variable for what it
// runs (a release, a device class, a column) makes a Config of its own
// (With); nothing changes one in place.
type Config struct {
	values map[string]string
	given  map[string]bool
	root   string
}

// Resolve reads every variable of the table with lookup (the environment,
// where make put the ones on its command line), as make read them before:
// a variable set, even to "", is that value, one not set its default.
// given names the variables of make's command line: only a KUBECONFIG
// given there selects an existing cluster, since one merely exported in a
// shell must never point the suite at a cluster. root is the repository,
// which a relative ARTIFACTS and KUBECONFIG are taken from.
//
// Some defaults follow other variables: K8S_VERSIONS is K8S_VERSION's
// value, and "all" every release the matrix supports; UPGRADE_NODE_IMAGE
// is NODE_IMAGE's source where that is auto, pull or build.
func Resolve(lookup func(string) (string, bool), given []string, root string) Config {
	c := Config{values: map[string]string{}, given: map[string]bool{}, root: root}
	for _, name := range given {
		c.given[name] = true
	}
	set := map[string]bool{}
	for _, v := range variables.Variables {
		value, ok := lookup(v.Name)
		if !ok {
			value = v.Default
		}
		c.values[v.Name], set[v.Name] = value, ok
	}
	if !set["K8S_VERSIONS"] {
		c.values["K8S_VERSIONS"] = c.values["K8S_VERSION"]
	}
	if strings.TrimSpace(c.values["K8S_VERSIONS"]) == "all" {
		every, _ := matrix.Releases("all") // "all" is never refused
		c.values["K8S_VERSIONS"] = strings.Join(every, " ")
	}
	if src := c.values["NODE_IMAGE"]; !set["UPGRADE_NODE_IMAGE"] && slices.Contains([]string{"auto", "pull", "build"}, src) {
		c.values["UPGRADE_NODE_IMAGE"] = src
	}
	c.values["ARTIFACTS"] = c.path(c.values["ARTIFACTS"])
	if c.given["KUBECONFIG"] && c.values["KUBECONFIG"] != "" {
		c.values["KUBECONFIG"] = c.path(c.values["KUBECONFIG"])
	} else {
		c.values["KUBECONFIG"] = ""
	}
	return c
}

// path is p taken from the repository where it is relative.
func (c Config) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.root, p)
}

// Get is a variable's value. A name the table lacks is a bug in the
// caller, not an input: it panics.
func (c Config) Get(name string) string {
	v, ok := c.values[name]
	if !ok {
		panic("run: no variable " + name + " in the table")
	}
	return v
}

// With is c with one variable set to value.
func (c Config) With(name, value string) Config {
	c.Get(name)
	values := make(map[string]string, len(c.values))
	for k, v := range c.values {
		values[k] = v
	}
	values[name] = value
	c.values = values
	return c
}

// Given says whether the variable was given on make's command line.
func (c Config) Given(name string) bool { return c.given[name] }

// Releases are K8S_VERSIONS's releases, in their order.
func (c Config) Releases() []string { return strings.Fields(c.Get("K8S_VERSIONS")) }

// Kubeconfig is the existing cluster's kubeconfig, absolute; "" where the
// suite makes its clusters.
func (c Config) Kubeconfig() string { return c.Get("KUBECONFIG") }

// Existing says whether the run goes against an existing cluster.
func (c Config) Existing() bool { return c.Kubeconfig() != "" }

// Root is the repository the run works in.
func (c Config) Root() string { return c.root }

// Out is the build output folder, the repository's _output.
func (c Config) Out() string { return filepath.Join(c.root, "_output") }

// bin is where make's e2e-cli and the runner's own builds put programs.
func (c Config) bin(name string) string { return filepath.Join(c.Out(), "bin", name) }

// Classes are DEVICE_CLASS's classes where it names several (a,b): each a
// run of its own and a column of its own in the sign-off. nil for one.
func (c Config) Classes() []string {
	if classes := variables.SplitClasses(c.Get("DEVICE_CLASS")); len(classes) > 1 {
		return classes
	}
	return nil
}

// ClusterName is the cluster release rel runs on: CLUSTER_NAME, except
// that with KEEP_CLUSTER=1 and several releases on clusters the suite
// makes, each kept cluster has a name of its own, CLUSTER_NAME-1-35.
func (c Config) ClusterName(rel string) string {
	name := c.Get("CLUSTER_NAME")
	if c.Get("KEEP_CLUSTER") != "1" || len(c.Releases()) < 2 || c.Existing() {
		return name
	}
	return name + "-" + strings.ReplaceAll(rel, ".", "-")
}

// Environ is base with every variable of the table (but KUBECONFIG, which
// selects nothing from the environment) set to its value here, so that
// whatever a step starts reads the run's values: a column's LABELS, a
// class's DEVICE_CLASS.
func (c Config) Environ(base []string) []string {
	out := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, ours := c.values[name]
		return ours && name != "KUBECONFIG"
	})
	for _, v := range variables.Variables {
		if v.Name != "KUBECONFIG" {
			out = append(out, v.Name+"="+c.values[v.Name])
		}
	}
	return out
}
