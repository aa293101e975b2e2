// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// ReadDocument reads a signoff.json. A file of another schema version is
// refused: its fields may mean something else, and a comparison would then
// report changes that are only the format's.
func ReadDocument(path string) (Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Document{}, err
	}
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return Document{}, fmt.Errorf("%s: %w", path, err)
	}
	if d.SchemaVersion != JSONSchemaVersion {
		return Document{}, fmt.Errorf("%s is of schema version %d; this signoff reads version %d", path, d.SchemaVersion, JSONSchemaVersion)
	}
	return d, nil
}

// Diff is what changed from one sign-off to a later one: the overall
// verdict, columns added, gone or changed, each requirement's verdict that
// moved in a column both have, and the known upstream defects that
// appeared or expired.
type Diff struct {
	OldSignedOff, NewSignedOff bool
	OldVerdict, NewVerdict     string
	ColumnsAdded, ColumnsGone  []ColumnDoc
	ColumnsChanged             []ColumnChange
	Moves                      []VerdictMove
	// RequirementsAdded and RequirementsGone are rows only one of the two
	// has (a requirement added to the list, or one no spec names any more).
	RequirementsAdded, RequirementsGone []string
	DefectsAppeared, DefectsExpired     []DefectInColumn
}

// ColumnChange is a column both sign-offs have whose standing, allocator
// or Kubernetes version changed.
type ColumnChange struct {
	Key                        string
	OldSignedOff, NewSignedOff bool
	// Why is why the newer column is not signed off (empty when it is).
	Why                              []string
	OldAllocator, NewAllocator       string
	OldVersion, NewVersion           string
	OldRequirements, NewRequirements Counts
}

// VerdictMove is one requirement in one column whose verdict moved.
type VerdictMove struct {
	Requirement string // "KEP5018-AUTHZ-01", or the text where it has no ID
	Column      string
	Was, Now    string
	// Reasons are the newer cell's (a failure's first line, a skip's
	// declaration), so that a move to failed says why.
	Reasons []string
}

// DefectInColumn is a known upstream defect met in a column.
type DefectInColumn struct {
	Issue, URL, Column string
}

// Compare says what changed from the older sign-off to the newer.
func Compare(older, newer Document) Diff {
	d := Diff{OldSignedOff: older.SignedOff, NewSignedOff: newer.SignedOff, OldVerdict: older.Verdict, NewVerdict: newer.Verdict}
	oldColumns, newColumns := columnsByKey(older), columnsByKey(newer)
	for _, c := range newer.Columns {
		o, ok := oldColumns[c.Key]
		if !ok {
			d.ColumnsAdded = append(d.ColumnsAdded, c)
			continue
		}
		// A version moves only between two known: a sign-off written
		// before columns named theirs is no change of patch.
		moved := o.Version != "" && c.Version != "" && o.Version != c.Version
		if o.SignedOff != c.SignedOff || o.Allocator != c.Allocator || moved {
			change := ColumnChange{Key: c.Key, OldSignedOff: o.SignedOff, NewSignedOff: c.SignedOff,
				Why: c.Unsigned, OldAllocator: o.Allocator, NewAllocator: c.Allocator, OldRequirements: o.Requirements, NewRequirements: c.Requirements}
			if moved {
				change.OldVersion, change.NewVersion = o.Version, c.Version
			}
			d.ColumnsChanged = append(d.ColumnsChanged, change)
		}
	}
	for _, c := range older.Columns {
		if _, ok := newColumns[c.Key]; !ok {
			d.ColumnsGone = append(d.ColumnsGone, c)
		}
	}

	oldRows := map[string]RequirementDoc{}
	for _, r := range older.Requirements {
		oldRows[rowKey(r)] = r
	}
	newRows := map[string]bool{}
	for _, r := range newer.Requirements {
		newRows[rowKey(r)] = true
		o, ok := oldRows[rowKey(r)]
		if !ok {
			d.RequirementsAdded = append(d.RequirementsAdded, rowName(r))
			continue
		}
		// Columns in the newer sign-off's order; a column only one of the
		// two has is a column added or gone, said above, not a move of
		// each of its requirements.
		for _, c := range newer.Columns {
			if _, inOld := oldColumns[c.Key]; !inOld {
				continue
			}
			was, now := cellVerdict(o.Verdicts[c.Key]), cellVerdict(r.Verdicts[c.Key])
			if was != now {
				d.Moves = append(d.Moves, VerdictMove{Requirement: rowName(r), Column: c.Key, Was: was, Now: now, Reasons: r.Verdicts[c.Key].Reasons})
			}
		}
	}
	for _, r := range older.Requirements {
		if !newRows[rowKey(r)] {
			d.RequirementsGone = append(d.RequirementsGone, rowName(r))
		}
	}

	oldDefects, newDefects := defectsIn(older), defectsIn(newer)
	for _, x := range newDefects {
		if !slices.Contains(oldDefects, x) {
			d.DefectsAppeared = append(d.DefectsAppeared, x)
		}
	}
	for _, x := range oldDefects {
		if !slices.Contains(newDefects, x) {
			d.DefectsExpired = append(d.DefectsExpired, x)
		}
	}
	return d
}

func columnsByKey(d Document) map[string]ColumnDoc {
	out := map[string]ColumnDoc{}
	for _, c := range d.Columns {
		out[c.Key] = c
	}
	return out
}

// rowKey identifies a requirement across sign-offs: its ID, which stays
// when its wording is edited, or its text where it has none.
func rowKey(r RequirementDoc) string {
	if r.ID != "" {
		return "id:" + r.ID
	}
	return "text:" + r.Text
}

func rowName(r RequirementDoc) string {
	if r.ID != "" {
		return r.ID
	}
	return r.Text
}

// cellVerdict is a cell in one word or two: its state, and for a skip
// which kind (not applicable, out of reach), since a requirement moving
// from one to the other is a change a release team reads.
func cellVerdict(c Cell) string {
	switch c.State {
	case "":
		return "no spec"
	case "skipped":
		return c.Standing
	}
	return c.State
}

func defectsIn(d Document) []DefectInColumn {
	var out []DefectInColumn
	for _, x := range d.KnownDefects {
		for _, c := range x.Columns {
			out = append(out, DefectInColumn{Issue: x.Issue, URL: x.URL, Column: c})
		}
	}
	return out
}

// Unchanged says whether nothing a release team reads changed.
func (d Diff) Unchanged() bool {
	return d.OldSignedOff == d.NewSignedOff && len(d.ColumnsAdded)+len(d.ColumnsGone)+len(d.ColumnsChanged)+len(d.Moves)+
		len(d.RequirementsAdded)+len(d.RequirementsGone)+len(d.DefectsAppeared)+len(d.DefectsExpired) == 0
}

func signedWord(signed bool) string {
	if signed {
		return "signed off"
	}
	return "not signed off"
}

// Markdown renders the diff for a job summary or a terminal: the overall
// verdict first, then columns, requirements and defects, each part only
// where something changed.
func (d Diff) Markdown() string {
	var b strings.Builder
	switch {
	case d.OldSignedOff != d.NewSignedOff:
		fmt.Fprintf(&b, "**Sign-off: %s → %s.** Now: %s.\n\n", signedWord(d.OldSignedOff), signedWord(d.NewSignedOff), d.NewVerdict)
	default:
		fmt.Fprintf(&b, "**Sign-off: %s, as before.**\n\n", signedWord(d.NewSignedOff))
	}
	if d.Unchanged() {
		b.WriteString("No column, requirement verdict or known upstream defect changed.\n")
		return b.String()
	}
	if len(d.ColumnsAdded)+len(d.ColumnsGone)+len(d.ColumnsChanged) > 0 {
		b.WriteString("### Columns\n\n")
		for _, c := range d.ColumnsAdded {
			fmt.Fprintf(&b, "- added: %s%s, %s\n", c.Key, allocatorNote(c.Allocator), signedWord(c.SignedOff))
		}
		for _, c := range d.ColumnsGone {
			fmt.Fprintf(&b, "- gone: %s%s (was %s)\n", c.Key, allocatorNote(c.Allocator), signedWord(c.SignedOff))
		}
		for _, c := range d.ColumnsChanged {
			var parts []string
			if c.OldSignedOff != c.NewSignedOff {
				s := signedWord(c.OldSignedOff) + " → " + signedWord(c.NewSignedOff)
				if len(c.Why) > 0 {
					s += " (" + strings.Join(c.Why, "; ") + ")"
				}
				parts = append(parts, s, "requirements "+c.OldRequirements.String()+" → "+c.NewRequirements.String())
			}
			if c.OldAllocator != c.NewAllocator {
				parts = append(parts, "allocator "+orUnknown(c.OldAllocator)+" → "+orUnknown(c.NewAllocator))
			}
			if c.OldVersion != c.NewVersion {
				parts = append(parts, "Kubernetes v"+c.OldVersion+" → v"+c.NewVersion)
			}
			fmt.Fprintf(&b, "- %s: %s\n", c.Key, strings.Join(parts, "; "))
		}
		b.WriteString("\n")
	}
	if len(d.Moves)+len(d.RequirementsAdded)+len(d.RequirementsGone) > 0 {
		b.WriteString("### Requirements\n\n")
		if len(d.Moves) > 0 {
			b.WriteString("| requirement | column | was | now | why |\n|---|---|---|---|---|\n")
			for _, m := range d.Moves {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", report.Cell(m.Requirement), report.Cell(m.Column), m.Was, m.Now, report.Cell(strings.Join(m.Reasons, "; ")))
			}
			b.WriteString("\n")
		}
		for _, r := range d.RequirementsAdded {
			fmt.Fprintf(&b, "- new requirement: %s\n", r)
		}
		for _, r := range d.RequirementsGone {
			fmt.Fprintf(&b, "- requirement no longer listed: %s\n", r)
		}
		if len(d.RequirementsAdded)+len(d.RequirementsGone) > 0 {
			b.WriteString("\n")
		}
	}
	if len(d.DefectsAppeared)+len(d.DefectsExpired) > 0 {
		b.WriteString("### Known upstream defects\n\n")
		for _, x := range d.DefectsAppeared {
			fmt.Fprintf(&b, "- appeared: %s in %s\n", defectLink(x), x.Column)
		}
		for _, x := range d.DefectsExpired {
			// The suite fails a declared defect that does not show, so one
			// gone from a column had its row removed (fixed upstream), or
			// its spec did not get that far this time.
			fmt.Fprintf(&b, "- expired: %s in %s (no longer met there)\n", defectLink(x), x.Column)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func allocatorNote(a string) string {
	if a == "" {
		return ""
	}
	return " (allocator " + a + ")"
}

func defectLink(x DefectInColumn) string {
	if x.URL == "" {
		return x.Issue
	}
	return "[" + x.Issue + "](" + x.URL + ")"
}
