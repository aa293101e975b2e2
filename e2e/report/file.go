// SPDX-License-Identifier: Apache-2.0

package report

// report.json on disk: its schema version, and reading one written by an
// older suite as the current schema says.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
)

// SchemaVersion is report.json's format; it changes when a field changes meaning.
// 3: a spec an interrupt stopped mid-run is "cut short" (Totals.CutShort),
// no longer "failed"; Read reads the older form as the newer.
// 4: the cluster's breaks (ClusterBreaks) and the specs that ran while
// one was open, "cluster broke" (Totals.ClusterBroke); older reports have
// neither, and read as runs whose cluster did not break.
const SchemaVersion = 4

// WriteJSON writes report.json.
func (r Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Read loads a report.json, one of an older schema as the current one.
func Read(path string) (Report, error) {
	var r Report
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, err
	}
	r.upgrade()
	return r, nil
}

// upgrade reads a report written before schema 3 as one of 3: that suite
// counted a spec an interrupt stopped mid-run as failed, with Ginkgo's
// interrupt message for its reason, and a suite node it stopped as a suite
// problem; an interrupted run's sign-off read them as failed requirements.
func (r *Report) upgrade() {
	if r.SchemaVersion >= 3 || !r.Interrupted {
		if r.SchemaVersion < SchemaVersion {
			r.SchemaVersion = SchemaVersion
		}
		return
	}
	for i, s := range r.Specs {
		if s.State == "failed" && slices.Contains(interruptMessages, s.Reason) {
			r.Specs[i].State = CutShort
			r.Totals.Failed--
			r.Totals.CutShort++
		}
	}
	r.Problems = slices.DeleteFunc(r.Problems, func(p string) bool {
		_, message, _ := strings.Cut(p, ": ")
		return slices.Contains(interruptMessages, message)
	})
	r.SchemaVersion = SchemaVersion
}
