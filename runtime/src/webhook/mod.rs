//! Admission and conversion webhooks (controller-runtime's `pkg/webhook`), behind the
//! `webhook` cargo feature.
//!
//! A [`Server`] serves HTTPS (hyper on rustls) on one port and routes paths to handlers:
//!
//! * admission (`admission.k8s.io/v1` AdmissionReview): [`Admission::validating`] over a
//!   [`Validator`] (create, update with the old object, delete; warnings or a [`Denied`]
//!   with a message and an HTTP code), [`Admission::defaulting`] over a [`Defaulter`] (its
//!   changes answered as a JSONPatch diff of the request's object), [`Admission::handler`]
//!   over a raw [`Handler`];
//! * conversion (`apiextensions.k8s.io/v1` ConversionReview): [`Conversion`], hub and
//!   spokes converted with Rust's `From` / `TryFrom`;
//! * `/healthz`; and controller-runtime's `controller_runtime_webhook_*` metrics
//!   ([`WebhookMetrics`]).
//!
//! A handler that panics is answered with an error (500) and the server keeps serving; a
//! body that does not decode is answered with an error (400).
//!
//! Certificates ([`certs`]): a self-signed CA and serving certificate generated at start and
//! re-issued before they expire, or the files of a cert-manager secret re-read when they
//! change; the server presents whatever is current without a restart. [`CaInjector`] writes
//! the CA bundle into webhook configurations and CRDs, as cert-manager's cainjector does.
//! Under the [`Manager`](crate::manager::Manager) the server is a runnable that serves on
//! every replica ([`ManagerBuilder::webhook_server`](crate::manager::ManagerBuilder::webhook_server)).
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubegen::webhook::{Admission, Denied, Server, Validator, Warnings, certs::SelfSignedConfig};
//!
//! struct NoSecrets;
//! impl Validator<ConfigMap> for NoSecrets {
//!     async fn validate_create(&self, cm: &ConfigMap) -> Result<Warnings, Denied> {
//!         match cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
//!             true => Err(Denied::new("passwords belong in Secrets")),
//!             false => Ok(Warnings::new()),
//!         }
//!     }
//! }
//!
//! let server = Server::builder()
//!     .address(([0, 0, 0, 0], 9443).into())
//!     .self_signed(SelfSignedConfig::for_service("my-operator-webhook", "operators"))
//!     .admission("/validate--v1-configmap", Admission::validating::<ConfigMap, _>(NoSecrets))
//!     .build()?;
//! let ca_bundle = server.ca_bundle(); // PEM, for the webhook configuration's caBundle
//! server.run(tokio_util::sync::CancellationToken::new()).await?;
//! # Ok(()) }
//! ```
//!
//! * `review.rs`: decoding AdmissionReviews, answering them.
//! * `admit.rs`: the object-safe trait behind every admission route.
//! * `handler.rs`: [`Handler`], [`Admission`], [`request`].
//! * `validator.rs`: [`Validator`], [`Warnings`], [`Denied`].
//! * `defaulter.rs`: [`Defaulter`], [`DefaulterOptions`], the patch.
//! * `conversion.rs`: [`Conversion`], [`ConversionError`].
//! * `metrics.rs`: [`WebhookMetrics`].
//! * `paths.rs`: controller-runtime's path names ([`validate_path`], [`mutate_path`],
//!   [`CONVERT_PATH`]).
//! * `server.rs`: [`Server`], [`ServerBuilder`], [`ServerError`].
//! * [`certs`]: certificate sources and the rustls resolver (the crate's `certs` module,
//!   which the manager's secure metrics endpoint shares).
//! * `inject.rs`: [`CaInjector`], [`InjectError`].

mod admit;
pub use crate::certs;
mod conversion;
mod defaulter;
mod handler;
mod inject;
mod metrics;
mod paths;
mod review;
mod server;
mod validator;

pub use conversion::{Conversion, ConversionError, Hub};
pub use defaulter::{Defaulter, DefaulterOptions, default_patch};
pub use handler::{Admission, Handler, request};
pub use inject::{CaInjector, InjectError};
pub use metrics::WebhookMetrics;
pub use paths::{CONVERT_PATH, mutate_path, validate_path};
pub use review::ReviewError;
pub use server::{DEFAULT_PORT, Server, ServerBuilder, ServerError};
pub use validator::{Denied, Validator, Warnings};

/// kube-core's admission types, as handlers take and return them.
pub use kube_core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
/// kube-core's conversion types.
pub use kube_core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
