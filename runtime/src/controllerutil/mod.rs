//! Helpers for reconcilers (controller-runtime's `controllerutil`): owner references.

mod owner;

pub use owner::{
    OwnerError, controller_of, has_owner_reference, is_controlled_by, owner_reference,
    remove_owner_reference, set_controller_reference, set_owner_reference,
};
