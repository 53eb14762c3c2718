//! Authentication (kube-apiserver's `k8s.io/apiserver/pkg/authentication`): who makes a
//! request, from its credentials. The authenticators are tried in kube-apiserver's order
//! (`pkg/kubeapiserver/authenticator/config.go`: x509, then the bearer-token
//! authenticators, then anonymous); the first that recognises the credentials decides,
//! a bearer token that none accepts is a 401 (never anonymous), and a request without
//! credentials is the anonymous user when anonymous requests are allowed.
//!
//! * a verified client certificate ([`x509`], `--client-ca-file`): CN the user, O the
//!   groups;
//! * bearer tokens (`Authorization: Bearer <token>`, the scheme case-insensitive): the
//!   static token table ([`token_file`], `--token-auth-file`, and the tokens the library
//!   mints for [`crate::TestServer::client_as`]), then ServiceAccount tokens
//!   ([`service_account`], minted by the TokenRequest API, [`token_request`]);
//! * the in-process front's user ([`crate::InProcess::as_user`]), for a request without
//!   a bearer token;
//! * anonymous (`--anonymous-auth`, default on).
//!
//! Every authenticated user is in `system:authenticated`.

pub(crate) mod service_account;
pub(crate) mod token_file;
pub(crate) mod token_request;
mod user;
pub(crate) mod x509;

use std::collections::HashMap;

use http::header;
use parking_lot::RwLock;

pub use user::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, SYSTEM_MASTERS, UserInfo};

use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult},
};
use service_account::{ServiceAccountTokens, Verdict};

/// Errors configuring authentication (a token file, a client CA, the signing key).
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A row of a token file (`--token-auth-file`) is malformed.
    #[error("{file}:{line}: {message}")]
    TokenFile {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The client CA bundle (`--client-ca-file`) cannot be used.
    #[error("client CA {source_name}: {message}")]
    ClientCa {
        /// The file, or what else the bundle came from.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// The ServiceAccount token signing key could not be made or used.
    #[error("service account signing key: {0}")]
    SigningKey(String),
}

/// What the bearer-token authenticators make of a token (a TokenReview's answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenOutcome {
    /// Authenticated: the user and the audiences the token was accepted for.
    Authenticated(UserInfo, Vec<String>),
    /// Not authenticated, with the authenticators' errors (empty when none recognised
    /// the token at all).
    Refused(String),
}

/// The server's authenticators.
#[derive(Debug)]
pub(crate) struct Authenticator {
    /// Whether a request without credentials is the anonymous user (else a 401).
    anonymous: bool,
    /// The static token table: token → user.
    tokens: RwLock<HashMap<String, UserInfo>>,
    /// The ServiceAccount token issuer (`None` if its key could not be generated).
    service_accounts: Option<ServiceAccountTokens>,
    /// The API audiences (`--api-audiences`, by default the issuer).
    audiences: Vec<String>,
}

impl Authenticator {
    /// Authenticators from the server's configuration (`crate::AuthConfig`'s fields):
    /// whether anonymous requests are allowed, the static tokens, the ServiceAccount
    /// token issuer and the API audiences (the issuer alone when empty).
    pub(crate) fn new(
        anonymous: bool,
        tokens: &[(String, UserInfo)],
        issuer: &str,
        api_audiences: &[String],
    ) -> Self {
        let tokens = tokens
            .iter()
            .map(|(token, user)| (token.clone(), user.clone()))
            .collect();
        let service_accounts = ServiceAccountTokens::generate(issuer, api_audiences)
            .inspect_err(|err| tracing::error!(%err, "no service account tokens"))
            .ok();
        let audiences = match &service_accounts {
            Some(sa) => sa.audiences().to_vec(),
            None if api_audiences.is_empty() => vec![issuer.to_string()],
            None => api_audiences.to_vec(),
        };
        Authenticator {
            anonymous,
            tokens: RwLock::new(tokens),
            service_accounts,
            audiences,
        }
    }

    /// Adds a bearer token for `user` to the static token table.
    pub(crate) fn add_token(&self, token: String, user: UserInfo) {
        self.tokens.write().insert(token, user);
    }

    /// The API audiences.
    pub(crate) fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// The ServiceAccount token issuer.
    pub(crate) fn service_accounts(&self) -> ApiResult<&ServiceAccountTokens> {
        self.service_accounts
            .as_ref()
            .ok_or_else(|| ApiError::internal("service account tokens are not available"))
    }

    /// Who makes a request with `headers`, over a connection whose client presented the
    /// verified certificate of `certificate`, through a front whose own user is `front`
    /// (the in-process front's).
    pub(crate) fn authenticate(
        &self,
        engine: &Engine,
        headers: &http::HeaderMap,
        certificate: Option<&UserInfo>,
        front: Option<&UserInfo>,
    ) -> ApiResult<UserInfo> {
        if let Some(user) = certificate {
            return Ok(user.clone().with_authenticated_group());
        }
        if let Some(token) = bearer_token(headers)? {
            return match self.authenticate_token(engine, token, &self.audiences) {
                TokenOutcome::Authenticated(user, _) => Ok(user),
                TokenOutcome::Refused(why) => {
                    tracing::debug!(%why, "bearer token refused");
                    Err(ApiError::unauthorized())
                }
            };
        }
        if let Some(user) = front {
            return Ok(user.clone().with_authenticated_group());
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(ApiError::unauthorized())
    }

    /// Authenticates a bearer token for `audiences` (the token union of config.go:
    /// the static table, audience-agnostic, then ServiceAccount tokens).
    pub(crate) fn authenticate_token(
        &self,
        engine: &Engine,
        token: &str,
        audiences: &[String],
    ) -> TokenOutcome {
        if token.is_empty() {
            return TokenOutcome::Refused("invalid bearer token".into());
        }
        let mut errors = Vec::new();
        // `WrapAudienceAgnosticToken`: the table's users are for the API audiences only.
        let agnostic: Vec<String> = self
            .audiences
            .iter()
            .filter(|a| audiences.contains(a))
            .cloned()
            .collect();
        if !agnostic.is_empty()
            && let Some(user) = self.tokens.read().get(token).cloned()
        {
            return TokenOutcome::Authenticated(user.with_authenticated_group(), agnostic);
        }
        if let Some(sa) = &self.service_accounts {
            match sa.verify(engine, token, audiences, crate::clock::now()) {
                Verdict::User(user, auds) => {
                    return TokenOutcome::Authenticated(user.with_authenticated_group(), auds);
                }
                Verdict::Invalid(why) => errors.push(why),
                Verdict::NotMine => {}
            }
        }
        TokenOutcome::Refused(match errors.len() {
            0 => String::new(),
            1 => errors.remove(0),
            _ => format!("[{}]", errors.join(", ")),
        })
    }
}

/// The bearer token of `headers` (bearertoken.go): `None` without an `Authorization`
/// header or with another scheme; a 401 for an empty bearer token.
fn bearer_token(headers: &http::HeaderMap) -> ApiResult<Option<&str>> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let Ok(value) = value.to_str() else {
        return Ok(None);
    };
    let mut parts = value.trim().splitn(3, ' ');
    let (Some(scheme), Some(token)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    if token.is_empty() {
        return Err(ApiError::unauthorized());
    }
    Ok(Some(token))
}

/// A fresh random bearer token (32 lowercase alphanumerics).
pub(crate) fn random_token() -> String {
    use rand::Rng;
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..32)
        .map(|_| char::from(CHARS[rng.random_range(0..CHARS.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's
    //! `staging/src/k8s.io/apiserver/pkg/authentication/request/bearertoken/bearertoken_test.go`
    //! and `pkg/kubeapiserver/authenticator/config.go` (the union's order).

    use super::*;

    fn headers(auth: Option<&str>) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        if let Some(a) = auth {
            h.insert(
                header::AUTHORIZATION,
                http::HeaderValue::from_str(a).expect("header"),
            );
        }
        h
    }

    fn authenticator(anonymous: bool) -> (Authenticator, std::sync::Arc<Engine>) {
        let tokens = [("tok".to_string(), UserInfo::new("alice", ["devs"]))];
        let engine = crate::apiserver::new_engine(crate::EngineConfig::default());
        let authenticator =
            Authenticator::new(anonymous, &tokens, service_account::DEFAULT_ISSUER, &[]);
        (authenticator, engine)
    }

    #[test]
    fn bearer_tokens_certificates_and_anonymous() {
        let (a, engine) = authenticator(true);
        let alice = a
            .authenticate(&engine, &headers(Some("bearer tok")), None, None)
            .expect("alice");
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.groups, ["devs", ALL_AUTHENTICATED]);
        let err = a
            .authenticate(&engine, &headers(Some("Bearer wrong")), None, None)
            .expect_err("wrong token");
        assert_eq!((err.code, err.message.as_str()), (401, "Unauthorized"));
        // An empty bearer token is refused; another scheme, or `Bearer` alone (trimmed),
        // is no credential at all.
        assert!(
            a.authenticate(&engine, &headers(Some("Bearer  tok")), None, None)
                .is_err()
        );
        assert_eq!(
            a.authenticate(&engine, &headers(Some("Bearer ")), None, None)
                .expect("anonymous"),
            UserInfo::anonymous()
        );
        let anon = a
            .authenticate(&engine, &headers(Some("Basic Zm9vOmJhcg==")), None, None)
            .expect("anonymous");
        assert_eq!(anon, UserInfo::anonymous());
        // The x509 authenticator comes first: a certificate's user wins over a token.
        let cert_user = UserInfo::new("carol", ["ops"]);
        let carol = a
            .authenticate(
                &engine,
                &headers(Some("Bearer tok")),
                Some(&cert_user),
                None,
            )
            .expect("carol");
        assert_eq!(carol.groups, ["ops", ALL_AUTHENTICATED]);
        // The in-process front's user comes after a bearer token.
        let front = UserInfo::new("front", Vec::<String>::new());
        let who = a
            .authenticate(&engine, &headers(Some("Bearer tok")), None, Some(&front))
            .expect("alice");
        assert_eq!(who.name, "alice");
        let (a, engine) = authenticator(false);
        assert_eq!(
            a.authenticate(&engine, &headers(None), None, None)
                .expect_err("no anonymous")
                .code,
            401
        );
    }

    #[test]
    fn static_tokens_are_for_the_api_audiences_only() {
        let (a, engine) = authenticator(true);
        let auds = a.audiences().to_vec();
        assert_eq!(auds, [service_account::DEFAULT_ISSUER]);
        assert!(matches!(
            a.authenticate_token(&engine, "tok", &auds),
            TokenOutcome::Authenticated(u, got) if u.name == "alice" && got == auds
        ));
        assert_eq!(
            a.authenticate_token(&engine, "tok", &["vault".into()]),
            TokenOutcome::Refused(String::new())
        );
    }
}
