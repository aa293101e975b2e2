// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// bitsStatus is the file a getter of release bits that runs beside a suite
// (e2e-cluster upgrade-bits, started by the runner) leaves for the suite:
// the bits, or why there are none.
type bitsStatus struct {
	// Getter is the process getting the bits, until they or an error are
	// written: a reader that finds it gone stops waiting (a getter killed,
	// or one whose last write failed, says nothing more).
	Getter  int                          `json:"getter,omitempty"`
	Version string                       `json:"version,omitempty"`
	Image   string                       `json:"image,omitempty"`
	Dir     string                       `json:"dir,omitempty"`
	Images  map[profile.Component]string `json:"images,omitempty"`
	Error   string                       `json:"error,omitempty"`
}

// ErrNoBitsStatus is ReadBitsStatus's answer where no getter has written
// the file yet.
var ErrNoBitsStatus = errors.New("no status of the release bits yet")

// WriteBitsPending writes file, atomically, to say that process pid is
// getting the bits: e2e-cluster upgrade-bits writes it first.
func WriteBitsPending(file string, pid int) error { return writeStatus(file, bitsStatus{Getter: pid}) }

// WriteBitsStatus writes file, atomically: bits, or err where getting
// them failed.
func WriteBitsStatus(file string, bits *ReleaseBits, err error) error {
	if err != nil {
		return writeStatus(file, bitsStatus{Error: err.Error()})
	}
	return writeStatus(file, bitsStatus{Version: bits.Release.Version, Image: bits.Image, Dir: bits.Dir, Images: bits.Images})
}

func writeStatus(file string, st bitsStatus) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}

// EndBitsStatus is for whoever waited for the getter's end: where the file
// is missing or still says the getter is at work, it writes reason, so
// that a reader stops waiting (a getter killed says nothing more, and its
// pid may already be another process's).
func EndBitsStatus(file string, reason error) error {
	data, err := os.ReadFile(file)
	var st bitsStatus
	if err == nil && json.Unmarshal(data, &st) == nil && (st.Version != "" || st.Error != "") {
		return nil
	}
	return WriteBitsStatus(file, nil, reason)
}

// ReadBitsStatus reads what WriteBitsStatus wrote of release r's bits:
// done is false while there is no file yet (err ErrNoBitsStatus) and while
// its getter runs; once done, err is the getter's failure, a getter that
// ended without a word, or a file that does not describe whole bits of r.
func ReadBitsStatus(file string, r release.Release) (bits *ReleaseBits, done bool, err error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, ErrNoBitsStatus
	}
	if err != nil {
		return nil, true, err
	}
	var st bitsStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, true, fmt.Errorf("%s: %w", file, err)
	}
	if st.Error != "" {
		return nil, true, errors.New(st.Error)
	}
	if st.Version == "" && st.Getter != 0 {
		if alive(st.Getter) {
			return nil, false, nil
		}
		// It may have written its last word and ended between the read
		// and the look: read once more before calling it silent.
		if again, err := os.ReadFile(file); err == nil && string(again) != string(data) {
			return ReadBitsStatus(file, r)
		}
		return nil, true, fmt.Errorf("the process getting them (pid %d) ended without saying what it got (%s)", st.Getter, file)
	}
	at, err := r.AtPatch(st.Version)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", file, err)
	}
	bits = &ReleaseBits{Release: at, Image: st.Image, Dir: st.Dir, Images: st.Images}
	for _, comp := range profile.ControlPlane {
		if bits.Images[comp] == "" {
			return nil, true, fmt.Errorf("%s: no image of %s", file, comp)
		}
	}
	if _, err := os.Stat(bits.Kubelet()); err != nil {
		return nil, true, fmt.Errorf("%s: %w", file, err)
	}
	if err := checkTar(bits.Archive()); err != nil {
		return nil, true, err
	}
	return bits, true, nil
}

// alive says whether process pid exists (signal 0 checks without sending).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
