//! Helpers for reconcilers (controller-runtime's `controllerutil`, apimachinery's
//! `meta/conditions.go`, kube-runtime's `wait`): owner references, finalizer lists,
//! [`create_or_update()`] / [`create_or_patch()`] / [`create_or_apply()`], status conditions
//! and [`await_condition()`].

mod conditions;
mod create_or_apply;
mod create_or_patch;
mod create_or_update;
mod finalizers;
mod merge_patch;
mod owner;

pub(crate) use owner::group_of;
pub mod wait;

pub use conditions::{
    CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN, find_condition, is_condition_false,
    is_condition_present_and_equal, is_condition_true, remove_condition, set_condition,
};
pub use create_or_apply::create_or_apply;
pub use create_or_patch::create_or_patch;
pub use create_or_update::{CreateOrUpdateError, OperationResult, create_or_update};
pub use finalizers::{add_finalizer, contains_finalizer, remove_finalizer};
pub use owner::{
    OwnerError, controller_of, has_owner_reference, is_controlled_by, owner_reference,
    remove_owner_reference, set_controller_reference, set_owner_reference,
};
pub use wait::{WaitError, await_condition};
