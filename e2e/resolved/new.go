// SPDX-License-Identifier: Apache-2.0

package resolved

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

// Inputs are what New resolves a run from: the variables' values for one
// release, column and class, and what the steps before the suite built
// for it.
type Inputs struct {
	// Get is a variable's value by its name in the table (e2e/variables),
	// its default applied. Every field of Run tagged variable:"NAME" is
	// Get(NAME) (a boolean: "1"), filled by one loop (fill): a variable
	// the suite reads is its row and its tagged field, no copy by hand
	// here, in the runner, in the in-cluster entry or in the suite (which
	// reads the Run itself). UPGRADE is read too:
	// "0" gives the upgrade spec no next release.
	Get func(name string) string
	// UpgradeBits is the status file the runner's getter of the next
	// release's bits writes: where the upgrade spec runs, its bits come
	// from there; without one, it is a declared skip.
	UpgradeBits string
	// Root is the repository, Output its build folder, Artifacts the
	// release's reports folder (relative ones are taken from Root),
	// Timeline the runner's timed steps ("" none).
	Root, Output, Artifacts, Timeline string
}

// New resolves one release's run: the release once (at the table's patch,
// with the feature set, which some allocator must support), and whether the upgrade spec
// runs, decided once (UpgradeFor) with the filters' selection of it
// (labels.UpgradeSelected). Bad input is refused in one line.
func New(in Inputs) (Run, error) {
	var r Run
	fill(reflect.ValueOf(&r).Elem(), in.Get)
	rel, err := release.Resolve(r.Given, r.Features)
	if err != nil {
		return Run{}, err
	}
	if strings.TrimSpace(r.Profile) == "" {
		return Run{}, fmt.Errorf("no gate profile: give PROFILE (default: default)")
	}
	// A feature set no implementation supports is refused here, before
	// a cluster is made for it.
	if _, err := rel.AllocatorFor(rel.DefaultFeatures()); err != nil {
		return Run{}, err
	}
	selected, err := labels.UpgradeSelected(r.Filters.Labels, rel)
	if err != nil {
		return Run{}, err
	}
	root := in.Root
	if abs, err := filepath.Abs(root); err == nil && root != "" {
		root = abs
	}
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) || root == "" {
			return p
		}
		return filepath.Join(root, p)
	}
	if r.Features == "" {
		r.Features = release.DefaultSet
	}
	r.Schema, r.Release = Schema, rel.Version
	r.Cluster.Kubeconfig = path(r.Cluster.Kubeconfig)
	r.Layout = Layout{Root: root, Output: path(in.Output), Artifacts: path(in.Artifacts), Timeline: path(in.Timeline)}
	// A driver of the user's own is named by DRIVER or its class; the
	// rest of its row (ADMIN_CHECK, ...) alone names none.
	if v := r.Driver.Vendor; v != nil && v.Name == "" && v.DeviceClass == "" {
		r.Driver.Vendor = nil
	}
	// The release table's mode as the suite reads it (the rows of release
	// switching read only these two): an existing cluster, and whether
	// the next release's bits come at all.
	m := release.Mode{Existing: r.Cluster.Existing(), VendorDriver: r.Driver.Vendor != nil,
		UpgradeImage: in.Get("UPGRADE") != "0" && in.UpgradeBits != ""}
	r.Upgrade = UpgradeFor(rel, m, selected)
	if r.Upgrade.Runs {
		r.Upgrade.Bits = path(in.UpgradeBits)
	}
	if err := r.check(); err != nil {
		return Run{}, err
	}
	return r, nil
}

// fill sets every field of v (a struct) tagged variable:"NAME" to get(NAME),
// a boolean to get(NAME) == "1" (a switch of the table), through nested
// structs and pointers to them (allocated here; New drops a Vendor that
// names no driver).
func fill(v reflect.Value, get func(string) string) {
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		name, tagged := sf.Tag.Lookup("variable")
		switch {
		case tagged && f.Kind() == reflect.Bool:
			f.SetBool(get(name) == "1")
		case tagged:
			f.SetString(get(name))
		case f.Kind() == reflect.Struct:
			fill(f, get)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			fill(f.Elem(), get)
		}
	}
}
