//! Per-resource strategies, kube-apiserver's `pkg/registry/*/strategy.go`: what a resource
//! does on create and update beyond the generic rules (server-set fields, defaulting,
//! validation, deletion holds). Each built-in's row (`crate::builtins`) names its
//! strategy, and each registry entry ([`crate::registry::ResourceType::strategy`]) carries
//! one; the engine calls it and knows no resource by name.
//!
//! The generic rules stay in the engine (`generic/registry/store.go`): names, uids,
//! timestamps, generation, resourceVersion preconditions, the status subresource split,
//! finalizers.

pub(crate) mod admissionregistration;
mod allocator;
pub(crate) mod apiextensions;
pub(crate) mod apps;
pub(crate) mod batch;
pub(crate) mod core;
pub mod defaults;
pub(crate) mod rbac;
pub(crate) mod services;

use std::{fmt, sync::Arc};

use serde_json::Value;

use crate::errors::Cause;

/// Completes what [`Strategy::begin_create`] or [`Strategy::begin_update`] reserved, told
/// whether the write committed (the generic store's `FinishFunc`): a dry run, a failed
/// admission or a lost race hands the reservations back.
pub type Finish = Box<dyn FnOnce(bool) + Send>;

/// What a resource does beyond the generic store rules.
///
/// Every method has the generic behaviour as default, so a strategy only overrides what
/// its `strategy.go` does.
pub trait Strategy: Send + Sync + 'static {
    /// A name for debugging (`"pods"`).
    fn name(&self) -> &'static str;

    /// The scheme defaulters (`pkg/apis/<group>/v1/defaults.go`), run on every body the
    /// server decodes: creates, updates and patch results.
    fn apply_defaults(&self, _obj: &mut Value) {}

    /// `PrepareForCreate`: server-set fields of a new object (after the generic rules have
    /// cleared status for types with a status subresource).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// `PrepareForUpdate`: fields a main-resource update may not change are copied from
    /// `old`.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// `BeginCreate`: reserves what the object needs from server-wide pools (a Service's
    /// cluster IP and node ports), writing the choices into it. Runs after
    /// [`Strategy::prepare_for_create`]; the returned [`Finish`] is called once the
    /// write's fate is known.
    fn begin_create(&self, _obj: &mut Value) -> Result<Option<Finish>, Vec<Cause>> {
        Ok(None)
    }

    /// `BeginUpdate`: as [`Strategy::begin_create`] for a main-resource update of `old`.
    fn begin_update(&self, _new: &mut Value, _old: &Value) -> Result<Option<Finish>, Vec<Cause>> {
        Ok(None)
    }

    /// `AfterDelete`: the object left the store; hand back what it held.
    fn after_delete(&self, _obj: &Value) {}

    /// `Validate` on create: the 422 causes.
    fn validate(&self, _obj: &Value) -> Vec<Cause> {
        Vec::new()
    }

    /// `ValidateUpdate`: the 422 causes of turning `old` into `new`.
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<Cause> {
        self.validate(new)
    }

    /// Whether this resource serves the extra subresource `name` (a namespace's
    /// `finalize`) beyond `status` and `scale`.
    fn serves_subresource(&self, _name: &str) -> bool {
        false
    }

    /// An update through an extra subresource: the object `old` becomes with `body`.
    /// Only called for names [`Strategy::serves_subresource`] accepts.
    fn update_subresource(&self, _name: &str, old: &Value, _body: &Value) -> Value {
        old.clone()
    }

    /// A POST to the subresource `name` of `old` (a pod's `binding`): the object `old`
    /// becomes, or why it is refused; `None` when `name` takes no POST.
    fn create_subresource(
        &self,
        _name: &str,
        _old: &Value,
        _body: &Value,
    ) -> Option<crate::errors::ApiResult<Value>> {
        None
    }

    /// Called when a DELETE starts a graceful deletion (the object gets a
    /// deletionTimestamp): e.g. a namespace's phase becomes `Terminating`.
    fn begin_delete(&self, _obj: &mut Value) {}

    /// `CheckGracefulDelete`: the grace period (seconds) a DELETE of `obj` with the
    /// requested `gracePeriodSeconds` gets; `None` for a resource deleted at once. A
    /// positive period keeps the object, with `deletionTimestamp` that far ahead, until a
    /// DELETE with period 0 (its kubelet's).
    fn grace_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether the object must stay although its `metadata.finalizers` are empty (a
    /// namespace waits for its `spec.finalizers`).
    fn holds_deletion(&self, _obj: &Value) -> bool {
        false
    }

    /// The generic store's `ReturnDeletedObject`: a DELETE that removes the object answers
    /// with the object rather than a `Status` of `Success`.
    fn returns_deleted_object(&self) -> bool {
        false
    }
}

/// A shared strategy as a registry entry holds it: compared and printed by name.
#[derive(Clone)]
pub struct StrategyRef(pub Arc<dyn Strategy>);

impl StrategyRef {
    /// Wraps a strategy.
    pub fn new(s: impl Strategy) -> Self {
        StrategyRef(Arc::new(s))
    }
}

impl std::ops::Deref for StrategyRef {
    type Target = dyn Strategy;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for StrategyRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Strategy({})", self.0.name())
    }
}

impl PartialEq for StrategyRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for StrategyRef {}

/// The generic strategy: nothing beyond the store's rules (custom resources, and
/// built-ins whose strategy adds nothing the server models).
#[derive(Debug, Clone, Copy, Default)]
pub struct Generic {
    /// Answer DELETE with the removed object (`ReturnDeletedObject`).
    pub returns_deleted_object: bool,
}

impl Strategy for Generic {
    fn name(&self) -> &'static str {
        if self.returns_deleted_object {
            "generic-returning-deleted"
        } else {
            "generic"
        }
    }

    fn returns_deleted_object(&self) -> bool {
        self.returns_deleted_object
    }
}

/// The strategy of a custom resource (apiextensions-apiserver's `customresource`
/// store, which sets `ReturnDeletedObject`).
pub fn custom_resource() -> StrategyRef {
    StrategyRef::new(Generic {
        returns_deleted_object: true,
    })
}
