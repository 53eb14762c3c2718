//! Stage 4, authorization (kube-apiserver's `WithAuthorization`): whether the user may
//! make the request, asked of the server's authorizer ([`crate::authz`]) with the
//! request's attributes; a 403 `Forbidden` if not, worded as kube-apiserver's
//! `responsewriters.Forbidden` words it
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`).

use crate::{
    authz::{Attributes, Decision},
    endpoints::{context::RequestContext, request_info::Route},
    errors::{ApiError, ApiResult},
    shared::Shared,
};

/// Authorizes the request.
pub(crate) fn authorize(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    let attributes = attributes(cx);
    let decision = shared
        .auth
        .authorizer
        .authorize(&shared.engine, &attributes);
    cx.decision = Some(decision.clone());
    match decision {
        Decision::Allow(_) => Ok(()),
        Decision::NoOpinion(reason) => Err(forbidden(&attributes, &reason)),
    }
}

/// `responsewriters.Forbidden`: `NewForbidden(group/resource, name, forbiddenMessage +
/// ": " + reason)`, details `{group, kind: resource, name}`.
pub(crate) fn forbidden(attributes: &Attributes, reason: &str) -> ApiError {
    let msg = sanitize(&forbidden_message(attributes));
    let msg = if reason.is_empty() {
        msg
    } else {
        format!("{msg}: {reason}")
    };
    let (group, resource, name) = (
        attributes.api_group.as_str(),
        attributes.resource.as_str(),
        attributes.name.as_str(),
    );
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let message = if group.is_empty() && resource.is_empty() {
        format!("forbidden: {msg}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {msg}")
    } else {
        format!("{qualified} {} is forbidden: {msg}", quote(name))
    };
    let mut err = ApiError::forbidden(message);
    err.details.group = (!group.is_empty()).then(|| group.to_string());
    err.details.kind = (!resource.is_empty()).then(|| resource.to_string());
    err.details.name = (!name.is_empty()).then(|| name.to_string());
    err
}

/// `forbiddenMessage`.
fn forbidden_message(a: &Attributes) -> String {
    let user = quote(&a.user.name);
    if !a.resource_request {
        return format!("User {user} cannot {} path {}", a.verb, quote(&a.path));
    }
    let resource = if a.subresource.is_empty() {
        a.resource.clone()
    } else {
        format!("{}/{}", a.resource, a.subresource)
    };
    let (resource, group) = (quote(&resource), quote(&a.api_group));
    if a.namespace.is_empty() {
        format!(
            "User {user} cannot {} resource {resource} in API group {group} at the cluster scope",
            a.verb
        )
    } else {
        format!(
            "User {user} cannot {} resource {resource} in API group {group} in the namespace {}",
            a.verb,
            quote(&a.namespace)
        )
    }
}

/// Go's `%q`.
fn quote(s: &str) -> String {
    crate::authz::rbac::rule::go_quote(s)
}

/// The `sanitizer` of errors.go: `&`, `<` and `>` as HTML entities.
fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The request's authorization attributes.
fn attributes(cx: &RequestContext) -> Attributes {
    let user = cx.user.clone().unwrap_or_default();
    let path = cx.parts.uri.path().to_string();
    match &cx.route {
        Some(Ok(Route::Resource(info))) => Attributes {
            user,
            verb: info.verb.as_str().to_string(),
            resource_request: true,
            api_group: info.group.clone(),
            api_version: info.version.clone(),
            resource: info.resource.clone(),
            subresource: info.subresource.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            path,
        },
        _ => Attributes {
            user,
            verb: cx.parts.method.as_str().to_ascii_lowercase(),
            resource_request: false,
            path,
            ..Attributes::default()
        },
    }
}

#[cfg(test)]
mod tests {
    //! The messages of kube's `responsewriters/errors_test.go` (`TestForbidden`).

    use super::*;
    use crate::authn::UserInfo;

    fn attrs(
        verb: &str,
        group: &str,
        resource: &str,
        sub: &str,
        ns: &str,
        name: &str,
    ) -> Attributes {
        Attributes {
            user: UserInfo::new("alice", ["g"]),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn forbidden_messages_are_kubes() {
        let cases = [
            (
                attrs("list", "", "pods", "", "default", ""),
                "",
                r#"pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default""#,
            ),
            (
                attrs("get", "", "pods", "", "default", "x"),
                "",
                r#"pods "x" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "default""#,
            ),
            (
                attrs("list", "", "nodes", "", "", ""),
                "",
                r#"nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope"#,
            ),
            (
                attrs("get", "", "pods", "log", "default", "x"),
                "",
                r#"pods "x" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "default""#,
            ),
            (
                attrs("create", "apps", "deployments", "", "ns", ""),
                "RBAC: why",
                r#"deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "ns": RBAC: why"#,
            ),
        ];
        for (a, reason, message) in cases {
            assert_eq!(forbidden(&a, reason).message, message);
        }
        let path = Attributes {
            user: UserInfo::new("alice", ["g"]),
            verb: "get".into(),
            path: "/healthz<x>".into(),
            ..Attributes::default()
        };
        let err = forbidden(&path, "");
        assert_eq!(
            err.message,
            r#"forbidden: User "alice" cannot get path "/healthz&lt;x&gt;""#
        );
        assert_eq!((err.code, err.details.kind.clone()), (403, None));
        let named = forbidden(&attrs("get", "apps", "deployments", "", "ns", "d"), "");
        assert_eq!(
            (
                named.details.group.as_deref(),
                named.details.kind.as_deref(),
                named.details.name.as_deref()
            ),
            (Some("apps"), Some("deployments"), Some("d"))
        );
    }
}
