//! Stage 3, impersonation (kube-apiserver's `WithImpersonation`,
//! `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`): the
//! `Impersonate-User`, `Impersonate-Uid`, `Impersonate-Group` (repeatable) and
//! `Impersonate-Extra-<key>` headers replace the authenticated user, once the authorizer
//! allows the verb `impersonate` on each thing asked for:
//!
//! | header | resource |
//! | --- | --- |
//! | `Impersonate-User: system:serviceaccount:<ns>:<name>` | `serviceaccounts` `<name>` in `<ns>`, group `""` |
//! | `Impersonate-User: <name>` | `users` `<name>`, group `""` |
//! | `Impersonate-Group: <group>` | `groups` `<group>`, group `""` |
//! | `Impersonate-Uid: <uid>` | `uids` `<uid>`, group `authentication.k8s.io` |
//! | `Impersonate-Extra-<key>: <value>` | `userextras/<key>` `<value>`, group `authentication.k8s.io` |
//!
//! The first refusal is a 403 with kube-apiserver's message; groups, a uid or extras
//! without a user are a 500 (`requested ... without impersonating a user`). A
//! ServiceAccount impersonated without groups gets its fixed groups; a user other than
//! `system:anonymous` gets `system:authenticated` unless `system:authenticated` or
//! `system:unauthenticated` is among the groups, and `system:anonymous` gets
//! `system:unauthenticated`. The request then acts as the impersonated user, the
//! authenticated one is kept as its impersonator, and the headers are removed.

use std::collections::BTreeMap;

use crate::{
    authn::{
        ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo,
        service_account::{group_names, split_user_name, user_name},
    },
    authz::{Attributes, Decision},
    endpoints::context::RequestContext,
    errors::{ApiError, ApiResult},
    shared::Shared,
};

/// `Impersonate-User`.
const USER: &str = "impersonate-user";
/// `Impersonate-Uid`.
const UID: &str = "impersonate-uid";
/// `Impersonate-Group`.
const GROUP: &str = "impersonate-group";
/// The prefix of `Impersonate-Extra-<key>`.
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// One thing the request asks to impersonate (impersonation.go builds `ObjectReference`s).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    Uid(String),
    Extra { key: String, value: String },
}

impl Request {
    /// The authorization attributes of impersonating this as `requestor`.
    fn attributes(&self, requestor: &UserInfo) -> Attributes {
        let (group, resource, subresource, namespace, name) = match self {
            Request::ServiceAccount { namespace, name } => {
                ("", "serviceaccounts", "", namespace.as_str(), name.as_str())
            }
            Request::User(name) => ("", "users", "", "", name.as_str()),
            Request::Group(name) => ("", "groups", "", "", name.as_str()),
            Request::Uid(uid) => ("authentication.k8s.io", "uids", "", "", uid.as_str()),
            Request::Extra { key, value } => (
                "authentication.k8s.io",
                "userextras",
                key.as_str(),
                "",
                value.as_str(),
            ),
        };
        Attributes {
            user: requestor.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            api_group: group.into(),
            api_version: String::new(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: String::new(),
        }
    }

    /// Go's `%v` of the `ObjectReference` (`{Kind Namespace Name UID APIVersion
    /// ResourceVersion FieldPath}`), for the error naming what was requested.
    fn go_format(&self) -> String {
        let (kind, namespace, name, api_version, field_path) = match self {
            Request::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Request::User(n) => ("User", "", n.as_str(), "", ""),
            Request::Group(n) => ("Group", "", n.as_str(), "", ""),
            Request::Uid(u) => ("UID", "", u.as_str(), "authentication.k8s.io/v1", ""),
            Request::Extra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                "authentication.k8s.io/v1",
                key.as_str(),
            ),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field_path}}}")
    }
}

/// The impersonation requests of `headers` (`buildImpersonationRequests`), in the order
/// kube-apiserver checks them: user, groups, extras, uid.
fn requests(headers: &http::HeaderMap) -> ApiResult<Vec<Request>> {
    let mut out = Vec::new();
    let user = headers
        .get(USER)
        .and_then(|v| v.to_str().ok())
        .filter(|u| !u.is_empty());
    if let Some(user) = user {
        out.push(match split_user_name(user) {
            Some((namespace, name)) => Request::ServiceAccount {
                namespace: namespace.into(),
                name: name.into(),
            },
            None => Request::User(user.into()),
        });
    }
    let mut others = false;
    for group in headers.get_all(GROUP) {
        others = true;
        out.push(Request::Group(
            group.to_str().unwrap_or_default().to_string(),
        ));
    }
    let mut extras: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            others = true;
            // Keys are lower-cased, then percent-decoded to carry characters headers cannot
            // (`unescapeExtraKey`: a malformed escape is kept as it came).
            let key = key.to_lowercase();
            let key = unescape(&key).unwrap_or(key);
            extras
                .entry(key)
                .or_default()
                .push(value.to_str().unwrap_or_default().to_string());
        }
    }
    for (key, values) in extras {
        for value in values {
            out.push(Request::Extra {
                key: key.clone(),
                value,
            });
        }
    }
    if let Some(uid) = headers
        .get(UID)
        .and_then(|v| v.to_str().ok())
        .filter(|u| !u.is_empty())
    {
        others = true;
        out.push(Request::Uid(uid.into()));
    }
    if others && user.is_none() {
        let listed: Vec<String> = out.iter().map(Request::go_format).collect();
        return Err(ApiError::internal(format!(
            "Internal error occurred: requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    Ok(out)
}

/// `url.PathUnescape`: `%XX` sequences decoded; `None` for a bad escape or non-UTF-8.
fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// kube-apiserver's forbidden message (`responsewriters.Forbidden`):
/// `<resource> "<name>" is forbidden: User "<u>" cannot impersonate resource ...`.
fn forbidden(attributes: &Attributes, reason: &str) -> ApiError {
    let resource = if attributes.subresource.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}/{}", attributes.resource, attributes.subresource)
    };
    let scope = if attributes.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", attributes.namespace)
    };
    let mut why = format!(
        "User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        attributes.user.name, attributes.verb, attributes.api_group
    );
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let qualified = if attributes.api_group.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}.{}", attributes.resource, attributes.api_group)
    };
    let mut err = ApiError::forbidden(format!(
        "{qualified} \"{}\" is forbidden: {why}",
        attributes.name
    ));
    err.details.group = Some(attributes.api_group.clone());
    err.details.kind = Some(attributes.resource.clone());
    err.details.name = Some(attributes.name.clone());
    err
}

/// Applies impersonation headers: checks each with the authorizer, then replaces the
/// request's user and strips the headers.
pub(crate) fn impersonate(shared: &Shared, cx: &mut RequestContext) -> ApiResult<()> {
    let requests = requests(&cx.parts.headers)?;
    if requests.is_empty() {
        return Ok(());
    }
    let requestor = cx
        .user
        .clone()
        .ok_or_else(|| ApiError::internal("no user found for request"))?;
    let groups_specified = cx.parts.headers.contains_key(GROUP);
    let mut name = String::new();
    let mut uid = String::new();
    let mut groups: Vec<String> = Vec::new();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for request in &requests {
        let attributes = request.attributes(&requestor);
        match request {
            Request::ServiceAccount {
                namespace,
                name: sa,
            } => {
                name = user_name(namespace, sa);
                if !groups_specified {
                    groups = group_names(namespace);
                }
            }
            Request::User(user) => name = user.clone(),
            Request::Group(group) => groups.push(group.clone()),
            Request::Uid(u) => uid = u.clone(),
            Request::Extra { key, value } => {
                extra.entry(key.clone()).or_default().push(value.clone());
            }
        }
        let decision: Decision = shared
            .auth
            .authorizer
            .authorize(&shared.engine, &attributes);
        if !decision.allowed() {
            return Err(forbidden(&attributes, decision.reason()));
        }
    }
    if name != ANONYMOUS {
        if !groups
            .iter()
            .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.into());
        }
    } else if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
        groups.push(ALL_UNAUTHENTICATED.into());
    }
    cx.impersonator = Some(requestor);
    cx.user = Some(UserInfo {
        name,
        uid,
        groups,
        extra,
    });
    let headers = &mut cx.parts.headers;
    headers.remove(USER);
    headers.remove(UID);
    headers.remove(GROUP);
    let extra_headers: Vec<http::HeaderName> = headers
        .keys()
        .filter(|h| h.as_str().starts_with(EXTRA_PREFIX))
        .cloned()
        .collect();
    for h in extra_headers {
        headers.remove(h);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! After kube-apiserver's
    //! `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation_test.go`
    //! (`TestImpersonationFilter`), with the authorizer's modes standing in for its test
    //! authorizer: `AlwaysAllow` allows every impersonation, RBAC without rules allows
    //! only `system:masters`.

    use bytes::Bytes;

    use super::*;
    use crate::{AuthConfig, EngineConfig};

    fn shared(auth: AuthConfig) -> std::sync::Arc<Shared> {
        Shared::new(crate::apiserver::new_engine(EngineConfig::default()), &auth)
    }

    fn cx(user: UserInfo, headers: &[(&str, &str)]) -> RequestContext {
        let mut builder = http::Request::builder().uri("/api/v1/namespaces");
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let (parts, body) = builder.body(Bytes::new()).expect("request").into_parts();
        let mut cx = RequestContext::new(parts, body);
        cx.user = Some(user);
        cx
    }

    fn alice() -> UserInfo {
        UserInfo::new("alice", ["devs", ALL_AUTHENTICATED])
    }

    #[test]
    fn a_user_with_groups_extras_and_uid() {
        let shared = shared(AuthConfig::default());
        let mut cx = cx(
            alice(),
            &[
                ("Impersonate-User", "bob"),
                ("Impersonate-Group", "wheel"),
                ("Impersonate-Group", "ops"),
                ("Impersonate-Extra-Scopes", "view"),
                ("Impersonate-Extra-Scopes", "edit"),
                ("Impersonate-Extra-Example.com%2Fteam", "a"),
                ("Impersonate-Extra-Bad%zz", "b"),
                ("Impersonate-Uid", "1234"),
            ],
        );
        impersonate(&shared, &mut cx).expect("allowed");
        let user = cx.user.clone().expect("user");
        assert_eq!(user.name, "bob");
        assert_eq!(user.uid, "1234");
        assert_eq!(user.groups, ["wheel", "ops", ALL_AUTHENTICATED]);
        assert_eq!(user.extra["scopes"], ["view", "edit"]);
        assert_eq!(user.extra["example.com/team"], ["a"]);
        assert_eq!(user.extra["bad%zz"], ["b"]);
        assert_eq!(cx.impersonator, Some(alice()));
        assert!(
            cx.parts
                .headers
                .keys()
                .all(|h| !h.as_str().starts_with("impersonate-")),
            "{:?}",
            cx.parts.headers
        );
    }

    #[test]
    fn service_accounts_and_anonymous_get_their_groups() {
        let shared = shared(AuthConfig::default());
        let mut c = cx(
            alice(),
            &[("Impersonate-User", "system:serviceaccount:ns:builder")],
        );
        impersonate(&shared, &mut c).expect("allowed");
        let user = c.user.expect("user");
        assert_eq!(user.name, "system:serviceaccount:ns:builder");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                ALL_AUTHENTICATED
            ]
        );
        let mut c = cx(alice(), &[("Impersonate-User", ANONYMOUS)]);
        impersonate(&shared, &mut c).expect("allowed");
        assert_eq!(c.user.expect("user").groups, [ALL_UNAUTHENTICATED]);
        let mut c = cx(
            alice(),
            &[
                ("Impersonate-User", "bob"),
                ("Impersonate-Group", ALL_UNAUTHENTICATED),
            ],
        );
        impersonate(&shared, &mut c).expect("allowed");
        assert_eq!(c.user.expect("user").groups, [ALL_UNAUTHENTICATED]);
    }

    #[test]
    fn groups_without_a_user_are_an_error() {
        let shared = shared(AuthConfig::default());
        let mut c = cx(alice(), &[("Impersonate-Group", "devs")]);
        let err = impersonate(&shared, &mut c).expect_err("no user");
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message,
            "Internal error occurred: requested [{Group  devs    }] without impersonating a user"
        );
        let mut c = cx(alice(), &[("Impersonate-Uid", "1")]);
        assert_eq!(impersonate(&shared, &mut c).expect_err("no user").code, 500);
        assert_eq!(c.user, Some(alice()));
    }

    #[test]
    fn a_refused_impersonation_is_forbidden_with_kubes_message() {
        let shared = shared(AuthConfig::default().rbac());
        let mut c = cx(alice(), &[("Impersonate-User", "bob")]);
        let err = impersonate(&shared, &mut c).expect_err("forbidden");
        assert_eq!(err.code, 403);
        assert!(
            err.message.starts_with(
                "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
            ),
            "{}",
            err.message
        );
        let mut c = cx(
            alice(),
            &[("Impersonate-User", "system:serviceaccount:ns:sa")],
        );
        let err = impersonate(&shared, &mut c).expect_err("forbidden");
        assert!(
            err.message.starts_with(
                "serviceaccounts \"sa\" is forbidden: User \"alice\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"ns\""
            ),
            "{}",
            err.message
        );
        assert_eq!(c.user, Some(alice()));
        assert_eq!(c.impersonator, None);
        // system:masters may impersonate anyone.
        let admin = UserInfo::new("admin", ["system:masters", ALL_AUTHENTICATED]);
        let mut c = cx(
            admin.clone(),
            &[
                ("Impersonate-User", "bob"),
                ("Impersonate-Extra-Scopes", "x"),
            ],
        );
        impersonate(&shared, &mut c).expect("allowed");
        assert_eq!(c.user.expect("user").name, "bob");
        assert_eq!(c.impersonator, Some(admin));
    }

    #[test]
    fn attributes_follow_kube() {
        let a = Request::Extra {
            key: "scopes".into(),
            value: "view".into(),
        }
        .attributes(&alice());
        assert_eq!(
            (
                a.verb.as_str(),
                a.api_group.as_str(),
                a.resource.as_str(),
                a.subresource.as_str(),
                a.name.as_str()
            ),
            (
                "impersonate",
                "authentication.k8s.io",
                "userextras",
                "scopes",
                "view"
            )
        );
        let u = Request::Uid("1".into()).attributes(&alice());
        assert_eq!(
            (u.api_group.as_str(), u.resource.as_str()),
            ("authentication.k8s.io", "uids")
        );
    }
}
