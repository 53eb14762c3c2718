//! `admissionregistration.k8s.io` strategies: a ValidatingAdmissionPolicy whose CEL
//! expressions do not compile is refused with a 422, as kube-apiserver's
//! `pkg/apis/admissionregistration/validation` (`validateValidatingAdmissionPolicySpec`
//! compiling each expression) refuses it.

use serde_json::Value;

use super::Strategy;
use crate::errors::Cause;

/// `validatingadmissionpolicies`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValidatingAdmissionPolicies;

impl Strategy for ValidatingAdmissionPolicies {
    fn name(&self) -> &'static str {
        "validatingadmissionpolicies"
    }

    fn validate(&self, obj: &Value) -> Vec<Cause> {
        crate::admission::policy::compile_errors(obj)
    }
}
