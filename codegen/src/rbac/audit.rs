//! `kubegen-codegen rbac --from-audit FILE`: the permissions an operator needs, learned
//! from what it did. An audit log (kube-apiserver's `--audit-log-path` in its `json`
//! format, or `kubegen-testserver --audit-log-path`: one `audit.k8s.io/v1` `Event` a
//! line) lists every request; the ones a user made become `+kubebuilder:rbac` markers,
//! one per API group and resource (subresources as `deployments/status`) with the verbs
//! used, and one per non-resource URL; the role those markers generate follows.
//!
//! * The user a request is attributed to is its `impersonatedUser` if any, else its
//!   `user`. By default every user's requests are taken except those of members of
//!   `system:masters` (the admin, the API server's own loopback) and of unauthenticated
//!   requests (no user); `--user NAME` takes only NAME's.
//! * Denied requests are included: the log shows what the operator tried, which is what
//!   it needs.
//! * Names are not kept (no `resourceNames`): a rule allows every object of its
//!   resource.
//! * `--namespace NS`: the requests in namespace NS become markers with `namespace=NS`
//!   (a `Role` in NS); every other request (cluster-scoped, all namespaces, other
//!   namespaces, non-resource URLs) stays in the `ClusterRole`.
//! * Every stage of an event counts once (kube-apiserver writes `RequestReceived` and
//!   `ResponseComplete` for one request; both name the same verb).
//! * The output is sorted: markers by namespace (cluster-wide first), then group and
//!   resource, then URL; the role is [`super::roles`]' (controller-gen's merge).
//!
//! A line that is not a JSON object, not an `Event`, or lacks what an event always has
//! (`verb`; `objectRef.resource` or `requestURI`) is an error, reported as
//! `FILE:LINE: message`; empty lines are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::{Map, Value};

use super::{RuleMarker, roles};
use crate::crd::yaml;
use crate::diagnostic::{Diagnostic, Error};

/// The superuser group, whose members' requests are skipped by default.
pub const SYSTEM_MASTERS: &str = "system:masters";

/// Which requests of the log are taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only this user's requests (default: every user not in `system:masters`).
    pub user: Option<String>,
    /// Requests in this namespace make a `Role` there instead of `ClusterRole` rules.
    pub namespace: Option<String>,
}

/// What one audit event asks for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Request {
    /// A resource request: namespace (when it goes to a `Role`), group, resource (with
    /// `/subresource`).
    Resource {
        namespace: Option<String>,
        group: String,
        resource: String,
    },
    /// A non-resource request's path.
    Url(String),
}

/// A field of an event, or an error naming it.
fn string<'a>(event: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match event.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` is not a string: {other}")),
    }
}

/// The user a request is attributed to: name and groups (`None` for no user).
fn attributed_user(event: &Map<String, Value>) -> Result<Option<(String, Vec<String>)>, String> {
    let (key, user) = match event.get("impersonatedUser") {
        Some(Value::Object(u)) => ("impersonatedUser", u),
        Some(Value::Null) | None => match event.get("user") {
            Some(Value::Object(u)) => ("user", u),
            Some(Value::Null) | None => return Ok(None),
            Some(other) => return Err(format!("`user` is not an object: {other}")),
        },
        Some(other) => return Err(format!("`impersonatedUser` is not an object: {other}")),
    };
    let name = string(user, "username").map_err(|e| format!("`{key}`: {e}"))?;
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let groups = match user.get("groups") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|g| {
                g.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{key}.groups` has a non-string item: {g}"))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("`{key}.groups` is not a list: {other}")),
    };
    Ok(Some((name.to_owned(), groups)))
}

/// One line's request and verb, if the filter takes it.
fn read_event(line: &str, filter: &AuditFilter) -> Result<Option<(Request, String)>, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(event) = value else {
        return Err("expected a JSON object (an audit.k8s.io/v1 Event)".into());
    };
    if let Some(kind) = string(&event, "kind")?
        && kind != "Event"
    {
        return Err(format!(
            "kind is `{kind}`, expected an audit.k8s.io/v1 `Event`"
        ));
    }
    let Some(verb) = string(&event, "verb")?.filter(|v| !v.is_empty()) else {
        return Err("the event has no `verb`".into());
    };
    let request = match event.get("objectRef") {
        Some(Value::Object(object)) => {
            let Some(resource) = string(object, "resource")
                .map_err(|e| format!("`objectRef`: {e}"))?
                .filter(|r| !r.is_empty())
            else {
                return Err("`objectRef` has no `resource`".into());
            };
            let field = |key| string(object, key).map_err(|e| format!("`objectRef`: {e}"));
            let group = field("apiGroup")?.unwrap_or_default();
            let resource = match field("subresource")?.filter(|s| !s.is_empty()) {
                Some(sub) => format!("{resource}/{sub}"),
                None => resource.to_owned(),
            };
            let namespace = field("namespace")?
                .filter(|ns| filter.namespace.as_deref() == Some(*ns))
                .map(str::to_owned);
            Request::Resource {
                namespace,
                group: group.to_owned(),
                resource,
            }
        }
        Some(Value::Null) | None => {
            let Some(uri) = string(&event, "requestURI")?.filter(|u| !u.is_empty()) else {
                return Err("a non-resource event (no `objectRef`) has no `requestURI`".into());
            };
            let path = uri.split_once('?').map_or(uri, |(path, _)| path);
            Request::Url(path.to_owned())
        }
        Some(other) => return Err(format!("`objectRef` is not an object: {other}")),
    };
    let Some((user, groups)) = attributed_user(&event)? else {
        return Ok(None);
    };
    let taken = match &filter.user {
        Some(wanted) => *wanted == user,
        None => !groups.iter().any(|g| g == SYSTEM_MASTERS),
    };
    Ok(taken.then(|| (request, verb.to_owned())))
}

/// The markers that allow the requests of the audit log `text` (read from `path`, for
/// the errors) the filter takes: one per namespace, group and resource, and one per
/// URL, verbs merged; sorted. Every malformed line is an error.
pub fn markers_from_log(
    path: &Path,
    text: &str,
    filter: &AuditFilter,
) -> Result<Vec<RuleMarker>, Error> {
    let mut verbs: BTreeMap<Request, BTreeSet<String>> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match read_event(line, filter) {
            Ok(Some((request, verb))) => {
                verbs.entry(request).or_default().insert(verb);
            }
            Ok(None) => {}
            Err(message) => diagnostics.push(Diagnostic {
                path: path.to_owned(),
                line: i + 1,
                message,
            }),
        }
    }
    if !diagnostics.is_empty() {
        return Err(Error::Invalid(diagnostics));
    }
    Ok(verbs
        .into_iter()
        .map(|(request, verbs)| {
            let verbs = verbs.into_iter().collect();
            match request {
                Request::Resource {
                    namespace,
                    group,
                    resource,
                } => RuleMarker {
                    groups: vec![group],
                    resources: vec![resource],
                    verbs,
                    namespace,
                    ..RuleMarker::default()
                },
                Request::Url(url) => RuleMarker {
                    urls: vec![url],
                    verbs,
                    ..RuleMarker::default()
                },
            }
        })
        .collect())
}

/// The markers as `//` comment lines, then the roles they generate (the `rbac`
/// command's role file); `None` when there are no markers.
pub fn render(markers: &[RuleMarker], role_name: &str) -> Option<String> {
    if markers.is_empty() {
        return None;
    }
    let mut text = String::new();
    for marker in markers {
        text.push_str(&format!("// {marker}\n"));
    }
    for role in roles(markers, role_name) {
        text.push_str("---\n");
        text.push_str(&yaml::to_yaml(&role));
    }
    Some(text)
}

/// `rbac --from-audit`: reads the audit log at `path`, and renders the markers and roles
/// of the requests `filter` takes (`None` when it takes none).
pub fn from_audit(
    path: &Path,
    filter: &AuditFilter,
    role_name: &str,
) -> Result<Option<String>, Error> {
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let markers = markers_from_log(path, &text, filter)?;
    Ok(render(&markers, role_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learn(lines: &[serde_json::Value], filter: &AuditFilter) -> Vec<String> {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        markers_from_log(Path::new("audit.log"), &text, filter)
            .expect("markers")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn event(user: &str, groups: &[&str], verb: &str, object: serde_json::Value) -> Value {
        serde_json::json!({
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
            "stage": "ResponseComplete", "verb": verb, "requestURI": "/x?watch=true",
            "user": {"username": user, "groups": groups}, "objectRef": object,
        })
    }

    #[test]
    fn verbs_merge_per_group_and_resource_and_masters_are_left_out() {
        let deployments =
            serde_json::json!({"resource": "deployments", "apiGroup": "apps", "namespace": "a"});
        let status = serde_json::json!({"resource": "deployments", "apiGroup": "apps", "subresource": "status", "name": "d"});
        let pods = serde_json::json!({"resource": "pods", "namespace": "b"});
        let lines = [
            event("op", &[], "watch", deployments.clone()),
            event("op", &[], "list", deployments.clone()),
            event("op", &[], "list", deployments),
            event("op", &[], "update", status),
            event("admin", &["system:masters"], "delete", pods.clone()),
            event("op", &[], "get", pods),
            event("", &[], "list", Value::Null),
            event("op", &[], "get", Value::Null),
        ];
        assert_eq!(
            learn(&lines, &AuditFilter::default()),
            [
                r#"+kubebuilder:rbac:groups="",resources=pods,verbs=get"#,
                "+kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch",
                "+kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=update",
                "+kubebuilder:rbac:urls=/x,verbs=get",
            ]
        );
        let admin = AuditFilter {
            user: Some("admin".into()),
            namespace: None,
        };
        assert_eq!(
            learn(&lines, &admin),
            [r#"+kubebuilder:rbac:groups="",resources=pods,verbs=delete"#]
        );
        let in_b = AuditFilter {
            user: None,
            namespace: Some("b".into()),
        };
        assert_eq!(
            learn(&lines, &in_b)[2],
            r#"+kubebuilder:rbac:groups="",resources=pods,verbs=get,namespace=b"#
        );
    }

    #[test]
    fn an_impersonated_request_is_the_impersonated_users() {
        let mut line = event(
            "admin",
            &["system:masters"],
            "get",
            serde_json::json!({"resource": "secrets"}),
        );
        line["impersonatedUser"] = serde_json::json!({"username": "op"});
        assert_eq!(
            learn(&[line], &AuditFilter::default()),
            [r#"+kubebuilder:rbac:groups="",resources=secrets,verbs=get"#]
        );
    }

    #[test]
    fn malformed_lines_are_file_line_errors() {
        let text = "\n{\"kind\":\"Event\",\"verb\":\"get\",\"requestURI\":\"/api\"}\n\
                    not json\n[1]\n{\"kind\":\"Pod\"}\n{\"verb\":\"get\"}\n\
                    {\"verb\":\"get\",\"objectRef\":{\"name\":\"x\"}}\n\
                    {\"verb\":\"get\",\"requestURI\":\"/\",\"user\":\"alice\"}\n";
        let err = markers_from_log(Path::new("logs/audit.log"), text, &AuditFilter::default())
            .expect_err("malformed");
        let lines: Vec<String> = err.to_string().lines().map(str::to_owned).collect();
        assert_eq!(lines.len(), 6, "{err}");
        assert!(
            lines[0].starts_with("logs/audit.log:3: not JSON: "),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1..],
            [
                "logs/audit.log:4: expected a JSON object (an audit.k8s.io/v1 Event)",
                "logs/audit.log:5: kind is `Pod`, expected an audit.k8s.io/v1 `Event`",
                "logs/audit.log:6: a non-resource event (no `objectRef`) has no `requestURI`",
                "logs/audit.log:7: `objectRef` has no `resource`",
                "logs/audit.log:8: `user` is not an object: \"alice\"",
            ]
        );
    }
}
