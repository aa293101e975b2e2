// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"strings"
	"time"
)

// SerialMark is what the e2e framework puts in the name of a Serial group.
const SerialMark = "[Serial]"

// Phases splits a run's spec groups in two: the parallel part, from the
// first group's start to the first Serial group's, where Ginkgo's
// processes share the groups out; and the Serial part, from there to the
// end of the last group, one group after another (Ginkgo runs Serial specs
// last, on one process). The Serial part is what every column of a
// sign-off waits for, one group at a time: its groups are listed with
// their share of it.
type Phases struct {
	Parallel, Serial time.Duration
	SerialGroups     []Step
}

// SplitPhases reads the phases from the group steps of a timeline; ok is
// false where it has no group.
func SplitPhases(steps []Step) (p Phases, ok bool) {
	var first, firstSerial, end time.Time
	for _, s := range steps {
		if s.Kind != KindGroup || s.Started.IsZero() {
			continue
		}
		if first.IsZero() || s.Started.Before(first) {
			first = s.Started
		}
		if done := s.Started.Add(time.Duration(s.Seconds * float64(time.Second))); done.After(end) {
			end = done
		}
		if strings.Contains(s.Name, SerialMark) {
			p.SerialGroups = append(p.SerialGroups, s)
			if firstSerial.IsZero() || s.Started.Before(firstSerial) {
				firstSerial = s.Started
			}
		}
	}
	if first.IsZero() {
		return p, false
	}
	if firstSerial.IsZero() {
		firstSerial = end
	}
	p.Parallel, p.Serial = firstSerial.Sub(first), end.Sub(firstSerial)
	return p, true
}

// Share is a Serial group's part of the Serial part, 0 to 1.
func (p Phases) Share(s Step) float64 {
	if p.Serial <= 0 {
		return 0
	}
	return s.Seconds / p.Serial.Seconds()
}
