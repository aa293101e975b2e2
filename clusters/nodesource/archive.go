// SPDX-License-Identifier: Apache-2.0

package nodesource

import "github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/imagearchive"

// ArchiveImage is a single-layer image with no base, written as a `docker
// save` archive (its WriteFile). The node images' control-plane images and
// the driver's images are all written this way, by one writer, because
// nothing can be pulled on the machines the suite must run on.
type ArchiveImage = imagearchive.Image

// ArchiveFile is one entry of an ArchiveImage's layer: a host file, literal
// data or a symlink.
type ArchiveFile = imagearchive.File
