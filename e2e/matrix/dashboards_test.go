// SPDX-License-Identifier: Apache-2.0

package matrix

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// What CI dashboards and upstream's jobs read of the suite: TestGrid and
// Spyglass group results by the JUnit test's name, and a job selects specs
// by label. Checked on the suite's own dry run.

// upstreamGate is what upstream's framework.WithFeatureGate gives a spec
// that needs DRAAdminAccess at each maturity, in its order (labels and
// bracketed tags in the name alike): written out from k8s.io/kubernetes
// v1.35.4's test/e2e/framework/ginkgowrapper.go, with the maturity each
// release's own gate registry gives the gate.
var upstreamGate = map[release.GateState][]string{
	release.Alpha:    {"FeatureGate:DRAAdminAccess", "Alpha", "Feature:OffByDefault"},
	release.Beta:     {"FeatureGate:DRAAdminAccess", "Beta"},
	release.GALocked: {"FeatureGate:DRAAdminAccess"},
}

var requirementID = regexp.MustCompile(`^KEP5018-[A-Z]+-\d\d$`)

// idsOf are a spec's labels that are requirement IDs.
func idsOf(labels []string) []string {
	var out []string
	for _, l := range labels {
		if requirementID.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// Every spec of every column carries one KEP requirement's ID, as a label
// and as "[ID]" in its name; a spec of a requirement that needs
// DRAAdminAccess carries upstream's feature-gate labels for the gate's
// maturity in the column's release, in its labels and, bracketed and in
// order, in its name; the others carry none.
func TestEverySpecCarriesItsRequirementAndUpstreamsGateLabels(t *testing.T) {
	columns, err := Columns("all", "all")
	if err != nil {
		t.Fatal(err)
	}
	suite := buildSuite(t)
	for _, col := range columns {
		t.Run(col.Key(), func(t *testing.T) {
			rel, err := release.Get(col.Release)
			if err != nil {
				t.Fatal(err)
			}
			gate := upstreamGate[rel.GateState]
			tags := "[" + strings.Join(gate, "] [") + "]"
			for _, s := range dryRunSpecs(t, suite, col) {
				name, labels := s.FullText(), s.Labels()
				ids := idsOf(labels)
				if len(ids) != 1 {
					t.Errorf("%s: requirement IDs %v, want one", name, ids)
					continue
				}
				req, ok := requirements.ByID(ids[0])
				if !ok {
					t.Errorf("%s: %s is no requirement's ID", name, ids[0])
					continue
				}
				if !strings.Contains(name, " ["+req.ID+"]") {
					t.Errorf("%s: the name lacks [%s]", name, req.ID)
				}
				if !req.NeedsAdminAccess() {
					if slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "FeatureGate:") }) || strings.Contains(name, "[FeatureGate:") {
						t.Errorf("%s (%s, no admin access): labels %v", name, req.ID, labels)
					}
					continue
				}
				for _, l := range gate {
					if !slices.Contains(labels, l) {
						t.Errorf("%s: labels %v lack upstream's %s", name, labels, l)
					}
				}
				if !strings.Contains(name, " "+tags) {
					t.Errorf("%s: the name lacks upstream's %s", name, tags)
				}
				if rel.GateState != release.Alpha && slices.Contains(labels, "Feature:OffByDefault") {
					t.Errorf("%s: Feature:OffByDefault where the gate is %s", name, rel.GateState)
				}
			}
		})
	}
}

// LABELS=<a requirement's ID> runs exactly that requirement's specs: the
// suite accepts the filter and Ginkgo selects by the label, and the specs
// it selects are those named for the requirement, no other.
func TestARequirementsIDSelectsItsSpecs(t *testing.T) {
	suite := buildSuite(t)
	col := Column{Release: "1.35", Features: "defaults"}
	all := dryRunSpecs(t, suite, col)
	for _, c := range []struct {
		id       string
		sentence string // every selected spec's begins so
		count    int    // how many the filter selects
	}{
		{"KEP5018-AUTHZ-01", "denies adminAccess in claims and templates of a namespace without the admin label, and allows it once labelled", 1},
		// One spec per label value that is not exactly "true": True, yes, 1, "".
		{"KEP5018-AUTHZ-03", "does not authorize with the label value ", 4},
	} {
		var selected, named []string
		for _, s := range dryRunSpecs(t, suite, col, "--ginkgo.label-filter="+c.id) {
			if s.State == types.SpecStatePassed {
				selected = append(selected, s.FullText())
				if !strings.HasPrefix(s.LeafNodeText, c.sentence) {
					t.Errorf("%s selects %q", c.id, s.FullText())
				}
			}
		}
		for _, s := range all {
			if strings.HasPrefix(s.LeafNodeText, c.sentence) || strings.Contains(s.FullText(), "["+c.id+"]") {
				named = append(named, s.FullText())
			}
		}
		slices.Sort(selected)
		slices.Sort(named)
		if len(selected) != c.count || !slices.Equal(selected, named) {
			t.Errorf("--label-filter=%s selects %d specs:\n  %s\nthe requirement's are:\n  %s", c.id, len(selected), strings.Join(selected, "\n  "), strings.Join(named, "\n  "))
		}
	}
	// Every ID selects what carries it in its name, also written in lower case.
	for _, r := range requirements.All {
		filter, err := types.ParseLabelFilter(strings.ToLower(r.ID))
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		for _, s := range all {
			if filter(s.Labels()) != strings.Contains(s.FullText(), "["+r.ID+"]") {
				t.Errorf("%s selects %q (labels %v) wrongly", r.ID, s.FullText(), s.Labels())
			}
		}
	}
}

// The JUnit report (junit.xml, what TestGrid and Spyglass read) names each
// spec with its requirement's ID and upstream's gate tags.
func TestJUnitNamesCarryTheRequirementIDs(t *testing.T) {
	suite := buildSuite(t)
	path := filepath.Join(t.TempDir(), "junit.xml")
	dryRunSpecs(t, suite, Column{Release: "1.35", Features: "defaults"}, "--ginkgo.junit-report="+path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Suites []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &junit); err != nil {
		t.Fatal(err)
	}
	tag := regexp.MustCompile(`\[(KEP5018-[A-Z]+-\d\d)\]`)
	specs := 0
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			if !strings.HasPrefix(c.Name, "[It] ") {
				continue
			}
			specs++
			ids := map[string]bool{}
			for _, m := range tag.FindAllStringSubmatch(c.Name, -1) {
				ids[m[1]] = true
			}
			if len(ids) != 1 {
				t.Errorf("JUnit test %q names requirements %v, want one", c.Name, ids)
			}
		}
	}
	if specs == 0 {
		t.Fatalf("junit.xml has no spec:\n%s", data)
	}
	want := "[It] Admin access authorization denies adminAccess in claims and templates of a namespace without the admin label, and allows it once labelled" +
		" [KEP5018-AUTHZ-01] [FeatureGate:DRAAdminAccess] [Beta] [authz, KEP5018-AUTHZ-01, FeatureGate:DRAAdminAccess, Beta]"
	if !strings.Contains(string(data), `name="`+want+`"`) {
		t.Errorf("junit.xml has no test named %q", want)
	}
}
