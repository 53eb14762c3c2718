//! `authentication.k8s.io/v1` SelfSubjectReview (kube-apiserver's
//! `pkg/registry/authentication/selfsubjectreview/rest.go`): who the requesting user is —
//! after impersonation, the impersonated user (`kubectl auth whoami`).

use serde_json::{Map, Value, json};

use crate::{authn::UserInfo, endpoints::context::RequestContext, errors::ApiResult};

/// A user as `authenticationv1.UserInfo` (empty fields left out).
pub(crate) fn user_info(user: &UserInfo) -> Value {
    let mut out = Map::new();
    if !user.name.is_empty() {
        out.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        out.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        out.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        out.insert("extra".into(), json!(user.extra));
    }
    Value::Object(out)
}

/// The review `object` with `status.userInfo` of the request's user.
pub(crate) fn answer(cx: &RequestContext, object: &Value) -> ApiResult<Value> {
    let mut review = object.clone();
    let user = cx.user.clone().unwrap_or_default();
    let obj = crate::meta::ensure_object(&mut review);
    obj.insert("kind".into(), json!("SelfSubjectReview"));
    obj.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
    let m = crate::meta::meta_mut(&mut review);
    m.entry("creationTimestamp")
        .or_insert_with(|| json!(crate::clock::now_rfc3339()));
    crate::meta::ensure_object(&mut review)
        .insert("status".into(), json!({"userInfo": user_info(&user)}));
    Ok(review)
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's
    //! `pkg/registry/authentication/selfsubjectreview/rest_test.go`.

    use serde_json::json;

    use crate::{InProcess, UserInfo, endpoints::handlers::testing::send};

    const PATH: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

    #[tokio::test]
    async fn the_requesting_user_comes_back() {
        let mut bob = UserInfo::new("bob", ["devs"]);
        bob.uid = "42".into();
        bob.extra.insert("scopes".into(), vec!["view".into()]);
        let server = InProcess::new().as_user(bob);
        let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
        let (code, body) = send(&server, "POST", PATH, Some(review)).await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(
            body["status"]["userInfo"],
            json!({"username": "bob", "uid": "42", "groups": ["devs", "system:authenticated"], "extra": {"scopes": ["view"]}})
        );
        assert_eq!(body["kind"], "SelfSubjectReview");
    }
}
