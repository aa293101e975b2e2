// SPDX-License-Identifier: Apache-2.0

package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// withPreRelease gives the matrix the release table with a row for the
// next minor, a pre-release kind publishes no image of, as 1.38's will be
// ("1.38.0-beta.0"): 1.37's row under the next minor's name, which the
// matrix reads only for its feature sets.
func withPreRelease(t *testing.T) string {
	t.Helper()
	minors := release.Minors()
	newest, err := release.Get(minors[len(minors)-1])
	if err != nil {
		t.Fatal(err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(newest.Minor, "%d.%d", &major, &minor); err != nil {
		t.Fatal(err)
	}
	next := newest
	next.Minor = fmt.Sprintf("%d.%d", major, minor+1)
	next.Version, next.Published = next.Minor+".0-beta.0", ""
	saved := table
	t.Cleanup(func() { table = saved })
	table.minors = func() []string { return append(slices.Clone(minors), next.Minor) }
	table.get = func(name string) (release.Release, error) {
		if name == next.Minor {
			return next, nil
		}
		return release.Get(name)
	}
	return next.Minor
}

// The releases built offline are those of the run whose row kind
// publishes no image of, once each however many feature sets they list:
// in the table today 1.33 alone.
func TestOfflineAreTheUnpublishedReleasesOfTheRun(t *testing.T) {
	var unpublished []string
	for _, m := range release.Minors() {
		if r, _ := release.Get(m); r.Published == "" {
			unpublished = append(unpublished, m)
		}
	}
	for _, c := range []struct {
		releases string
		want     []string
	}{{"all", unpublished}, {release.Default, []string{}}} {
		cols, err := Columns(c.releases, "all")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Offline(cols)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Offline(%s) = %q, %v; want %q", c.releases, got, err, c.want)
		}
		var out bytes.Buffer
		if err := Print(&out, "offline", c.releases, "all", ""); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c.want)
		if out.String() != string(want)+"\n" {
			t.Errorf("--format offline --releases %s printed %q; want %s", c.releases, out.String(), want)
		}
	}
}

// A row for 1.38, a pre-release kind publishes no image of: every run of
// all releases (a push, the weekly run) has its columns and cells, a
// dispatch can ask for it alone, and it is built offline beside 1.33.
func TestANewPreReleaseRowJoinsTheMatrixAndIsBuiltOffline(t *testing.T) {
	next := withPreRelease(t)
	cols, err := Columns("all", "all")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cols, func(c Column) bool { return c.Key() == next+" "+release.DefaultSet }) {
		t.Errorf("the columns of all releases lack %s %s: %v", next, release.DefaultSet, cols)
	}
	offline, err := Offline(cols)
	if err != nil || len(offline) == 0 || offline[len(offline)-1] != next || slices.Index(offline, next) != len(offline)-1 {
		t.Errorf("offline %q, %v: want %s last, once", offline, err, next)
	}
	var out bytes.Buffer
	if err := Print(&out, "github", "all", "all", ""); err != nil {
		t.Fatal(err)
	}
	var cells struct{ Include []Cell }
	if err := json.Unmarshal(out.Bytes(), &cells); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cells.Include {
		if c.Release == next {
			n++
		}
	}
	if want := len(Groups) * countOf(cols, next); n != want || n == 0 {
		t.Errorf("%d cells of %s in the workflow's matrix; want %d", n, next, want)
	}
	if one, err := Columns(next, release.DefaultSet); err != nil || len(one) != 1 {
		t.Errorf("a dispatch of %s alone: %v, %v", next, one, err)
	}
}

func countOf(cols []Column, rel string) int {
	n := 0
	for _, c := range cols {
		if c.Release == rel {
			n++
		}
	}
	return n
}
