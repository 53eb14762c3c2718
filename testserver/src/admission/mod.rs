//! Admission control (kube-apiserver's `k8s.io/apiserver/pkg/admission`): a write is
//! first shown to the mutating plugins, which may change the object, then to the
//! validating ones, which may only refuse it. The endpoint handlers call
//! [`mutating::admit`] then [`validating::validate`] between decoding a write and handing
//! it to the registry.
//!
//! Of kube-apiserver's built-in plugins, `DefaultTolerationSeconds` is modelled (the
//! cluster's taint-based eviction relies on it). The dynamic plugins — admission
//! webhooks ([`webhook`]) and the admission policies — are in [`dynamic`]: they are
//! called by the handlers outside the store's lock, around a dry run of the registry,
//! and only when one is configured. The schema admission of custom resources (prune,
//! default, validate, CEL) is not here: as in kube-apiserver it is the resource's
//! strategy, run by the registry (`crate::engine`).

mod default_toleration_seconds;
pub(crate) mod dynamic;
pub(crate) mod mutating;
pub(crate) mod policy;
pub(crate) mod request;
pub(crate) mod validating;
pub(crate) mod webhook;

use crate::endpoints::{context::UserInfo, request_info::RequestInfo};

/// What admission is told about a write (kube-apiserver's `admission.Attributes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attributes<'a> {
    /// The verb, resource, namespace, name and subresource.
    pub(crate) request: &'a RequestInfo,
    /// Who writes.
    pub(crate) user: &'a UserInfo,
    /// A dry run (`dryRun=All`): plugins with side effects must not act.
    pub(crate) dry_run: bool,
}
