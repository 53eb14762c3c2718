//! `certificates.k8s.io` (`pkg/registry/certificates/certificates/storage`).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "certificates.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[Builtin {
    short: &["csr"],
    ..row("certificatesigningrequests")
}];
