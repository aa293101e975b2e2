// SPDX-License-Identifier: Apache-2.0

// Package cdi writes the Container Device Interface specs through which the
// test driver hands prepared devices to containers. A device is visible to a
// container only as environment variables, which is all a conformance spec
// needs to see: which device, for which claim, with or without admin access.
package cdi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Version is the CDI spec version written; env edits exist since 0.3.0 and
// every containerd 2.x reads 0.5.0.
const Version = "0.5.0"

// Class is the CDI device class under the driver's vendor name.
const Class = "device"

// Device is one prepared device of one claim.
type Device struct {
	Name        string // device name in the ResourceSlice
	AdminAccess bool
	// ExtraEnv comes from the claim's opaque configuration.
	ExtraEnv map[string]string
}

// Spec is the CDI document for one claim.
type Spec struct {
	CDIVersion string      `json:"cdiVersion"`
	Kind       string      `json:"kind"`
	Devices    []CDIDevice `json:"devices"`
}

// CDIDevice is a device entry of a CDI spec.
type CDIDevice struct {
	Name           string         `json:"name"`
	ContainerEdits ContainerEdits `json:"containerEdits"`
}

// ContainerEdits are the edits a CDI device applies.
type ContainerEdits struct {
	Env []string `json:"env,omitempty"`
}

// Writer writes and removes per-claim spec files in a folder the container
// runtime reads (/var/run/cdi).
type Writer struct {
	Dir    string
	Vendor string // the driver name
}

// Kind is the CDI kind of this driver's devices.
func (w Writer) Kind() string { return w.Vendor + "/" + Class }

// cdiName is unique per claim and device, so a runtime's cached spec for an
// earlier claim can never be mistaken for this one.
func cdiName(claimUID, device string) string { return claimUID + "-" + device }

// BuildSpec returns the spec of one claim's devices and the CDI device IDs to
// hand to the kubelet, in device order.
func (w Writer) BuildSpec(claimUID string, devices []Device) (Spec, []string) {
	spec := Spec{CDIVersion: Version, Kind: w.Kind()}
	var ids []string
	for _, d := range devices {
		env := []string{
			contract.DeviceEnv(d.Name) + "=" + claimUID,
			contract.AdminAccessEnv + "=" + contract.AdminAccessValue(d.AdminAccess),
			contract.ClaimUIDEnv + "=" + claimUID,
		}
		keys := make([]string, 0, len(d.ExtraEnv))
		for k := range d.ExtraEnv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+d.ExtraEnv[k])
		}
		name := cdiName(claimUID, d.Name)
		spec.Devices = append(spec.Devices, CDIDevice{Name: name, ContainerEdits: ContainerEdits{Env: env}})
		ids = append(ids, w.Kind()+"="+name)
	}
	return spec, ids
}

// Path is the spec file of a claim.
func (w Writer) Path(claimUID string) string {
	return filepath.Join(w.Dir, strings.ReplaceAll(w.Vendor, "/", "_")+"-"+claimUID+".json")
}

// Write writes a claim's spec file atomically and returns its CDI device IDs.
func (w Writer) Write(claimUID string, devices []Device) ([]string, error) {
	spec, ids := w.BuildSpec(claimUID, devices)
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return nil, err
	}
	tmp := w.Path(claimUID) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return nil, err
	}
	return ids, os.Rename(tmp, w.Path(claimUID))
}

// Remove deletes a claim's spec file; a missing file is no error (unprepare is idempotent).
func (w Writer) Remove(claimUID string) error {
	err := os.Remove(w.Path(claimUID))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
