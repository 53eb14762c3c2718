//! Controllers (controller-runtime's `pkg/controller` and `pkg/builder`): a reconcile
//! function for a primary type, fed by shared informers through a rate-limited queue.

mod action;
pub mod finalizer;

pub use action::Action;
