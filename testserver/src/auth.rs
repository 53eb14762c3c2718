//! Who may talk to the server, configured once (kube-apiserver's authentication,
//! authorization and audit options): [`AuthConfig`] is what a builder or the binary's
//! flags set, [`Auth`] the running authenticators and authorizer every request of one
//! server passes.

use std::path::Path;

use crate::{
    audit::AuditConfig,
    authn::{Authenticator, AuthnError, UserInfo, service_account},
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
    /// `--client-ca-file`'s certificates (PEM): a TLS server verifies a client
    /// certificate signed by one of them, and the certificate's subject names the user
    /// (CN the name, O the groups). A client without a certificate is let through.
    pub client_ca_pem: Option<String>,
    /// `--service-account-issuer`: the `iss` of the ServiceAccount tokens the server mints
    /// (default `https://kubernetes.default.svc.cluster.local`).
    pub service_account_issuer: String,
    /// `--api-audiences`: the audiences a token must be for to be accepted by the API
    /// (default: the issuer alone).
    pub api_audiences: Vec<String>,
    /// `--audit-log-path`, and the in-memory audit log of tests (off by default).
    pub audit: AuditConfig,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            anonymous: true,
            tokens: Vec::new(),
            authorization_mode: AuthorizationMode::AlwaysAllow,
            client_ca_pem: None,
            service_account_issuer: service_account::DEFAULT_ISSUER.to_string(),
            api_audiences: Vec::new(),
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

    /// Adds the rows of a `--token-auth-file` (kube-apiserver's `tokenfile.go`: CSV rows
    /// `token,user,uid[,"group1,group2"]`, blank lines skipped); an unreadable file or a
    /// malformed row is an error naming `file:line`.
    pub fn token_auth_file(self, path: impl AsRef<Path>) -> Result<Self, AuthnError> {
        let rows = crate::authn::token_file::read(path.as_ref())?;
        Ok(self.with_rows(rows))
    }

    /// Adds the rows of a token file's `text` (see [`AuthConfig::token_auth_file`]);
    /// `name` stands for the file in errors.
    pub fn tokens_from_csv(self, name: &str, text: &str) -> Result<Self, AuthnError> {
        let rows = crate::authn::token_file::parse(name, text)?;
        Ok(self.with_rows(rows))
    }

    fn with_rows(mut self, rows: Vec<(String, UserInfo)>) -> Self {
        self.tokens.extend(rows);
        self
    }

    /// `--client-ca-file`: reads the PEM bundle at `path` (an error when it is unreadable
    /// or holds no certificate); see [`AuthConfig::client_ca_pem`].
    pub fn client_ca_file(self, path: impl AsRef<Path>) -> Result<Self, AuthnError> {
        let path = path.as_ref();
        let pem = std::fs::read_to_string(path).map_err(|source| AuthnError::Read {
            path: path.display().to_string(),
            source,
        })?;
        crate::authn::x509::parse_ca_bundle(&path.display().to_string(), pem.as_bytes())?;
        Ok(self.client_ca(pem))
    }

    /// Verifies client certificates against the CA certificates in `pem` (see
    /// [`AuthConfig::client_ca_pem`]; checked when a TLS server starts).
    pub fn client_ca(mut self, pem: impl Into<String>) -> Self {
        self.client_ca_pem = Some(pem.into());
        self
    }

    /// `--service-account-issuer`.
    pub fn service_account_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.service_account_issuer = issuer.into();
        self
    }

    /// `--api-audiences`.
    pub fn api_audiences(mut self, audiences: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.api_audiences = audiences.into_iter().map(Into::into).collect();
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
            authenticator: Authenticator::new(
                config.anonymous,
                &config.tokens,
                &config.service_account_issuer,
                &config.api_audiences,
            ),
            authorizer: Authorizer::new(config.authorization_mode),
        }
    }
}
