// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

func TestRowsGroupMovesAndGiveMinMedianMax(t *testing.T) {
	t0 := time.Now()
	r := report.Report{Meta: report.Meta{Release: "1.35"}, Seconds: 600, Totals: report.Totals{Passed: 36},
		Timeline: []timeline.Step{
			{Kind: timeline.KindBuild, Name: "node image kind-e2e/node:v1.35.4-abc", Seconds: 2},
			{Kind: timeline.KindMove, Name: "kube-apiserver DRAAdminAccess=false (to profile apiserver-off)", Started: t0, Seconds: 9},
			{Kind: timeline.KindMove, Name: "kube-apiserver DRAAdminAccess=false (to profile control-plane-off)", Started: t0, Seconds: 12},
			{Kind: timeline.KindMove, Name: "kube-apiserver DRAAdminAccess=false", Started: t0, Seconds: 10},
		}}
	s := newSamples()
	s.fromReport(r)
	s.add(timeline.KindMove, "kube-apiserver DRAAdminAccess=false", 8)
	rows := s.rows()
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	if rows[0].Name != "node image" {
		t.Fatalf("the image tag is not part of the row's name: %+v", rows[0])
	}
	mv := rows[1]
	if mv.N != 4 || mv.Min != 8 || mv.Median != 9.5 || mv.Max != 12 {
		t.Fatalf("apiserver move row %+v", mv)
	}
	md := markdown(rows)
	if !strings.Contains(md, "| move | kube-apiserver DRAAdminAccess=false | 4 | 8.0 s | 9.5 s | 12.0 s |") ||
		!strings.Contains(md, "whole suite, Kubernetes 1.35 (36 passed, 0 failed, 0 skipped) | 1 | 600.0 s") {
		t.Fatalf("markdown:\n%s", md)
	}
}
