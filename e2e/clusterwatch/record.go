// SPDX-License-Identifier: Apache-2.0

package clusterwatch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
)

// The files Ginkgo's processes share, in the run's artifacts folder (every
// process of a run sees it: one machine, or one container of the suite's
// Job). Moves: any process that moves the cluster appends a line when a
// move begins and one when it ends, and the watcher (process 1) reads what
// is new each second. Breaks: the watcher writes every break it declared
// whenever that changes, and each process reads it before a spec and each
// second while one runs.

// MovesFile and BreaksFile are the files' names in the artifacts folder.
const (
	MovesFile  = ".suite-moves"
	BreaksFile = ".cluster-breaks"
)

var moveSeq atomic.Int64

// BeginMove appends the start of one of the suite's moves to the moves
// file and returns what appends its end. A move whose line cannot be
// written is said on the error: the watcher would take it for a break.
func BeginMove(path, what string) (end func(), err error) {
	id := fmt.Sprintf("%d-%d", os.Getpid(), moveSeq.Add(1))
	what = strings.ReplaceAll(what, "\n", " ")
	if err := appendLine(path, fmt.Sprintf("begin\t%s\t%d\t%s", id, time.Now().UnixNano(), what)); err != nil {
		return func() {}, err
	}
	return func() { appendLine(path, fmt.Sprintf("end\t%s\t%d", id, time.Now().UnixNano())) }, nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	// One write per line: O_APPEND keeps lines of several processes whole.
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// MoveReader reads the moves file from where it last stopped.
type MoveReader struct {
	Path   string
	offset int64
}

// ApplyTo gives the tracker the windows begun and ended since the last
// call. A line not yet whole (no newline) is read next time.
func (r *MoveReader) ApplyTo(t *Tracker) error {
	f, err := os.Open(r.Path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(r.offset, 0); err != nil {
		return err
	}
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return nil // the rest is not a whole line yet
		}
		r.offset += int64(len(line))
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), "\t", 4)
		if len(fields) < 3 {
			continue
		}
		ns, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, ns)
		switch {
		case fields[0] == "begin" && len(fields) == 4:
			t.Begin(fields[1], fields[3], at)
		case fields[0] == "end":
			t.End(fields[1], at)
		}
	}
}

// WriteBreaks replaces the breaks file with all (written aside, then
// renamed: a reader never sees half of it).
func WriteBreaks(path string, all []Break) error {
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cluster-breaks-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadBreaks reads the breaks file; none where it is not there.
func ReadBreaks(path string) ([]Break, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []Break
	return all, json.Unmarshal(data, &all)
}

// Say is the open breaks in one line, for a spec's failure: "the cluster
// broke under the run, not by the suite's doing: node s135-worker NotReady
// from 06:41:37"; those after a move of the suite's said as such; "" where
// none is open.
func Say(all []Break) string {
	self, moved := clusterbreak.ByItself(OpenBreaks(all))
	var out []string
	if len(self) > 0 {
		out = append(out, "the cluster broke under the run, not by the suite's doing: "+clusterbreak.Text(self))
	}
	if len(moved) > 0 {
		out = append(out, "not back after the suite's own move: "+clusterbreak.Text(moved))
	}
	return strings.Join(out, "; ")
}
