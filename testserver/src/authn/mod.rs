//! Authentication (kube-apiserver's `k8s.io/apiserver/pkg/authentication`): who makes a
//! request, from its credentials. The authenticators are tried in kube-apiserver's order
//! (`pkg/kubeapiserver/authenticator/config.go`); the first that recognises the
//! credentials decides, a credential that none accepts is a 401, and a request without
//! credentials is the anonymous user when anonymous requests are allowed.
//!
//! * bearer tokens of the static token table (`--token-auth-file`, and the tokens the
//!   library mints for [`crate::TestServer::client_as`]);
//! * the identity the front established for the connection (a client certificate, or
//!   the in-process front's user);
//! * anonymous (`--anonymous-auth`, default on).
//!
//! Every authenticated user is in `system:authenticated`.

mod user;

use std::collections::HashMap;

use http::header;
use parking_lot::RwLock;

pub use user::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, SYSTEM_MASTERS, UserInfo};

use crate::errors::{ApiError, ApiResult};

/// The server's authenticators.
#[derive(Debug)]
pub(crate) struct Authenticator {
    /// Whether a request without credentials is the anonymous user (else a 401).
    anonymous: bool,
    /// The static token table: token → user.
    tokens: RwLock<HashMap<String, UserInfo>>,
}

impl Authenticator {
    /// Authenticators from the server's configuration.
    pub(crate) fn new(config: &crate::AuthConfig) -> Self {
        let tokens = config
            .tokens
            .iter()
            .map(|(token, user)| (token.clone(), user.clone().with_authenticated_group()))
            .collect();
        Authenticator {
            anonymous: config.anonymous,
            tokens: RwLock::new(tokens),
        }
    }

    /// Adds a bearer token for `user` to the static token table.
    pub(crate) fn add_token(&self, token: String, user: UserInfo) {
        self.tokens
            .write()
            .insert(token, user.with_authenticated_group());
    }

    /// Who makes a request with `headers`, over a connection whose front established
    /// `front` (a client certificate's user, the in-process front's user).
    pub(crate) fn authenticate(
        &self,
        headers: &http::HeaderMap,
        front: Option<&UserInfo>,
    ) -> ApiResult<UserInfo> {
        if let Some(value) = headers.get(header::AUTHORIZATION) {
            let token = value
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
                .ok_or_else(ApiError::unauthorized)?;
            return self
                .tokens
                .read()
                .get(token)
                .cloned()
                .ok_or_else(ApiError::unauthorized);
        }
        if let Some(user) = front {
            return Ok(user.clone().with_authenticated_group());
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(ApiError::unauthorized())
    }
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
