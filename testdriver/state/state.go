// SPDX-License-Identifier: Apache-2.0

// Package state is the test driver's checkpoint of prepared claims. The kubelet
// may ask a restarted plugin to unprepare a claim that an earlier process
// prepared; only what is on disk tells the new process what that claim held.
package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// PreparedDevice is one device handed to one claim.
type PreparedDevice struct {
	Request     string `json:"request"`
	Pool        string `json:"pool"`
	Device      string `json:"device"`
	AdminAccess bool   `json:"adminAccess"`
	// ShareID is the allocation's share of a device that allows multiple
	// allocations (consumable capacity), "" for a whole device. A share is
	// never an exclusive holder.
	ShareID      string   `json:"shareID,omitempty"`
	CDIDeviceIDs []string `json:"cdiDeviceIDs"`
}

// PreparedClaim is what the driver did for one claim.
type PreparedClaim struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	Devices   []PreparedDevice `json:"devices"`
}

// Checkpoint is the set of prepared claims, persisted as JSON on every change.
type Checkpoint struct {
	path   string
	mu     sync.Mutex
	claims map[string]PreparedClaim // by claim UID
}

type fileFormat struct {
	Version int                      `json:"version"`
	Claims  map[string]PreparedClaim `json:"claims"`
}

// Open loads the checkpoint at path, or starts an empty one.
func Open(path string) (*Checkpoint, error) {
	c := &Checkpoint{path: path, claims: map[string]PreparedClaim{}}
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	var f fileFormat
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("checkpoint %s has unknown version %d", path, f.Version)
	}
	if f.Claims != nil {
		c.claims = f.Claims
	}
	return c, nil
}

// Get returns a prepared claim.
func (c *Checkpoint) Get(uid string) (PreparedClaim, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc, ok := c.claims[uid]
	return pc, ok
}

// Put records a prepared claim and saves.
func (c *Checkpoint) Put(uid string, pc PreparedClaim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims[uid] = pc
	return c.saveLocked()
}

// Delete forgets a claim and saves; forgetting an unknown claim is no error.
func (c *Checkpoint) Delete(uid string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.claims[uid]; !ok {
		return nil
	}
	delete(c.claims, uid)
	return c.saveLocked()
}

// ExclusiveHolder returns the UID of another claim that holds device in
// ordinary (non-admin) use. Admin-access holders never count: admin access
// observes a device without taking it; nor do shares of a device that
// allows multiple allocations.
func (c *Checkpoint) ExclusiveHolder(pool, device, exceptUID string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, uid := range c.uidsLocked() {
		if uid == exceptUID {
			continue
		}
		for _, d := range c.claims[uid].Devices {
			if d.Pool == pool && d.Device == device && !d.AdminAccess && d.ShareID == "" {
				return uid, true
			}
		}
	}
	return "", false
}

// UIDs lists the prepared claims.
func (c *Checkpoint) UIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uidsLocked()
}

// uidsLocked lists the claim UIDs in a stable order.
func (c *Checkpoint) uidsLocked() []string {
	out := make([]string, 0, len(c.claims))
	for uid := range c.claims {
		out = append(out, uid)
	}
	sort.Strings(out)
	return out
}

func (c *Checkpoint) saveLocked() error {
	data, err := json.MarshalIndent(fileFormat{Version: 1, Claims: c.claims}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}
