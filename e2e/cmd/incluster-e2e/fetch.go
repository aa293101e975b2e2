// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
)

// fetch copies the results out of the Job's output container, through the
// API (an exec of the suite image's own packer: the image has no tar for
// kubectl cp), then tells the container it may end.
func (j *jobRun) fetch(ctx context.Context, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	var archive, stderr bytes.Buffer
	if err := j.exec(ctx, []string{"/incluster", "pack", suitejob.ResultsDir}, &archive, &stderr); err != nil {
		return fmt.Errorf("copying the results out of pod %s: %w (%s)", j.pod, err, strings.TrimSpace(stderr.String()))
	}
	if err := unpack(&archive, dir); err != nil {
		return fmt.Errorf("the results of pod %s: %w", j.pod, err)
	}
	if err := j.exec(ctx, []string{"/incluster", "release", suitejob.ResultsDir}, io.Discard, &stderr); err != nil {
		j.say("the output container was not told the results were fetched (%v); it ends with the namespace", err)
	}
	return nil
}

func (j *jobRun) exec(ctx context.Context, command []string, stdout, stderr io.Writer) error {
	return observe.ExecCommand(ctx, j.config, j.client, j.namespace, j.pod, suitejob.OutputContainer, command, stdout, stderr)
}

// unpack writes a gzipped tar's regular files under dir; a name that would
// land outside dir is refused.
func unpack(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if rel, err := filepath.Rel(dir, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("the archive names %q, outside the results", h.Name)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
}

// verdictOf is the sign-off's line for the results and its exit code
// (signoff.Exit*), as the Job wrote it beside them.
func verdictOf(results string) (string, int, error) {
	m, err := suitejob.Signoff(results)
	if err != nil {
		return "", signoff.ExitFailed, err
	}
	return m.Verdict(), m.ExitCode(), nil
}

// listFiles is dir's files, relative and sorted, on one line.
func listFiles(dir string) string {
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return strings.Join(files, " ")
}
