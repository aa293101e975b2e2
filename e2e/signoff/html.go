// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// HTML renders signoff.html: one file, styles inline, no script and nothing
// fetched, so it opens anywhere, offline.
func (m Matrix) HTML() (string, error) {
	type link struct{ Text, URL string }
	type cellView struct {
		Class, Text, Link string
		Reasons           []string
		Defects           []link
	}
	type rowView struct {
		Requirement string
		Cells       []cellView
	}
	var rows []rowView
	for _, req := range m.Requirements {
		rv := rowView{Requirement: Label(req)}
		for _, r := range m.Runs {
			c := m.Cells[req][r.Column()]
			class := strings.ReplaceAll(c.State, " ", "-")
			switch {
			case class == "":
				class = "none"
			case c.Standing == OutOfReach:
				class = "out-of-reach"
			}
			cv := cellView{Class: class, Text: c.summary(), Link: c.Link, Reasons: c.Reasons}
			for _, d := range c.Defects {
				cv.Defects = append(cv.Defects, link{d, issueURL(d)})
			}
			rv.Cells = append(rv.Cells, cv)
		}
		rows = append(rows, rv)
	}
	var buf bytes.Buffer
	err := page.Execute(&buf, map[string]any{
		"Verdict": m.Verdict(), "Signed": m.SignedOff(), "Apart": apartView(m.Apart),
		"Headings": headings(m.Runs), "Rows": rows, "Provenance": m.provenance(), "Note": standingNote,
		"KEP": link{kepText, requirements.KEPReadme}, "KEPIssue": link{kepIssue, requirements.KEPIssue},
		"Defects": m.Document().KnownDefects, "DefectsNote": defectsNote, "LeftOut": m.leftOutList(), "LeftOutNote": leftOutNote,
	})
	return buf.String(), err
}

// apartView is what the page says of the pre-release columns judged
// apart, nil where there are none.
func apartView(a *Matrix) map[string]string {
	if a == nil {
		return nil
	}
	return map[string]string{"Columns": columnList(a.Runs), "Note": apartNote, "Link": PreReleaseDir + "/signoff.html", "Verdict": a.Verdict()}
}

func headings(runs []report.Report) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = Heading(r)
	}
	return out
}

var page = template.Must(template.New("signoff").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>DRA admin access (KEP-5018) sign-off</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin-bottom:2em}
th,td{border:1px solid #bbb;padding:.4em .6em;vertical-align:top;text-align:left}
th{background:#eee}
td.passed{background:#dff5df}
td.failed{background:#f9d6d5;font-weight:bold}
td.skipped{background:#fff4cc}
td.out-of-reach{background:#e3ecf7}
td.known-defect{background:#e6dcf5}
td.not-run,td.none{background:#f4f4f4;color:#777}
.verdict{font-size:1.2em;padding:.6em;border:2px solid}
.signed{border-color:#3a3;background:#dff5df}
.notsigned{border-color:#c33;background:#f9d6d5}
small{display:block;font-weight:normal;color:#555}
</style></head><body>
<h1>DRA admin access (KEP-5018) sign-off</h1>
<p class="verdict {{if .Signed}}signed{{else}}notsigned{{end}}" id="verdict">{{.Verdict}}.</p>
<p id="kep">The rows are the requirements of <a href="{{.KEP.URL}}">{{.KEP.Text}}</a> (<a href="{{.KEPIssue.URL}}">{{.KEPIssue.Text}}</a>), each by its ID.</p>
<p>{{.Note}}</p>
{{with .Apart}}<p id="prerelease"><strong>Pre-release columns, judged apart</strong> ({{.Columns}}): {{.Note}} <a href="{{.Link}}">{{.Link}}</a>: {{.Verdict}}.</p>
{{end}}{{if .LeftOut}}<p id="left-out"><strong>Left out</strong>: {{.LeftOut}}. {{.LeftOutNote}}</p>
{{end}}<table id="matrix"><thead><tr><th>KEP requirement</th>{{range .Headings}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td>{{.Requirement}}</td>{{range .Cells}}<td class="{{.Class}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{range .Defects}} {{if .URL}}<a href="{{.URL}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{end}}{{range .Reasons}}<small>{{.}}</small>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{if .Defects}}<h2>Known upstream defects</h2>
<p>{{.DefectsNote}}</p>
<ul id="defects">{{range .Defects}}<li>{{if .URL}}<a href="{{.URL}}">{{.Issue}}</a>{{else}}{{.Issue}}{{end}}: {{range $i, $c := .Columns}}{{if $i}}, {{end}}{{$c}}{{end}} ({{len .Specs}} spec{{if ne (len .Specs) 1}}s{{end}})</li>
{{end}}</ul>
{{end}}<h2>Provenance</h2>
{{range .Provenance}}<h3>Kubernetes {{.Column}}</h3><table>{{range .Rows}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{end}}</body></html>
`))
