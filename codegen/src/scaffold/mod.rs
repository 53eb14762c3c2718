//! `kubegen-codegen init` and `create-api`: kubebuilder's scaffolding for a Rust operator.
//!
//! [`init`](init::init) writes a standalone cargo project (its own `[workspace]`) with one
//! API kind. Its library (kubebuilder's `api/`): marked types under
//! `src/apis/<group>/<version>/` and the clientset, listers and informers generated from
//! them (in process, byte for byte what `kubegen-codegen update` writes). Its binary
//! (`main.rs`, kubebuilder's `cmd/` and `internal/`): a reconciler per kind on the controller
//! builder under the manager, a walk-through per kind with its test, and the embedded test
//! server they run against (`src/embedded.rs`: the `demo` feature, `cargo run --features demo
//! -- --demo`, and a dev-dependency: a production build never compiles it). Changing a
//! reconciler recompiles the binary only. Besides: CRDs and the RBAC role under `config/`,
//! `hack/update-codegen.sh` / `hack/verify-codegen.sh`, a README and a Dockerfile. [`create_api`](create_api::create_api) adds a kind to such a project.
//!
//! Adding a kind only adds files (types, controller, walk-through with its test) and regenerates
//! generated ones: the index modules (`src/apis/**/mod.rs`, `src/controllers/mod.rs`,
//! `src/demo/mod.rs`, each listing the files of its directory and marked
//! [`layout::INDEX_MARKER`]) and what `hack/update-codegen.sh` writes.
//!
//! Neither command overwrites a file the user owns: every path is checked before anything
//! is written ([`ScaffoldError::WouldOverwrite`]).
//!
//! Files: [`names`] (validated group, version and kind names), [`deps`] (how the project
//! depends on kubegen; `cargo_manifest` edits that dependency in place), [`templates`] (the project's files, `include_str!`ed and filled by
//! substitution), [`layout`] (where files go, which kinds a project has, the index modules),
//! [`generated`] (running the generators over a project), [`mod@init`], [`mod@create_api`],
//! [`mod@create_webhook`] (admission and conversion webhooks for a kind).

mod cargo_manifest;
pub mod create_api;
pub mod create_webhook;
pub mod deps;
mod error;
pub mod generated;
pub mod init;
pub mod layout;
pub mod names;
pub mod templates;

pub use create_api::{CreateApiOptions, create_api};
pub use create_webhook::{CreateWebhookOptions, create_webhook};
pub use deps::Dependencies;
pub use error::ScaffoldError;
pub use init::{InitOptions, init};
pub use names::{ApiKind, ProjectName};
