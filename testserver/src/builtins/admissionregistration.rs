//! `admissionregistration.k8s.io` (kube-apiserver's
//! `pkg/registry/admissionregistration/<resource>/storage`: every strategy keeps
//! `metadata.generation`).

use super::{Builtin, row};
use crate::strategy::{StrategyRef, admissionregistration};

/// The API group.
pub(super) const GROUP: &str = "admissionregistration.k8s.io";

/// One row per resource.
pub(super) const ROWS: &[Builtin] = &[
    Builtin {
        generation: true,
        ..row("mutatingwebhookconfigurations")
    },
    Builtin {
        generation: true,
        ..row("validatingwebhookconfigurations")
    },
    Builtin {
        generation: true,
        strategy: || StrategyRef::new(admissionregistration::ValidatingAdmissionPolicies),
        ..row("validatingadmissionpolicies")
    },
    Builtin {
        generation: true,
        ..row("validatingadmissionpolicybindings")
    },
];
