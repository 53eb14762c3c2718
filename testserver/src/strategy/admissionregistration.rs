//! `admissionregistration.k8s.io` strategies: a ValidatingAdmissionPolicy or
//! MutatingAdmissionPolicy whose CEL expressions do not compile is refused with a 422, as
//! kube-apiserver's `pkg/apis/admissionregistration/validation`
//! (`validateValidatingAdmissionPolicySpec`, `validateMutatingAdmissionPolicySpec`
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

/// `mutatingadmissionpolicies`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MutatingAdmissionPolicies;

impl Strategy for MutatingAdmissionPolicies {
    fn name(&self) -> &'static str {
        "mutatingadmissionpolicies"
    }

    fn validate(&self, obj: &Value) -> Vec<Cause> {
        crate::admission::policy::compile_errors(obj)
    }
}
