//! [`MetricsAuth`]: who may read the manager's metrics (controller-runtime's
//! `pkg/metrics/filters` `WithAuthenticationAndAuthorization`, kube-rbac-proxy's job built
//! in): the request's bearer token is reviewed by the API server (`authentication.k8s.io/v1`
//! TokenReview), and the user it names must be allowed the request's verb on its path
//! (`authorization.k8s.io/v1` SubjectAccessReview with `nonResourceAttributes`: `get` on
//! `/metrics`, which a ClusterRole grants with `nonResourceURLs: ["/metrics"]`).
//!
//! No token, or one the API server does not accept, is a 401; a user without the
//! permission a 403; a review that fails (the API server unreachable, or the manager's
//! own account not allowed to create reviews) a 500. Answers are cached as
//! controller-runtime caches them: a token's review for one minute, an allowed request for
//! five minutes, a denied one for thirty seconds.

use std::{collections::HashMap, time::Duration};

use http::{HeaderMap, Method, StatusCode, header};
use k8s_openapi::api::{
    authentication::v1::{TokenReview, TokenReviewSpec},
    authorization::v1::{NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::client::{Client, Error};

/// How long a token's review is trusted (controller-runtime's `CacheTTL`).
pub const AUTHENTICATION_CACHE_TTL: Duration = Duration::from_secs(60);
/// How long an allowed request is trusted (controller-runtime's `AllowCacheTTL`).
pub const ALLOW_CACHE_TTL: Duration = Duration::from_secs(300);
/// How long a denied request stays denied (controller-runtime's `DenyCacheTTL`).
pub const DENY_CACHE_TTL: Duration = Duration::from_secs(30);
/// Entries a cache holds at most; a full cache is emptied (its entries are cheap to ask
/// again).
const CACHE_LIMIT: usize = 4096;

/// A review the filter asked of the API server failed.
#[derive(Debug, thiserror::Error)]
pub enum MetricsAuthError {
    /// The TokenReview could not be created (the manager needs `create` on
    /// `tokenreviews.authentication.k8s.io`).
    #[error("token review: {0}")]
    TokenReview(#[source] Error),
    /// The SubjectAccessReview could not be created (the manager needs `create` on
    /// `subjectaccessreviews.authorization.k8s.io`).
    #[error("subject access review: {0}")]
    SubjectAccessReview(#[source] Error),
    /// A review could not be encoded.
    #[error("encoding a review: {0}")]
    Encode(#[from] serde_json::Error),
    /// A review request could not be built.
    #[error("building a review request: {0}")]
    Request(#[from] http::Error),
}

/// Who a token belongs to, as the TokenReview said.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MetricsUser {
    /// `status.user.username`.
    pub name: String,
    /// `status.user.uid`.
    pub uid: Option<String>,
    /// `status.user.groups`.
    pub groups: Vec<String>,
    /// `status.user.extra`.
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

/// What the filter decided about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Allowed,
    /// 401: no bearer token, or one the API server does not accept.
    Unauthenticated,
    /// 403: the user may not `verb` the path; the message names the user.
    Denied {
        /// `Authorization denied for user <name>`.
        message: String,
    },
}

impl Verdict {
    /// The HTTP status the verdict is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Allowed => StatusCode::OK,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Denied { .. } => StatusCode::FORBIDDEN,
        }
    }
}

struct Cached<T> {
    value: T,
    until: Instant,
}

/// A small map whose entries expire.
struct TtlCache<K, V>(Mutex<HashMap<K, Cached<V>>>);

impl<K: std::hash::Hash + Eq, V: Clone> TtlCache<K, V> {
    fn new() -> Self {
        Self(Mutex::new(HashMap::new()))
    }

    fn get(&self, key: &K) -> Option<V> {
        let map = self.0.lock();
        map.get(key)
            .filter(|c| c.until > Instant::now())
            .map(|c| c.value.clone())
    }

    fn put(&self, key: K, value: V, ttl: Duration) {
        let mut map = self.0.lock();
        if map.len() >= CACHE_LIMIT {
            map.clear();
        }
        map.insert(
            key,
            Cached {
                value,
                until: Instant::now() + ttl,
            },
        );
    }
}

/// The authentication and authorization filter of the manager's secure metrics endpoint;
/// see the module docs. Asks the API server through the manager's client.
pub struct MetricsAuth {
    client: Client,
    /// Token → the user it names (`None`: refused).
    tokens: TtlCache<String, Option<MetricsUser>>,
    /// (user, verb, path) → allowed, or the denial's reason.
    decisions: TtlCache<(MetricsUser, String, String), Result<(), String>>,
}

impl std::fmt::Debug for MetricsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No tokens in debug output.
        f.debug_struct("MetricsAuth").finish_non_exhaustive()
    }
}

impl MetricsAuth {
    /// A filter asking the API server of `client` (which needs `create` on TokenReviews and
    /// SubjectAccessReviews: kubebuilder's `metrics-auth-role`).
    pub fn new(client: Client) -> Self {
        Self {
            client,
            tokens: TtlCache::new(),
            decisions: TtlCache::new(),
        }
    }

    /// Judges a request for `path` with `method` and `headers`.
    pub async fn check(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<Verdict, MetricsAuthError> {
        let Some(token) = bearer_token(headers) else {
            return Ok(Verdict::Unauthenticated);
        };
        let Some(user) = self.authenticate(token).await? else {
            return Ok(Verdict::Unauthenticated);
        };
        let verb = method.as_str().to_ascii_lowercase();
        match self.authorize(&user, &verb, path).await? {
            Ok(()) => Ok(Verdict::Allowed),
            Err(reason) => {
                tracing::debug!(user = %user.name, %verb, %path, %reason, "metrics request denied");
                Ok(Verdict::Denied {
                    message: format!("Authorization denied for user {}", user.name),
                })
            }
        }
    }

    /// The user `token` names, from the cache or a TokenReview.
    async fn authenticate(&self, token: &str) -> Result<Option<MetricsUser>, MetricsAuthError> {
        if let Some(cached) = self.tokens.get(&token.to_owned()) {
            return Ok(cached);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_owned(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer: TokenReview = self
            .create("/apis/authentication.k8s.io/v1/tokenreviews", &review)
            .await
            .map_err(|e| match e {
                Created::Api(e) => MetricsAuthError::TokenReview(e),
                Created::Local(e) => e,
            })?;
        let user = answer.status.and_then(|status| {
            if status.authenticated != Some(true) {
                return None;
            }
            let user = status.user.unwrap_or_default();
            Some(MetricsUser {
                name: user.username.unwrap_or_default(),
                uid: user.uid,
                groups: user.groups.unwrap_or_default(),
                extra: user.extra.unwrap_or_default(),
            })
        });
        self.tokens
            .put(token.to_owned(), user.clone(), AUTHENTICATION_CACHE_TTL);
        Ok(user)
    }

    /// Whether `user` may `verb` `path`, from the cache or a SubjectAccessReview.
    async fn authorize(
        &self,
        user: &MetricsUser,
        verb: &str,
        path: &str,
    ) -> Result<Result<(), String>, MetricsAuthError> {
        let key = (user.clone(), verb.to_owned(), path.to_owned());
        if let Some(cached) = self.decisions.get(&key) {
            return Ok(cached);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: (!user.extra.is_empty()).then(|| user.extra.clone()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                resource_attributes: None,
            },
            ..SubjectAccessReview::default()
        };
        let answer: SubjectAccessReview = self
            .create(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                &review,
            )
            .await
            .map_err(|e| match e {
                Created::Api(e) => MetricsAuthError::SubjectAccessReview(e),
                Created::Local(e) => e,
            })?;
        let status = answer.status.unwrap_or_default();
        let decision = if status.allowed && status.denied != Some(true) {
            Ok(())
        } else {
            Err(status.reason.unwrap_or_default())
        };
        let ttl = match decision {
            Ok(()) => ALLOW_CACHE_TTL,
            Err(_) => DENY_CACHE_TTL,
        };
        self.decisions.put(key, decision.clone(), ttl);
        Ok(decision)
    }

    /// POSTs `review` to `path` and decodes the answer.
    async fn create<T>(&self, path: &str, review: &T) -> Result<T, Created>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let body = serde_json::to_vec(review).map_err(|e| Created::Local(e.into()))?;
        let request = http::Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .map_err(|e| Created::Local(e.into()))?;
        self.client.request(request).await.map_err(Created::Api)
    }
}

/// Why a review was not created: the API server's answer, or a local failure.
enum Created {
    Api(Error),
    Local(MetricsAuthError),
}

/// The token of an `Authorization: Bearer <token>` header (the scheme matched without
/// regard to case, as kube-apiserver's bearer-token authenticator does).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    //! After controller-runtime's `pkg/metrics/filters/filters_test.go` (the header
    //! parsing; the reviews are tested against the test server in
    //! `runtime/tests/manager_secure_metrics_testserver.rs`).

    use super::*;

    fn with_authorization(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            value.parse().expect("a header value"),
        );
        headers
    }

    #[test]
    fn a_bearer_token_is_read_from_the_authorization_header() {
        assert_eq!(bearer_token(&with_authorization("Bearer abc")), Some("abc"));
        assert_eq!(
            bearer_token(&with_authorization("bearer  abc ")),
            Some("abc")
        );
        assert_eq!(bearer_token(&with_authorization("Basic abc")), None);
        assert_eq!(bearer_token(&with_authorization("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    #[test]
    fn verdicts_map_to_statuses() {
        assert_eq!(Verdict::Allowed.status(), StatusCode::OK);
        assert_eq!(Verdict::Unauthenticated.status(), StatusCode::UNAUTHORIZED);
        let denied = Verdict::Denied {
            message: "Authorization denied for user x".into(),
        };
        assert_eq!(denied.status(), StatusCode::FORBIDDEN);
    }

    #[tokio::test(start_paused = true)]
    async fn cached_entries_expire() {
        let cache = TtlCache::new();
        cache.put("k", 1, Duration::from_secs(30));
        assert_eq!(cache.get(&"k"), Some(1));
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(cache.get(&"k"), None);
    }
}
