//! The audit log (kube-apiserver's `k8s.io/apiserver/pkg/audit` with the
//! `audit.k8s.io/v1` types of `pkg/apis/audit/v1/types.go`): one [`AuditEvent`] per
//! request, written when the request completes, to a JSON-lines file
//! (`--audit-log-path`) and, for tests, to memory
//! ([`crate::TestServer::audit_events`], [`crate::InProcess::audit_events`]).
//!
//! What is modelled, and how it differs from kube-apiserver:
//!
//! * No audit policy file: every request is audited at level `Metadata` (who, what,
//!   when, the response's code and failure), never the request or response bodies.
//! * One event per request, at stage `ResponseComplete`. kube-apiserver also writes
//!   `RequestReceived`, and `ResponseStarted` for long-running requests; here a watch's
//!   event is written when the watch is opened (its response started), with the code it
//!   was opened with, and no event follows when it ends.
//! * A request whose credentials are refused is audited as kube-apiserver's
//!   failed-authentication handler does (`WithFailedAuthenticationAudit`): no user (`{}`),
//!   its 401 `Unauthorized` status (were there no `Status` body, the message would be
//!   kube's `Authentication failed, attempted: bearer`); stage `ResponseComplete` rather
//!   than kube's `ResponseStarted`.
//! * `responseStatus` carries the code, and for a failure the `Status`'s `status`,
//!   `reason` and `message` (kube's bounded copy); the JSON error bodies are read for
//!   that, so only when auditing is on.
//! * `sourceIPs` are `X-Forwarded-For`, `X-Real-Ip` and the connection's peer, as
//!   kube-apiserver's `utilnet.SourceIPs`; the in-process front has no peer and records
//!   `127.0.0.1`.
//! * A path no resource serves is audited (and authorized) as a non-resource request:
//!   no `objectRef`, the lower-cased HTTP method as its verb.
//! * Requests an [`crate::InProcess`] reactor answers never enter the handler chain and
//!   are not audited.
//!
//! Auditing is off by default ([`AuditConfig::default`]) and then costs one branch per
//! request: no event is built.

mod event;
mod sink;

use std::path::PathBuf;

pub(crate) use event::micro_now;
pub use event::{
    API_VERSION, AuditEvent, AuditUser, KIND, Level, ObjectReference, ResponseStatus, Stage,
};
pub(crate) use sink::Auditor;

/// Audit settings, part of [`crate::AuthConfig`] (kube-apiserver's `--audit-*` flags).
/// Auditing is on when either sink is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditConfig {
    /// Keep every event in memory, for [`crate::TestServer::audit_events`] and
    /// [`crate::InProcess::audit_events`].
    pub memory: bool,
    /// `--audit-log-path`: append every event to this file as one JSON line (`-` is
    /// standard output). A file that cannot be opened is an error when the server
    /// starts.
    pub log_path: Option<PathBuf>,
}

impl AuditConfig {
    /// Whether any sink is on.
    pub fn enabled(&self) -> bool {
        self.memory || self.log_path.is_some()
    }
}

/// Errors setting up the audit log.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The `--audit-log-path` file could not be opened for appending.
    #[error("audit log {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The remote address of a request's connection, put in the request's extensions by
/// the HTTP front (the last of `sourceIPs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PeerAddr(pub(crate) std::net::SocketAddr);

/// A request's event while the request is under way: begun when the request arrives
/// (with its receive time), filled by the chain's audit stage, written when the request
/// completes.
#[derive(Debug)]
pub(crate) struct Pending {
    /// The event so far.
    pub(crate) event: AuditEvent,
    /// Whether the audit stage ran (else the request ended in authentication).
    pub(crate) started: bool,
}
