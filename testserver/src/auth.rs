//! Who may talk to the server, configured once (kube-apiserver's authentication,
//! authorization and audit options): [`AuthConfig`] is what a builder or the binary's
//! flags set, [`Auth`] the running authenticators and authorizer every request of one
//! server passes.

use crate::{
    audit::AuditConfig,
    authn::{Authenticator, UserInfo},
    authz::{AuthorizationMode, Authorizer},
};

/// Authentication, authorization and audit settings (kube-apiserver's flags of the same
/// names; the defaults are kube-apiserver's, with authorization `AlwaysAllow`).
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// `--anonymous-auth`: a request without credentials is `system:anonymous` (default
    /// true); when false it is a 401.
    pub anonymous: bool,
    /// Static bearer tokens and their users (`--token-auth-file`'s rows).
    pub tokens: Vec<(String, UserInfo)>,
    /// `--authorization-mode`.
    pub authorization_mode: AuthorizationMode,
    /// `--audit-log-path`, and the in-memory audit log of tests (off by default).
    pub audit: AuditConfig,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            anonymous: true,
            tokens: Vec::new(),
            authorization_mode: AuthorizationMode::AlwaysAllow,
            audit: AuditConfig::default(),
        }
    }
}

impl AuthConfig {
    /// Authorization by RBAC (`--authorization-mode=RBAC`).
    pub fn rbac(mut self) -> Self {
        self.authorization_mode = AuthorizationMode::Rbac;
        self
    }

    /// `--anonymous-auth`.
    pub fn anonymous(mut self, on: bool) -> Self {
        self.anonymous = on;
        self
    }

    /// Adds a static bearer token for `user`.
    pub fn token(mut self, token: impl Into<String>, user: UserInfo) -> Self {
        self.tokens.push((token.into(), user));
        self
    }

    /// Audits every request into memory ([`crate::TestServer::audit_events`]).
    pub fn audit(mut self) -> Self {
        self.audit.memory = true;
        self
    }

    /// `--audit-log-path`: appends every request's audit event to `path` as a JSON line
    /// (`-` is standard output).
    pub fn audit_log_path(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.audit.log_path = Some(path.into());
        self
    }
}

/// The running authenticators and authorizer of one server.
#[derive(Debug)]
pub(crate) struct Auth {
    /// Who makes a request.
    pub(crate) authenticator: Authenticator,
    /// Whether they may.
    pub(crate) authorizer: Authorizer,
}

impl Auth {
    /// The authenticators and authorizer `config` asks for.
    pub(crate) fn new(config: &AuthConfig) -> Self {
        Auth {
            authenticator: Authenticator::new(config),
            authorizer: Authorizer::new(config.authorization_mode),
        }
    }
}
