// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// JSONSchemaVersion is signoff.json's format; it changes when a field
// changes meaning, so that a program comparing two sign-offs can tell.
// Fields added since are optional and left out where zero (interrupted,
// cutShort, clusterBreaks, clusterBroke, a column's version and
// preRelease, the preRelease sign-off apart, leftOut, unitResult), so a
// file written before them reads as it did: a run that was not
// interrupted, whose cluster held, of released columns that named no
// version, with no column left out and no unit job said.
const JSONSchemaVersion = 1

// Document is signoff.json: the verdict, the columns with their provenance,
// one verdict per requirement per column, and the known upstream defects
// met, each with its link and the cause each spec saw.
type Document struct {
	SchemaVersion int    `json:"schemaVersion"`
	Verdict       string `json:"verdict"`
	SignedOff     bool   `json:"signedOff"`
	SignedColumns int    `json:"signedColumns"`
	// Interrupted: a column's run was stopped (Ctrl-C); the runner that
	// was stopped exits 130, whatever ExitCode says.
	Interrupted bool `json:"interrupted,omitempty"`
	// ExitCode is what signoff exits with for this page (ExitSignedOff,
	// ExitFailed, ExitLeftOut, ExitClusterBroke).
	ExitCode     int              `json:"exitCode"`
	Columns      []ColumnDoc      `json:"columns"`
	Releases     []ReleaseVerdict `json:"releases"`
	Requirements []RequirementDoc `json:"requirements"`
	KnownDefects []DefectDoc      `json:"knownDefects"`
	// PreRelease is the sign-off of the pre-release columns, judged apart
	// (Matrix.Apart): neither SignedOff nor ExitCode counts them.
	PreRelease *ApartDoc `json:"preRelease,omitempty"`
	// LeftOut are the columns asked for that do not exist (a release
	// that does not list the set), each with why: nothing ran of them,
	// and nothing counts them.
	LeftOut []LeftOutDoc `json:"leftOut,omitempty"`
	// UnitResult is the CI workflow's unit job's result where it was not
	// success: no cell ran, and the sign-off failed.
	UnitResult string `json:"unitResult,omitempty"`
}

// LeftOutDoc is a column asked for that does not exist.
type LeftOutDoc struct {
	Release  string `json:"release"`
	Features string `json:"features"`
	Why      string `json:"why"`
}

// ApartDoc is where the sign-off of the pre-release columns judged apart
// is, relative to this file, and what it says.
type ApartDoc struct {
	Path      string   `json:"path"`
	Columns   []string `json:"columns"`
	Verdict   string   `json:"verdict"`
	SignedOff bool     `json:"signedOff"`
	ExitCode  int      `json:"exitCode"`
}

// ColumnDoc is one column: release and DRA feature set, its allocator, the
// gates each component ran with, why it is not signed off, and its
// requirements by standing, with what kept those out of reach from the run.
type ColumnDoc struct {
	Key       string `json:"key"`
	Release   string `json:"release"`
	Features  string `json:"features"`
	Allocator string `json:"allocator,omitempty"`
	// Unreachable are the release's implementations no column can check.
	Unreachable map[string]string `json:"unreachableAllocators,omitempty"`
	Gates       map[string]string `json:"gates,omitempty"`
	GatesRead   bool              `json:"gatesReadFromComponents"`
	// Version is the Kubernetes the column ran ("1.35.8"), PreRelease
	// whether it is a pre-release ("1.38.0-beta.0"): a column of one
	// signs off no release.
	Version    string `json:"version,omitempty"`
	PreRelease bool   `json:"preRelease,omitempty"`
	// Existing: the cluster was given with --kubeconfig; OwnDriver: the run
	// claimed the devices of a driver given with DRIVER and DEVICE_CLASS.
	Existing  bool `json:"existingCluster"`
	OwnDriver bool `json:"driverOfOwn"`
	// Interrupted: the column's run was stopped; the specs it cut short
	// count as not run (Totals.CutShort).
	Interrupted bool `json:"interrupted,omitempty"`
	// ClusterBreaks: what broke under the column's run, and from when;
	// the specs it cut short count as not run (Totals.ClusterBroke).
	ClusterBreaks []report.ClusterBreak `json:"clusterBreaks,omitempty"`
	SignedOff     bool                  `json:"signedOff"`
	Unsigned      []string              `json:"whyNotSignedOff,omitempty"`
	Requirements  Counts                `json:"requirements"`
	OutOfReach    []string              `json:"outOfReach,omitempty"`
	Totals        report.Totals         `json:"totals"`
	Suite         string                `json:"suiteCommit,omitempty"`
	NodeImage     string                `json:"nodeImage,omitempty"`
	Components    map[string]string     `json:"components,omitempty"`
}

// RequirementDoc is one requirement's verdicts, by column key.
type RequirementDoc struct {
	ID       string          `json:"id,omitempty"`
	Text     string          `json:"text"`
	Verdicts map[string]Cell `json:"verdicts"`
}

// DefectDoc is one upstream issue the run met where the release table
// declares it.
type DefectDoc struct {
	Issue   string           `json:"issue"`
	URL     string           `json:"url"`
	Columns []string         `json:"columns"`
	Specs   []DefectSpecSeen `json:"specs"`
}

// DefectSpecSeen is a spec that ended with the defect's verdict, and what
// it saw (the verdict names the cause).
type DefectSpecSeen struct {
	Column string `json:"column"`
	Spec   string `json:"spec"`
	Seen   string `json:"seen"`
}

// Document builds signoff.json's content.
func (m Matrix) Document() Document {
	d := Document{SchemaVersion: JSONSchemaVersion, Verdict: m.Verdict(), SignedColumns: m.SignedColumns(), Interrupted: m.interrupted(),
		ExitCode: m.ExitCode(), Releases: m.Releases()}
	d.SignedOff, d.UnitResult = m.SignedOff(), m.Unit
	for _, l := range m.LeftOut {
		d.LeftOut = append(d.LeftOut, LeftOutDoc{Release: l.Release, Features: l.Features, Why: l.Why()})
	}
	if a := m.Apart; a != nil {
		d.PreRelease = &ApartDoc{Path: PreReleaseDir + "/signoff.json", Verdict: a.Verdict(), SignedOff: a.SignedOff(), ExitCode: a.ExitCode()}
		for _, r := range a.Runs {
			d.PreRelease.Columns = append(d.PreRelease.Columns, r.Column())
		}
	}
	defects := map[string]*DefectDoc{}
	var issues []string
	for _, r := range m.Runs {
		why := m.Unsigned(r)
		version := r.Version
		if pre := r.PreRelease(); pre != "" {
			version = pre
		}
		d.Columns = append(d.Columns, ColumnDoc{Key: r.Column(), Release: r.Release, Version: version, PreRelease: r.PreRelease() != "", Features: r.Set(), Allocator: r.Allocator, Unreachable: r.Unreachable,
			Gates: r.Gates, GatesRead: r.GatesRead, Existing: r.Existing, OwnDriver: ownDriver(r), Interrupted: r.Interrupted, ClusterBreaks: r.ClusterBreaks, SignedOff: why == nil, Unsigned: why,
			Requirements: m.Counts(r), OutOfReach: m.OutOfReachWhy(r), Totals: r.Totals,
			Suite: r.SuiteCommit, NodeImage: strings.TrimSpace(r.NodeImage + " " + r.NodeImageID), Components: r.Components})
		for _, s := range r.Specs {
			if s.State != report.KnownDefect {
				continue
			}
			dd := defects[s.Defect]
			if dd == nil {
				dd = &DefectDoc{Issue: s.Defect, URL: issueURL(s.Defect)}
				defects[s.Defect] = dd
				issues = append(issues, s.Defect)
			}
			if !slices.Contains(dd.Columns, r.Column()) {
				dd.Columns = append(dd.Columns, r.Column())
			}
			dd.Specs = append(dd.Specs, DefectSpecSeen{Column: r.Column(), Spec: s.Name, Seen: s.Reason})
		}
	}
	for _, i := range issues {
		d.KnownDefects = append(d.KnownDefects, *defects[i])
	}
	for _, req := range m.Requirements {
		rd := RequirementDoc{Text: req, Verdicts: map[string]Cell{}}
		if q, ok := requirements.Of(req); ok {
			rd.ID = q.ID
		}
		for _, r := range m.Runs {
			rd.Verdicts[r.Column()] = m.Cells[req][r.Column()]
		}
		d.Requirements = append(d.Requirements, rd)
	}
	return d
}

// JSON renders signoff.json.
func (m Matrix) JSON() ([]byte, error) {
	return json.MarshalIndent(m.Document(), "", "  ")
}

// issueURL is an "owner/repo#N" issue's page ("" for any other form).
func issueURL(issue string) string {
	repo, n, ok := strings.Cut(issue, "#")
	if !ok || strings.Count(repo, "/") != 1 || n == "" {
		return ""
	}
	return "https://github.com/" + repo + "/issues/" + n
}

// Write puts signoff.md, signoff.html and signoff.json in dir, and the
// pre-release columns' judged apart in dir's PreReleaseDir; where there
// are none, that folder goes, so that no earlier run's page reads as
// this one's.
func (m Matrix) Write(dir string) error {
	apart := filepath.Join(dir, PreReleaseDir)
	if m.Apart == nil {
		if err := os.RemoveAll(apart); err != nil {
			return err
		}
	} else if err := m.Apart.Write(apart); err != nil {
		return err
	}
	page, err := m.HTML()
	if err != nil {
		return err
	}
	doc, err := m.JSON()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return errors.Join(os.WriteFile(filepath.Join(dir, "signoff.html"), []byte(page), 0o644),
		os.WriteFile(filepath.Join(dir, "signoff.md"), []byte(m.Markdown()), 0o644),
		os.WriteFile(filepath.Join(dir, "signoff.json"), append(doc, '\n'), 0o644))
}
