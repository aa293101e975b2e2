// SPDX-License-Identifier: Apache-2.0

// Package matrix is the one definition of what a sign-off runs: every
// supported release, each DRA feature set it lists (so each allocator
// implementation a whole cluster can run), and the spec groups a column is
// split into so that its cells run side by side on separate machines. The
// CI workflow's matrix, `make matrix` and `make signoff` all read it; a unit
// test checks on the suite's own dry run that each column's cells select
// every spec of it exactly once.
package matrix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

// table is the release table as the matrix reads it: its minors, and a
// row by name. A test gives one with a row the real table lacks yet (a
// pre-release kind publishes no image of).
var table = struct {
	minors func() []string
	get    func(string) (release.Release, error)
}{release.Minors, release.Get}

// Group is a part of a column's specs, by label filter.
type Group struct {
	Name, Labels string
}

// Groups split a column by how its specs share the cluster, using the e2e
// framework's own labels, so that a new spec group (a new label) lands in
// one of them without anyone naming it here: the parallel specs, the serial
// ones that leave every gate as it was, and the disruptive ones (gate moves,
// restarts, the release switch), which take longest: each moves components
// one after another, and under the release defaults the upgrade switches
// the whole cluster to the next release and back.
var Groups = []Group{
	{"parallel", "!Serial"},
	{"serial", "Serial && !Disruptive"},
	{"disruptive", "Disruptive"},
}

// Column is one release under one DRA feature set: one column of the
// sign-off, one allocator implementation for the whole run.
type Column struct {
	Release  string `json:"release"`
	Features string `json:"features"`
	// Allocator is the implementation kube-scheduler uses for the set, by
	// the release table's rule.
	Allocator string `json:"allocator"`
}

// Key names the column ("1.36 stable").
func (c Column) Key() string { return c.Release + " " + c.Features }

// Cell is a column's group: one CI job, one make e2e.
type Cell struct {
	Name     string `json:"name"`
	Release  string `json:"release"`
	Features string `json:"features"`
	Group    string `json:"group"`
	Labels   string `json:"labels"`
	// Artifact names the CI job's artifact, and the one folder in it
	// (e2e-1.35-defaults-serial): the sign-off looks for the cell's report
	// and the file saying how its job ended there.
	Artifact string `json:"artifact"`
}

// LeftOut is a release and DRA feature set asked for that is no column:
// the release does not list the set.
type LeftOut struct {
	Release  string `json:"release"`
	Features string `json:"features"`
}

// Why says it in words: "1.33 has no stable set".
func (l LeftOut) Why() string { return l.Release + " has no " + l.Features + " set" }

// Columns lists the columns of releases ("all" or minors, space-separated)
// and features ("all", or one set's name). A set named with "all" releases
// means the releases that list it; a release named that does not list it
// is refused. Order: releases ascending, the defaults first.
func Columns(releases, features string) ([]Column, error) {
	cols, left, err := Available(releases, features)
	if err != nil {
		return nil, err
	}
	if every := strings.TrimSpace(releases) == "" || strings.TrimSpace(releases) == "all"; !every && len(left) > 0 {
		return nil, noSet(left[0])
	}
	return cols, nil
}

// Available lists the columns of releases and features as Columns does,
// but where a release (named, or of "all") does not list the set it
// leaves that release out rather than refuse the request, and says so:
// the CI workflow runs the columns that exist of what a dispatch asked
// for. It refuses a release the table lacks, and a request of which no
// column is left.
func Available(releases, features string) ([]Column, []LeftOut, error) {
	minors, err := Releases(releases)
	if err != nil {
		return nil, nil, err
	}
	var out []Column
	var left []LeftOut
	for _, m := range minors {
		r, err := table.get(m)
		if err != nil {
			return nil, nil, err
		}
		sets := r.SetNames()
		if features != "all" {
			if !slices.Contains(sets, features) {
				left = append(left, LeftOut{Release: m, Features: features})
				continue
			}
			sets = []string{features}
		}
		for _, s := range sets {
			rs, err := r.WithFeatures(s)
			if err != nil {
				return nil, nil, err
			}
			allocator, err := rs.AllocatorFor(rs.DefaultFeatures())
			if err != nil {
				allocator = "unknown"
			}
			out = append(out, Column{Release: m, Features: s, Allocator: allocator})
		}
	}
	switch {
	case len(out) > 0:
		return out, left, nil
	case len(left) == 1:
		return nil, nil, noSet(left[0])
	}
	return nil, nil, fmt.Errorf("no release of %s lists the DRA feature set %q", strings.Join(minors, ", "), features)
}

// noSet is the error of a release that does not list a set.
func noSet(l LeftOut) error {
	r, err := table.get(l.Release)
	if err != nil {
		return err
	}
	return fmt.Errorf("Kubernetes %s has no DRA feature set %q: it lists %s", l.Release, l.Features, strings.Join(r.SetNames(), ", "))
}

// Releases expands "all" (or "") to every supported minor and checks the
// others.
func Releases(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" || strings.TrimSpace(list) == "all" {
		return table.minors(), nil
	}
	var out []string
	for _, m := range strings.Fields(list) {
		r, err := table.get(m)
		if err != nil {
			return nil, err
		}
		if r.Minor != m {
			return nil, fmt.Errorf("the matrix takes minor releases (%s), not %q", strings.Join(table.minors(), ", "), m)
		}
		out = append(out, m)
	}
	return out, nil
}

// Offline lists the releases of the columns, once each in their order,
// whose node image is built offline: kind publishes no image of their
// row (Published == ""), as of 1.33 and of a pre-release. CI's node-image
// job builds each of them once a run, and their cells restore it.
func Offline(columns []Column) ([]string, error) {
	out := []string{}
	for _, c := range columns {
		r, err := table.get(c.Release)
		if err != nil {
			return nil, err
		}
		if r.Published == "" && !slices.Contains(out, c.Release) {
			out = append(out, c.Release)
		}
	}
	return out, nil
}

// GroupsFor are the groups a column is split into: Groups, or, given a
// custom filter (a dispatch's own LABELS), one group of that filter.
func GroupsFor(custom string) ([]Group, error) {
	if strings.TrimSpace(custom) == "" {
		return Groups, nil
	}
	if err := labels.Check(custom); err != nil {
		return nil, err
	}
	return []Group{{"custom", custom}}, nil
}

// Cells splits each column into its groups (GroupsFor custom).
func Cells(columns []Column, custom string) ([]Cell, error) {
	groups, err := GroupsFor(custom)
	if err != nil {
		return nil, err
	}
	var out []Cell
	for _, c := range columns {
		for _, g := range groups {
			out = append(out, Cell{Name: c.Key() + " " + g.Name, Release: c.Release, Features: c.Features, Group: g.Name, Labels: g.Labels,
				Artifact: "e2e-" + c.Release + "-" + c.Features + "-" + g.Name})
		}
	}
	return out, nil
}

// Union is the label filter that selects what a column's cells select
// together: make signoff runs a column as one run of this filter, on one
// cluster, rather than one cluster per cell (the cells exist to spread a
// column over machines; on one machine they would each pay a cluster).
func Union(groups []Group) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = "(" + g.Labels + ")"
	}
	return strings.Join(parts, " || ")
}
