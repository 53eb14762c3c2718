//! `authentication.k8s.io/v1` TokenReview (kube-apiserver's
//! `pkg/registry/authentication/tokenreview/storage.go`): whether `spec.token` is valid
//! for `spec.audiences` (the server's API audiences when empty), asked of the server's
//! bearer-token authenticators; `status.authenticated`, `status.user`,
//! `status.audiences` and `status.error` say what they made of it. A review without a
//! token is a 400.

use serde_json::{Value, json};

use super::self_subject_review::user_info;
use crate::{
    authn::TokenOutcome,
    errors::{ApiError, ApiResult},
    shared::Shared,
};

/// The review `object` with its status.
pub(crate) fn answer(shared: &Shared, object: &Value) -> ApiResult<Value> {
    let token = object
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let authn = &shared.auth.authenticator;
    let mut audiences: Vec<String> = object
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences = authn.audiences().to_vec();
    }
    let status = match authn.authenticate_token(&shared.engine, token, &audiences) {
        TokenOutcome::Authenticated(user, auds) => json!({
            "authenticated": true,
            "user": user_info(&user),
            "audiences": auds,
        }),
        TokenOutcome::Refused(error) if error.is_empty() => json!({"user": {}}),
        TokenOutcome::Refused(error) => json!({"user": {}, "error": error}),
    };
    let mut review = object.clone();
    let obj = crate::meta::ensure_object(&mut review);
    obj.insert("kind".into(), json!("TokenReview"));
    obj.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
    obj.insert("status".into(), status);
    let m = crate::meta::meta_mut(&mut review);
    m.entry("creationTimestamp")
        .or_insert_with(|| json!(crate::clock::now_rfc3339()));
    Ok(review)
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's `pkg/registry/authentication/tokenreview/storage_test.go`.

    use serde_json::json;

    use crate::{
        AuthConfig, EngineConfig, InProcess, UserInfo, endpoints::handlers::testing::send,
    };

    const PATH: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

    fn review(token: &str, audiences: &[&str]) -> serde_json::Value {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
               "spec": {"token": token, "audiences": audiences}})
    }

    #[tokio::test]
    async fn tokens_are_reviewed_for_audiences() {
        let auth = AuthConfig::default().token("tok", UserInfo::new("alice", ["devs"]));
        let server = InProcess::with_auth(EngineConfig::default(), &auth);
        let (code, body) = send(&server, "POST", PATH, Some(review("tok", &[]))).await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["status"]["authenticated"], true);
        assert_eq!(body["status"]["user"]["username"], "alice");
        assert_eq!(
            body["status"]["user"]["groups"],
            json!(["devs", "system:authenticated"])
        );
        assert_eq!(
            body["status"]["audiences"],
            json!(["https://kubernetes.default.svc.cluster.local"])
        );
        let (_, body) = send(&server, "POST", PATH, Some(review("wrong", &[]))).await;
        assert_eq!(body["status"]["authenticated"], json!(null));
        let (_, body) = send(&server, "POST", PATH, Some(review("tok", &["vault"]))).await;
        assert_eq!(body["status"].get("authenticated"), None);
        let (code, body) = send(&server, "POST", PATH, Some(review("", &[]))).await;
        assert_eq!(
            (code, body["message"].as_str()),
            (
                400,
                Some("token is required for TokenReview in authentication")
            )
        );
    }

    #[tokio::test]
    async fn a_service_account_token_is_reviewed_with_its_error() {
        let server = InProcess::new();
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}});
        let sas = "/api/v1/namespaces/default/serviceaccounts";
        assert_eq!(send(&server, "POST", sas, Some(sa)).await.0, 201);
        let (code, tr) = send(
            &server,
            "POST",
            &format!("{sas}/sa/token"),
            Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": ["vault"]}})),
        )
        .await;
        assert_eq!(code, 201, "{tr}");
        let token = tr["status"]["token"].as_str().expect("token");
        let (_, body) = send(&server, "POST", PATH, Some(review(token, &["vault"]))).await;
        assert_eq!(body["status"]["authenticated"], true, "{body}");
        assert_eq!(
            body["status"]["user"]["username"],
            "system:serviceaccount:default:sa"
        );
        assert_eq!(body["status"]["audiences"], json!(["vault"]));
        let (_, body) = send(&server, "POST", PATH, Some(review(token, &[]))).await;
        assert_eq!(body["status"].get("authenticated"), None);
        assert!(
            body["status"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("is invalid for the target audiences")),
            "{body}"
        );
    }
}
