//! `flowcontrol.apiserver.k8s.io` (`pkg/registry/flowcontrol/*/storage`; the objects are
//! stored, priority and fairness is not modelled).

use super::{Builtin, row};

/// The API group.
pub(super) const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        generation: true,
        ..row("flowschemas")
    },
    Builtin {
        generation: true,
        ..row("prioritylevelconfigurations")
    },
];
