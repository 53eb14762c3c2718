//! Apply configurations: typed server-side apply (client-go's `applyconfigurations`).
//!
//! Server-side apply gives each field manager the fields it sets. Applying a whole typed
//! object claims every field the struct serializes — `replicas: 0`, `paused: false`, an
//! empty list — so a manager silently takes fields from others or resets them. An *apply
//! configuration* is the same shape with every field optional: only what a controller sets
//! is sent, so only that is owned.
//!
//! The pieces, from the bottom:
//!
//! * [`HasApplyConfiguration`] maps a Rust type to its configuration (a struct to its
//!   generated `…ApplyConfiguration`, a scalar to itself); generated code names a field's
//!   configuration through it, so the CLI and the derive write the same tokens.
//! * [`ApplyConfiguration`] is what a root configuration (one per resource) tells the
//!   client: its name, its namespace, the object type the server answers with.
//! * [`ApplyParams`] are apply's options (`fieldManager`, `force`).
//! * [`extract()`] builds the configuration holding exactly the fields one manager owns,
//!   from the object's `managedFields` (client-go's `ExtractDeployment`), so a controller
//!   can read its own intent back, change it and apply it again.
//!
//! Configurations are generated: `kubegen-codegen update --with-applyconfig` writes them in
//! client-go's layout (`applyconfiguration/<group>/<version>/`), `#[derive(kubegen::
//! ApplyConfiguration)]` beside a type; the built-in API groups' are in
//! `kubegen::kubernetes::applyconfiguration`. Typed clients take them in `apply` and
//! `apply_status`, and [`crate::controllerutil::create_or_apply()`] is the read-modify-apply
//! loop over them.

mod configuration;
mod extract;
mod has_configuration;
mod params;

pub use configuration::{ApplyConfiguration, WholeObject};
pub use extract::{ExtractError, extract, owned_fields};
pub use has_configuration::HasApplyConfiguration;
pub use params::ApplyParams;
