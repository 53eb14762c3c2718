//! `storage.k8s.io` (`pkg/registry/storage/<resource>/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "storage.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        short: &["sc"],
        // storageclass/storage/storage.go sets `ReturnDeletedObject`.
        strategy: super::returns_deleted_object,
        ..row("storageclasses")
    },
    row("csidrivers"),
    row("csinodes"),
    row("csistoragecapacities"),
    row("volumeattachments"),
];
