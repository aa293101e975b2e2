// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// samples gathers durations (seconds) per benchmark row, in first-seen order.
type samples struct {
	order []string
	kind  map[string]string
	secs  map[string][]float64
}

func newSamples() *samples {
	return &samples{kind: map[string]string{}, secs: map[string][]float64{}}
}

func (s *samples) add(kind, name string, seconds float64) {
	if _, ok := s.secs[name]; !ok {
		s.order = append(s.order, name)
		s.kind[name] = kind
	}
	s.secs[name] = append(s.secs[name], seconds)
}

// profileSuffix is what moveToProfile adds to a move's name; a bench row
// counts the same component and value together, whatever profile it led to.
var profileSuffix = regexp.MustCompile(` \(to profile [^)]*\)$`)

// fromReport adds a suite run's timeline and its whole duration.
func (s *samples) fromReport(r report.Report) {
	for _, step := range r.Timeline {
		name := step.Name
		switch step.Kind {
		case timeline.KindMove:
			name = profileSuffix.ReplaceAllString(name, "")
		case timeline.KindBuild:
			// "node image kind-e2e/node:v1.35.4-..." -> "node image"
			for _, prefix := range []string{"next release node image", "node image", "test driver image"} {
				if strings.HasPrefix(name, prefix) {
					name = prefix
					break
				}
			}
		}
		s.add(step.Kind, name, step.Seconds)
	}
	if p, ok := timeline.SplitPhases(r.Timeline); ok {
		s.add("phase", "parallel part (groups shared out between processes)", p.Parallel.Seconds())
		s.add("phase", "Serial part (one group after another)", p.Serial.Seconds())
	}
	s.add("suite", fmt.Sprintf("whole suite, Kubernetes %s (%d passed, %d failed, %d skipped)", r.Release, r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped), r.Seconds)
}

type row struct {
	Kind, Name       string
	N                int
	Min, Median, Max float64
}

func median(v []float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func (s *samples) rows() []row {
	var out []row
	for _, name := range s.order {
		v := s.secs[name]
		r := row{Kind: s.kind[name], Name: name, N: len(v), Min: v[0], Max: v[0], Median: median(v)}
		for _, x := range v {
			r.Min, r.Max = min(r.Min, x), max(r.Max, x)
		}
		out = append(out, r)
	}
	return out
}

// markdown is the benchmark table.
func markdown(rows []row) string {
	var b strings.Builder
	b.WriteString("| kind | step | n | min | median | max |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f s | %.1f s | %.1f s |\n", r.Kind, strings.ReplaceAll(r.Name, "|", `\|`), r.N, r.Min, r.Median, r.Max)
	}
	return b.String()
}
