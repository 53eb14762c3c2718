//! How the server calls out to webhooks: the admission webhooks of
//! Mutating/ValidatingWebhookConfigurations and the conversion webhooks of CRDs
//! (kube-apiserver's `k8s.io/apiserver/pkg/util/webhook`: `ClientConfig`, the
//! service resolver, `ClientManager.HookClient`).
//!
//! * [`client_config`]: a webhook's `clientConfig` — `url` or `service` (namespace, name,
//!   path, port 443 by default) and the `caBundle` its certificate must chain to.
//! * [`services`]: where a Service is reached. There is no cluster network, so a test
//!   registers the address its webhook server listens on for the Service the manifests name
//!   ([`crate::TestServer::register_service`]), as kube-apiserver's service resolver would
//!   find the Service's endpoints.
//! * [`call`]: one POST of a JSON review over TLS verified against the `caBundle` (the
//!   system roots when it is empty), with the hook's timeout, answering the decoded JSON or
//!   a [`CallError`] whose text is kube-apiserver's (`Post "https://...": ...`).
//! * [`pool`]: the connections kept open between calls (kube-apiserver's cached clients
//!   and keep-alive transport) and the TLS configuration per `caBundle`.

pub(crate) mod call;
pub(crate) mod client_config;
pub(crate) mod pool;
pub(crate) mod services;

pub(crate) use call::{CallError, post_json};
pub(crate) use client_config::{ClientConfig, ConfigError, Endpoint};
pub use services::Services;
