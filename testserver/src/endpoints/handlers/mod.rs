//! One function per verb (kube-apiserver's `endpoints/handlers`: `get.go`, `create.go`,
//! `update.go`, `patch.go`, `delete.go`, `watch.go`). Each runs the endpoint's steps in
//! kube-apiserver's order — decode, admission (mutating, then validating), registry,
//! encode — and records each in the request's trail. With admission webhooks or policies
//! configured, the writes run their dynamic admission around a dry run of the registry,
//! outside the store's lock (`admitted`).

mod admitted;
pub(crate) mod converted;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod delete_collection;
pub(crate) mod get;
pub(crate) mod list;
pub(crate) mod patch;
mod patching;
pub(crate) mod update;
pub(crate) mod watch;

use serde_json::Value;

use super::{
    context::{RequestContext, UserInfo},
    scope::Scope,
};
use crate::{
    admission::{self, Attributes},
    engine::WriteGuard,
    errors::ApiResult,
};

/// RBAC's escalation check of a write of a role or binding, for the registry to run on
/// the object it is about to store (`crate::authz::rbac::escalation`, kube's policy-based
/// storage); `body` is the object sent (`None` for a patch).
fn escalation_guard(
    scope: &Scope<'_>,
    cx: &RequestContext,
    body: Option<&Value>,
) -> ApiResult<Option<WriteGuard>> {
    let anonymous;
    let user = match cx.user.as_ref() {
        Some(user) => user,
        None => {
            anonymous = UserInfo::anonymous();
            &anonymous
        }
    };
    crate::authz::rbac::escalation::guard(
        &scope.shared.auth.authorizer,
        scope.engine(),
        &scope.target,
        user,
        body,
    )
}

/// The admission steps of a write: the mutating plugins, then the validating ones.
fn admit(
    scope: &Scope<'_>,
    cx: &mut RequestContext,
    dry_run: bool,
    mut object: Option<&mut Value>,
) -> ApiResult<()> {
    let anonymous;
    let user = match cx.user.as_ref() {
        Some(user) => user,
        None => {
            anonymous = UserInfo::anonymous();
            &anonymous
        }
    };
    let attributes = Attributes {
        request: scope.info,
        user,
        dry_run,
    };
    cx.trail.enter("admission.mutating")?;
    admission::mutating::admit(&attributes, object.as_deref_mut())?;
    cx.trail.enter("admission.validating")?;
    admission::validating::validate(&attributes, object.as_deref())
}

#[cfg(test)]
pub(crate) mod testing {
    //! Serving one request through the whole chain, for the handlers' unit tests.

    use bytes::Bytes;
    use serde_json::Value;

    use crate::InProcess;

    /// A reply's status and JSON body (`Null` for a stream or a non-JSON body).
    pub(crate) async fn send(
        server: &InProcess,
        method: &str,
        uri: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
            .expect("request");
        let reply = server.serve(request).await;
        let code = reply.status().as_u16();
        let bytes: Bytes = reply.into_body().collect().await.unwrap_or_default();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }
}
