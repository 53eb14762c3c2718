//! The TokenRequest API (kube-apiserver's
//! `pkg/registry/core/serviceaccount/storage/token.go`): `POST
//! /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`, a create on the
//! ServiceAccount's `token` subresource, answered with an `authentication.k8s.io/v1`
//! TokenRequest whose `status.token` is a fresh ServiceAccount token
//! ([`super::service_account`]) and `status.expirationTimestamp` its expiry. Nothing is
//! stored. `spec.expirationSeconds` defaults to 3600 and may not be under 600;
//! `spec.audiences` defaults to the server's API audiences; `spec.boundObjectRef` binds
//! the token to a Pod or Secret of the namespace.

use serde_json::{Value, json};

use super::service_account::{Bound, ServiceAccountTokens};
use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult, Cause},
    meta,
    registry::GroupResource,
};

/// The shortest lifetime a TokenRequest may ask for (10 minutes).
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// A TokenRequest's lifetime when it asks for none (`SetDefaults_TokenRequestSpec`).
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// `POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`: the
/// TokenRequest `body` answered with a token (token.go `TokenREST.Create`): 404 when
/// the ServiceAccount does not exist, 422 for a lifetime under 10 minutes or over
/// 2^32 seconds or a name or namespace that differs from the path's.
pub(crate) fn answer(
    issuer: &ServiceAccountTokens,
    engine: &Engine,
    namespace: &str,
    name: &str,
    body: &Value,
) -> ApiResult<Value> {
    let mut req = body.clone();
    let obj = meta::ensure_object(&mut req);
    obj.insert("kind".into(), json!("TokenRequest"));
    obj.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
    let invalid = |field: &str, message: &str| {
        ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            vec![Cause::invalid(field, message)],
        )
    };
    let spec = req.get("spec").cloned().unwrap_or_else(|| json!({}));
    let lifetime = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION_SECONDS,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    if lifetime < MIN_EXPIRATION_SECONDS {
        return Err(invalid(
            "spec.expirationSeconds",
            &format!("Invalid value: {lifetime}: may not specify a duration less than 10 minutes"),
        ));
    }
    if lifetime > i64::from(u32::MAX) {
        return Err(invalid(
            "spec.expirationSeconds",
            "Too long: may not specify a duration larger than 2^32 seconds",
        ));
    }
    let body_name = req.pointer("/metadata/name").and_then(Value::as_str);
    if body_name.is_some_and(|n| !n.is_empty() && n != name) {
        return Err(invalid(
            "metadata.name",
            "must match the service account name if specified",
        ));
    }
    let body_ns = req.pointer("/metadata/namespace").and_then(Value::as_str);
    if body_ns.is_some_and(|n| !n.is_empty() && n != namespace) {
        return Err(invalid(
            "metadata.namespace",
            "must match the service account namespace if specified",
        ));
    }
    let sa = engine
        .store()
        .get(
            &GroupResource::new("", "serviceaccounts"),
            &(namespace.to_string(), name.to_string()),
        )
        .filter(|sa| !meta::is_deleting(sa))
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| issuer.audiences().to_vec());
    let bound = match spec.get("boundObjectRef").filter(|r| !r.is_null()) {
        Some(reference) => Some(bound_object(engine, namespace, name, reference)?),
        None => None,
    };
    let now = crate::clock::now();
    let token = issuer
        .mint_bound(&sa, &audiences, now, lifetime, bound.as_ref())
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let expires = now
        .checked_add(jiff::SignedDuration::from_secs(lifetime))
        .unwrap_or(now);
    let m = meta::meta_mut(&mut req);
    m.insert("name".into(), json!(name));
    m.insert("namespace".into(), json!(namespace));
    m.insert(
        "creationTimestamp".into(),
        json!(crate::clock::rfc3339(now)),
    );
    let spec = meta::ensure_object(&mut req)
        .entry("spec")
        .or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("audiences".into(), json!(audiences));
        spec.insert("expirationSeconds".into(), json!(lifetime));
        spec.entry("boundObjectRef").or_insert(Value::Null);
    }
    meta::ensure_object(&mut req).insert(
        "status".into(),
        json!({"token": token, "expirationTimestamp": crate::clock::rfc3339(expires)}),
    );
    Ok(req)
}

/// The object a TokenRequest binds its token to (token.go): a Pod running as the
/// ServiceAccount, or a Secret, of the namespace; 404 when it does not exist, 400 for
/// another kind or a Pod of another ServiceAccount, 409 when the reference's uid is not
/// the object's.
fn bound_object(
    engine: &Engine,
    namespace: &str,
    service_account: &str,
    reference: &Value,
) -> ApiResult<Bound> {
    let text = |field: &str| {
        reference
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (kind, api_version, name, uid) =
        (text("kind"), text("apiVersion"), text("name"), text("uid"));
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    let resource = match (group, kind.as_str()) {
        ("", "Pod") => "pods",
        ("", "Secret") => "secrets",
        _ => {
            let version = api_version.rsplit('/').next().unwrap_or_default();
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {}, Kind={kind}",
                if group.is_empty() {
                    format!("/{version}")
                } else {
                    format!("{group}/{version}")
                }
            )));
        }
    };
    let object = engine
        .store()
        .get(
            &GroupResource::new("", resource),
            &(namespace.to_string(), name.clone()),
        )
        .ok_or_else(|| ApiError::not_found("", resource, &name))?;
    if resource == "pods"
        && object
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("default")
            != service_account
    {
        return Err(ApiError::bad_request(format!(
            "cannot bind token for serviceaccount {service_account:?} to pod running with different serviceaccount name."
        )));
    }
    let actual = meta::uid(&object).to_string();
    if !uid.is_empty() && uid != actual {
        return Err(ApiError::conflict(
            "",
            &kind,
            &name,
            &format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        ));
    }
    Ok(match resource {
        "pods" => Bound::Pod(name, actual),
        _ => Bound::Secret(name, actual),
    })
}

/// Whether a create on `group`/`resource`/`subresource` is a TokenRequest.
pub(crate) fn is_token_request(group: &str, resource: &str, subresource: &str) -> bool {
    group.is_empty() && resource == "serviceaccounts" && subresource == "token"
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's `pkg/registry/core/serviceaccount/storage/token.go` and
    //! `pkg/apis/authentication/validation/validation.go` (`ValidateTokenRequest`).

    use super::*;
    use crate::{
        EngineConfig, InProcess,
        authn::service_account::{DEFAULT_ISSUER, POD_NAME_KEY, POD_UID_KEY, Verdict},
    };

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
    fn token_requests_default_validate_and_404() {
        let (engine, _) = engine_with_sa();
        let tokens = ServiceAccountTokens::generate(DEFAULT_ISSUER, &[]).expect("key");
        let tr =
            answer(&tokens, &engine, "default", "builder", &json!({"spec": {}})).expect("token");
        assert_eq!(tr["kind"], "TokenRequest");
        assert_eq!(tr["spec"]["expirationSeconds"], 3600);
        assert_eq!(tr["spec"]["audiences"], json!([DEFAULT_ISSUER]));
        assert!(tr["status"]["token"].as_str().is_some_and(|t| t.len() > 20));
        assert!(tr["status"]["expirationTimestamp"].is_string());
        let err = answer(
            &tokens,
            &engine,
            "default",
            "builder",
            &json!({"spec": {"expirationSeconds": 599}}),
        )
        .expect_err("too short");
        assert_eq!(err.code, 422);
        assert!(
            err.message
                .contains("may not specify a duration less than 10 minutes")
        );
        let err = answer(&tokens, &engine, "default", "nobody", &json!({})).expect_err("missing");
        assert_eq!(
            (err.code, err.message.as_str()),
            (404, "serviceaccounts \"nobody\" not found")
        );
    }

    #[tokio::test]
    async fn a_token_bound_to_a_pod_lives_as_long_as_the_pod() {
        use crate::endpoints::handlers::testing::send;
        let server = InProcess::new();
        let ns = "/api/v1/namespaces/default";
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}});
        assert_eq!(
            send(&server, "POST", &format!("{ns}/serviceaccounts"), Some(sa))
                .await
                .0,
            201
        );
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"serviceAccountName": "sa", "containers": [{"name": "c", "image": "nginx"}]}});
        let (code, pod) = send(&server, "POST", &format!("{ns}/pods"), Some(pod)).await;
        assert_eq!(code, 201, "{pod}");
        let request = |reference: Value| {
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"boundObjectRef": reference}})
        };
        let token_path = format!("{ns}/serviceaccounts/sa/token");
        let (code, tr) = send(
            &server,
            "POST",
            &token_path,
            Some(request(
                json!({"kind": "Pod", "apiVersion": "v1", "name": "p"}),
            )),
        )
        .await;
        assert_eq!(code, 201, "{tr}");
        let token = tr["status"]["token"].as_str().expect("token").to_string();
        let shared = server.shared();
        let tokens = shared
            .auth
            .authenticator
            .service_accounts()
            .expect("issuer");
        let now = crate::clock::now();
        let Verdict::User(user, _) = tokens.verify(&shared.engine, &token, &aud(), now) else {
            panic!("bound token refused");
        };
        assert_eq!(user.extra[POD_NAME_KEY], ["p"]);
        assert_eq!(user.extra[POD_UID_KEY], [meta::uid(&pod)]);

        for (reference, code) in [
            (
                json!({"kind": "Pod", "apiVersion": "v1", "name": "nope"}),
                404,
            ),
            (
                json!({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "other"}),
                409,
            ),
            (
                json!({"kind": "Deployment", "apiVersion": "apps/v1", "name": "p"}),
                400,
            ),
        ] {
            let (got, body) = send(&server, "POST", &token_path, Some(request(reference))).await;
            assert_eq!(got, code, "{body}");
        }
        let (code, _) = send(&server, "DELETE", &format!("{ns}/pods/p"), None).await;
        assert_eq!(code, 200);
        assert_eq!(
            tokens.verify(&shared.engine, &token, &aud(), now),
            Verdict::Invalid("pod default/p has been deleted".into())
        );
    }
}
