//! ServiceAccount tokens: their issuer and the authenticator that verifies them
//! (`pkg/serviceaccount/jwt.go`, `pkg/serviceaccount/claims.go`); the TokenRequest API
//! that hands them out is [`super::token_request`].
//!
//! The server generates an ECDSA P-256 signing key when it starts; its tokens are ES256
//! JWTs with kube-apiserver's claims: `iss` (the server's issuer), `sub`
//! (`system:serviceaccount:<ns>:<name>`), `aud`, `exp`, `iat`, `nbf`, `jti`, and the
//! private `kubernetes.io` claim naming the namespace and the ServiceAccount's name and
//! uid. A token is accepted when its issuer is the server's (else it is another
//! authenticator's), its signature is this server's key's, it has not expired (go-jose's
//! leeway of a minute, as kube), its audiences meet the requested ones, and the
//! ServiceAccount still exists with the uid the token names.

use std::collections::BTreeSet;

use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AuthnError, UserInfo};
use crate::{engine::Engine, meta, registry::GroupResource};

/// The issuer of the server's tokens by default (`--service-account-issuer` of a kind or
/// kubeadm cluster); the server's API audiences default to it, as kube-apiserver's
/// `--api-audiences` does.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The prefix of a ServiceAccount's user name (`serviceaccount.ServiceAccountUsernamePrefix`).
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";
/// The group of every ServiceAccount (`serviceaccount.AllServiceAccountsGroup`).
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// The extra key naming a token's credential (`serviceaccount.CredentialIDKey`).
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";

/// The extra key naming the Pod a token is bound to (`serviceaccount.PodNameKey`).
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
/// The extra key with the uid of the Pod a token is bound to (`serviceaccount.PodUIDKey`).
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";

/// The object a token is bound to (a TokenRequest's `spec.boundObjectRef`): it is valid
/// only while that object exists with that uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Bound {
    /// A Pod (of the ServiceAccount's namespace): its name and uid.
    Pod(String, String),
    /// A Secret (of the ServiceAccount's namespace): its name and uid.
    Secret(String, String),
}

/// go-jose's `DefaultLeeway`: `exp` and `nbf` are checked a minute loosely.
const LEEWAY_SECONDS: i64 = 60;

/// `system:serviceaccount:<namespace>:<name>` (`serviceaccount.MakeUsername`).
pub fn user_name(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USER_PREFIX}{namespace}:{name}")
}

/// The namespace and name of a ServiceAccount's user name, or `None` for another user
/// (`serviceaccount.SplitUsername`).
pub fn split_user_name(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// The groups of a ServiceAccount in `namespace` (`serviceaccount.MakeGroupNames`).
pub fn group_names(namespace: &str) -> Vec<String> {
    vec![
        ALL_SERVICE_ACCOUNTS.to_string(),
        format!("{ALL_SERVICE_ACCOUNTS}:{namespace}"),
    ]
}

/// The claims of a token (`claims.go` `privateClaims` with the registered ones).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    #[serde(deserialize_with = "one_or_many")]
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    nbf: i64,
    #[serde(default)]
    jti: String,
    #[serde(rename = "kubernetes.io")]
    kubernetes: KubernetesClaims,
}

/// The private `kubernetes.io` claim.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KubernetesClaims {
    namespace: String,
    serviceaccount: ObjectRef,
    /// The Pod the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pod: Option<ObjectRef>,
    /// The Secret the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secret: Option<ObjectRef>,
}

/// A reference to the ServiceAccount.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ObjectRef {
    name: String,
    uid: String,
}

/// `aud` may be one string or a list (RFC 7519).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Aud {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Aud::deserialize(d)? {
        Aud::One(a) => vec![a],
        Aud::Many(a) => a,
    })
}

/// What the ServiceAccount token authenticator makes of a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not a token of this issuer: another authenticator's, or none's.
    NotMine,
    /// A valid token: its user and the audiences it was accepted for.
    User(UserInfo, Vec<String>),
    /// A token of this issuer that is not valid, and why.
    Invalid(String),
}

/// The server's ServiceAccount token issuer: its signing key, issuer and API audiences.
pub(crate) struct ServiceAccountTokens {
    issuer: String,
    audiences: Vec<String>,
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountTokens {
    /// A fresh signing key for tokens of `issuer`, accepted for `audiences` (the
    /// issuer alone when empty).
    pub(crate) fn generate(issuer: &str, audiences: &[String]) -> Result<Self, AuthnError> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| AuthnError::SigningKey(e.to_string()))?;
        let audiences = if audiences.is_empty() {
            vec![issuer.to_string()]
        } else {
            audiences.to_vec()
        };
        Ok(ServiceAccountTokens {
            issuer: issuer.to_string(),
            audiences,
            encoding: EncodingKey::from_ec_der(&key.serialize_der()),
            decoding: DecodingKey::from_ec_der(key.public_key_raw()),
        })
    }

    /// The server's API audiences.
    pub(crate) fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// A token for the ServiceAccount `sa` (an object of the store) for `audiences`,
    /// issued at `now` and valid for `lifetime` seconds.
    pub(crate) fn mint(
        &self,
        sa: &Value,
        audiences: &[String],
        now: jiff::Timestamp,
        lifetime: i64,
    ) -> Result<String, AuthnError> {
        self.mint_bound(sa, audiences, now, lifetime, None)
    }

    /// [`Self::mint`], bound to `bound` when given.
    pub(crate) fn mint_bound(
        &self,
        sa: &Value,
        audiences: &[String],
        now: jiff::Timestamp,
        lifetime: i64,
        bound: Option<&Bound>,
    ) -> Result<String, AuthnError> {
        let reference = |name: &String, uid: &String| ObjectRef {
            name: name.clone(),
            uid: uid.clone(),
        };
        let namespace = meta::namespace(sa);
        let name = meta::name(sa);
        let iat = now.as_second();
        let claims = Claims {
            iss: self.issuer.clone(),
            sub: user_name(namespace, name),
            aud: audiences.to_vec(),
            exp: iat.saturating_add(lifetime),
            iat,
            nbf: iat,
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes: KubernetesClaims {
                namespace: namespace.to_string(),
                serviceaccount: ObjectRef {
                    name: name.to_string(),
                    uid: meta::uid(sa).to_string(),
                },
                pod: match bound {
                    Some(Bound::Pod(name, uid)) => Some(reference(name, uid)),
                    _ => None,
                },
                secret: match bound {
                    Some(Bound::Secret(name, uid)) => Some(reference(name, uid)),
                    _ => None,
                },
            },
        };
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &self.encoding)
            .map_err(|e| AuthnError::SigningKey(e.to_string()))
    }

    /// Verifies `token` for the `requested` audiences at `now`, looking the
    /// ServiceAccount up in `engine` (`jwt.go` `AuthenticateToken`, `claims.go`
    /// `Validate`).
    pub(crate) fn verify(
        &self,
        engine: &Engine,
        token: &str,
        requested: &[String],
        now: jiff::Timestamp,
    ) -> Verdict {
        // `hasCorrectIssuer`: a token of another issuer (or no JWT at all) is not ours.
        if unverified_issuer(token).as_deref() != Some(self.issuer.as_str()) {
            return Verdict::NotMine;
        }
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let claims = match jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation) {
            Ok(data) => data.claims,
            Err(err) => {
                use jsonwebtoken::errors::ErrorKind;
                return Verdict::Invalid(match err.kind() {
                    ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => {
                        "go-jose/go-jose: error in cryptographic primitive".to_string()
                    }
                    _ => format!("invalid bearer token, {err}"),
                });
            }
        };
        let now = now.as_second();
        if now > claims.exp.saturating_add(LEEWAY_SECONDS) {
            return Verdict::Invalid("service account token has expired".into());
        }
        if now < claims.nbf.saturating_sub(LEEWAY_SECONDS) {
            return Verdict::Invalid("service account token is not valid yet".into());
        }
        let token_audiences = if claims.aud.is_empty() {
            self.audiences.clone()
        } else {
            claims.aud.clone()
        };
        let accepted = intersect(&token_audiences, requested);
        if accepted.is_empty() {
            return Verdict::Invalid(format!(
                "token audiences {token_audiences:?} is invalid for the target audiences {requested:?}"
            ));
        }
        let namespace = &claims.kubernetes.namespace;
        let sa_ref = &claims.kubernetes.serviceaccount;
        if claims.sub != user_name(namespace, &sa_ref.name) {
            return Verdict::Invalid("sub does not match the kubernetes.io claims".into());
        }
        let stored = engine.store().get(
            &GroupResource::new("", "serviceaccounts"),
            &(namespace.clone(), sa_ref.name.clone()),
        );
        let Some(sa) = stored.filter(|sa| !meta::is_deleting(sa)) else {
            return Verdict::Invalid(format!(
                "service account {namespace}/{} has been deleted",
                sa_ref.name
            ));
        };
        if meta::uid(&sa) != sa_ref.uid {
            return Verdict::Invalid(format!(
                "service account UID ({}) does not match claim ({})",
                meta::uid(&sa),
                sa_ref.uid
            ));
        }
        let mut user = UserInfo::new(user_name(namespace, &sa_ref.name), group_names(namespace));
        user.uid = sa_ref.uid.clone();
        // A bound token lives as long as its object (claims.go `Validate`).
        for (resource, kind, reference) in [
            ("pods", "pod", &claims.kubernetes.pod),
            ("secrets", "secret", &claims.kubernetes.secret),
        ] {
            let Some(reference) = reference else {
                continue;
            };
            let stored = engine.store().get(
                &GroupResource::new("", resource),
                &(namespace.clone(), reference.name.clone()),
            );
            let Some(object) = stored else {
                return Verdict::Invalid(format!(
                    "{kind} {namespace}/{} has been deleted",
                    reference.name
                ));
            };
            if meta::uid(&object) != reference.uid {
                return Verdict::Invalid(format!(
                    "{kind} UID ({}) does not match claim ({})",
                    meta::uid(&object),
                    reference.uid
                ));
            }
        }
        if let Some(pod) = &claims.kubernetes.pod {
            user.extra
                .insert(POD_NAME_KEY.into(), vec![pod.name.clone()]);
            user.extra.insert(POD_UID_KEY.into(), vec![pod.uid.clone()]);
        }
        if !claims.jti.is_empty() {
            user.extra.insert(
                CREDENTIAL_ID_KEY.into(),
                vec![format!("JTI={}", claims.jti)],
            );
        }
        Verdict::User(user, accepted)
    }
}

/// The `iss` of a JWT, read without verifying it.
fn unverified_issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(String::from)
}

/// The audiences in both lists, in `a`'s order (`authenticator.Audiences.Intersect`).
fn intersect(a: &[String], b: &[String]) -> Vec<String> {
    let b: BTreeSet<&String> = b.iter().collect();
    a.iter().filter(|x| b.contains(x)).cloned().collect()
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's `pkg/serviceaccount/jwt_test.go`,
    //! `pkg/serviceaccount/claims_test.go` and
    //! `pkg/registry/core/serviceaccount/storage/token.go`.

    use serde_json::json;

    use super::*;
    use crate::{EngineConfig, InProcess};

    fn engine_with_sa() -> (std::sync::Arc<Engine>, Value) {
        let engine = crate::apiserver::new_engine(EngineConfig::default());
        let target = crate::engine::Target {
            rt: crate::engine::resolve(&engine, "", "v1", "serviceaccounts").expect("rt"),
            namespace: Some("default".into()),
            name: None,
            subresource: None,
        };
        let sa = engine
            .create(
                &target,
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"}}),
                &crate::engine::WriteOptions::default(),
            )
            .expect("create");
        (engine, (*sa).clone())
    }

    fn aud() -> Vec<String> {
        vec![DEFAULT_ISSUER.to_string()]
    }

    #[test]
    fn names_and_groups() {
        assert_eq!(user_name("ns", "sa"), "system:serviceaccount:ns:sa");
        assert_eq!(
            split_user_name("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        assert_eq!(split_user_name("system:serviceaccount:ns"), None);
        assert_eq!(split_user_name("bob"), None);
        assert_eq!(
            group_names("ns"),
            ["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
    }

    #[test]
    fn a_minted_token_authenticates_as_its_service_account() {
        let (engine, sa) = engine_with_sa();
        let tokens = ServiceAccountTokens::generate(DEFAULT_ISSUER, &[]).expect("key");
        let now = crate::clock::now();
        let token = tokens.mint(&sa, &aud(), now, 3600).expect("mint");
        let Verdict::User(user, auds) = tokens.verify(&engine, &token, &aud(), now) else {
            panic!("not authenticated");
        };
        assert_eq!(user.name, "system:serviceaccount:default:builder");
        assert_eq!(user.uid, meta::uid(&sa));
        assert_eq!(
            user.groups,
            ["system:serviceaccounts", "system:serviceaccounts:default"]
        );
        let jti = &user.extra[CREDENTIAL_ID_KEY];
        assert!(jti[0].starts_with("JTI="), "{jti:?}");
        assert_eq!(auds, aud());
        let claims: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(token.split('.').nth(1).expect("payload"))
                .expect("b64"),
        )
        .expect("json");
        assert_eq!(claims["sub"], "system:serviceaccount:default:builder");
        assert_eq!(claims["kubernetes.io"]["namespace"], "default");
        assert_eq!(
            claims["kubernetes.io"]["serviceaccount"]["uid"],
            meta::uid(&sa)
        );
        assert_eq!(claims["exp"].as_i64(), Some(now.as_second() + 3600));
    }

    #[test]
    fn expired_foreign_wrong_audience_and_deleted_tokens_are_refused() {
        let (engine, sa) = engine_with_sa();
        let tokens = ServiceAccountTokens::generate(DEFAULT_ISSUER, &[]).expect("key");
        let now = crate::clock::now();
        let hour_ago = now
            .checked_sub(jiff::SignedDuration::from_secs(7200))
            .expect("time");
        let old = tokens.mint(&sa, &aud(), hour_ago, 3600).expect("mint");
        assert_eq!(
            tokens.verify(&engine, &old, &aud(), now),
            Verdict::Invalid("service account token has expired".into())
        );
        // Within go-jose's minute of leeway an expired token still passes.
        let just = now
            .checked_sub(jiff::SignedDuration::from_secs(630))
            .expect("t");
        let just = tokens.mint(&sa, &aud(), just, 600).expect("mint");
        assert!(matches!(
            tokens.verify(&engine, &just, &aud(), now),
            Verdict::User(..)
        ));

        let other = ServiceAccountTokens::generate(DEFAULT_ISSUER, &[]).expect("key");
        let foreign = other.mint(&sa, &aud(), now, 3600).expect("mint");
        assert_eq!(
            tokens.verify(&engine, &foreign, &aud(), now),
            Verdict::Invalid("go-jose/go-jose: error in cryptographic primitive".into())
        );
        let elsewhere = ServiceAccountTokens::generate("https://elsewhere", &[]).expect("key");
        let theirs = elsewhere.mint(&sa, &aud(), now, 3600).expect("mint");
        assert_eq!(
            tokens.verify(&engine, &theirs, &aud(), now),
            Verdict::NotMine
        );
        assert_eq!(
            tokens.verify(&engine, "not-a-jwt", &aud(), now),
            Verdict::NotMine
        );

        let vault = tokens
            .mint(&sa, &["vault".into()], now, 3600)
            .expect("mint");
        assert!(matches!(
            tokens.verify(&engine, &vault, &aud(), now),
            Verdict::Invalid(m) if m.contains("is invalid for the target audiences")
        ));
        assert!(matches!(
            tokens.verify(&engine, &vault, &["vault".into()], now),
            Verdict::User(_, a) if a == ["vault"]
        ));

        let mut recreated = sa.clone();
        recreated["metadata"]["uid"] = json!("another-uid");
        let stale = tokens.mint(&recreated, &aud(), now, 3600).expect("mint");
        assert!(matches!(
            tokens.verify(&engine, &stale, &aud(), now),
            Verdict::Invalid(m) if m.starts_with("service account UID (")
        ));
        let mut gone = sa.clone();
        gone["metadata"]["name"] = json!("gone");
        let gone = tokens.mint(&gone, &aud(), now, 3600).expect("mint");
        assert_eq!(
            tokens.verify(&engine, &gone, &aud(), now),
            Verdict::Invalid("service account default/gone has been deleted".into())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_expires_on_the_servers_clock() {
        let server = InProcess::new();
        let shared = server.shared();
        let (code, _) = crate::endpoints::handlers::testing::send(
            &server,
            "POST",
            "/api/v1/namespaces/default/serviceaccounts",
            Some(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}})),
        )
        .await;
        assert_eq!(code, 201);
        let (code, tr) = crate::endpoints::handlers::testing::send(
            &server,
            "POST",
            "/api/v1/namespaces/default/serviceaccounts/sa/token",
            Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}})),
        )
        .await;
        assert_eq!(code, 201, "{tr}");
        let token = tr["status"]["token"].as_str().expect("token").to_string();
        let authn = &shared.auth.authenticator;
        let who = |t: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_str(&format!("Bearer {t}")).expect("header"),
            );
            authn.authenticate(&shared.engine, &h, None, None)
        };
        assert_eq!(
            who(&token).expect("valid").name,
            "system:serviceaccount:default:sa"
        );
        tokio::time::advance(std::time::Duration::from_secs(661)).await;
        assert_eq!(who(&token).expect_err("expired").code, 401);
    }
}
