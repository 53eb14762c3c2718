//! Strategies of the `rbac.authorization.k8s.io` group: the defaulters of
//! `pkg/apis/rbac/v1/defaults.go` and the validation of
//! `pkg/apis/rbac/validation/validation.go` (`ValidateRole`, `ValidateClusterRole`,
//! `ValidateRoleBinding`, `ValidateClusterRoleBinding` and their updates), with kube's
//! field paths and messages.

use serde_json::{Value, json};

use super::Strategy;
use crate::{
    errors::Cause,
    validation::{NameRule, validate_name},
};

/// The RBAC API group.
const GROUP: &str = "rbac.authorization.k8s.io";

/// `rbac/v1` Roles (`namespaced`) and ClusterRoles.
#[derive(Debug, Clone, Copy)]
pub struct Roles {
    /// Roles (true) or ClusterRoles (false).
    pub namespaced: bool,
}

/// `rbac/v1` RoleBindings (`namespaced`) and ClusterRoleBindings.
#[derive(Debug, Clone, Copy)]
pub struct Bindings {
    /// RoleBindings (true) or ClusterRoleBindings (false).
    pub namespaced: bool,
}

/// Go's `%q` of a string.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
fn go_string_slice(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| quote(s)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

fn required(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: if detail.is_empty() {
            "Required value".into()
        } else {
            format!("Required value: {detail}")
        },
        field: field.into(),
    }
}

fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| quote(s)).collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {}",
            quote(value),
            supported.join(", ")
        ),
        field: field.into(),
    }
}

/// `validatePolicyRule`.
fn validate_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let (verbs, groups, resources, names, urls) = (
        str_list(rule.get("verbs")),
        str_list(rule.get("apiGroups")),
        str_list(rule.get("resources")),
        str_list(rule.get("resourceNames")),
        str_list(rule.get("nonResourceURLs")),
    );
    if verbs.is_empty() {
        causes.push(required(
            &format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    if !urls.is_empty() {
        let field = format!("{path}.nonResourceURLs");
        if namespaced {
            causes.push(Cause::invalid(
                &field,
                format!(
                    "Invalid value: {}: namespaced rules cannot apply to non-resource URLs",
                    go_string_slice(&urls)
                ),
            ));
        }
        if !groups.is_empty() || !resources.is_empty() || !names.is_empty() {
            causes.push(Cause::invalid(
                &field,
                format!(
                    "Invalid value: {}: rules cannot apply to both regular resources and non-resource URLs",
                    go_string_slice(&urls)
                ),
            ));
        }
        return causes;
    }
    if groups.is_empty() {
        causes.push(required(
            &format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if resources.is_empty() {
        causes.push(required(
            &format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    if !names.is_empty() && resources.len() > 1 {
        causes.push(required(
            &format!("{path}.resourceNames"),
            "resource names cannot apply to multiple resources",
        ));
    }
    causes
}

/// `rbac.RoleRef` as Go's `%#v` prints it.
fn go_role_ref(obj: &Value) -> String {
    let s = |k: &str| {
        obj.pointer(&format!("/roleRef/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        quote(&s("apiGroup")),
        quote(&s("kind")),
        quote(&s("name"))
    )
}

/// `validateRoleBindingSubject`.
fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<Cause> {
    let s = |k: &str| subject.get(k).and_then(Value::as_str).unwrap_or_default();
    let (name, kind, api_group) = (s("name"), s("kind"), s("apiGroup"));
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(required(&format!("{path}.name"), ""));
    }
    match kind {
        "ServiceAccount" => {
            if !name.is_empty() {
                causes.extend(validate_name(
                    name,
                    NameRule::Subdomain,
                    &format!("{path}.name"),
                ));
            }
            if !api_group.is_empty() {
                causes.push(not_supported(&format!("{path}.apiGroup"), api_group, &[""]));
            }
            if !namespaced && s("namespace").is_empty() {
                causes.push(required(&format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if name.is_empty() {
                let what = if kind == "User" { "user" } else { "group" };
                causes.push(Cause::invalid(
                    &format!("{path}.name"),
                    format!("Invalid value: \"\": {what} name cannot be empty"),
                ));
            }
            if api_group != GROUP {
                causes.push(not_supported(
                    &format!("{path}.apiGroup"),
                    api_group,
                    &[GROUP],
                ));
            }
        }
        other => causes.push(not_supported(
            &format!("{path}.kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    causes
}

impl Strategy for Roles {
    fn name(&self) -> &'static str {
        if self.namespaced {
            "roles"
        } else {
            "clusterroles"
        }
    }

    /// `ValidateRole` / `ValidateClusterRole`.
    fn validate(&self, obj: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        let rules = obj.get("rules").and_then(Value::as_array);
        for (i, rule) in rules.into_iter().flatten().enumerate() {
            causes.extend(validate_rule(rule, self.namespaced, &format!("rules[{i}]")));
        }
        if !self.namespaced
            && let Some(agg) = obj.get("aggregationRule").filter(|v| !v.is_null())
            && agg
                .get("clusterRoleSelectors")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        {
            causes.push(required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        causes
    }
}

impl Strategy for Bindings {
    fn name(&self) -> &'static str {
        if self.namespaced {
            "rolebindings"
        } else {
            "clusterrolebindings"
        }
    }

    /// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding`, `SetDefaults_Subject`.
    fn apply_defaults(&self, obj: &mut Value) {
        if let Some(role_ref) = obj.get_mut("roleRef").and_then(Value::as_object_mut)
            && role_ref
                .get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            role_ref.insert("apiGroup".into(), json!(GROUP));
        }
        if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
            for subject in subjects.iter_mut().filter_map(Value::as_object_mut) {
                let unset = subject
                    .get("apiGroup")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty);
                let kind = subject
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if unset && matches!(kind, "User" | "Group") {
                    subject.insert("apiGroup".into(), json!(GROUP));
                }
            }
        }
    }

    /// `ValidateRoleBinding` / `ValidateClusterRoleBinding`.
    fn validate(&self, obj: &Value) -> Vec<Cause> {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let mut causes = Vec::new();
        let api_group = s("/roleRef/apiGroup");
        if api_group != GROUP {
            causes.push(not_supported("roleRef.apiGroup", api_group, &[GROUP]));
        }
        let kind = s("/roleRef/kind");
        let kinds: &[&str] = if self.namespaced {
            &["Role", "ClusterRole"]
        } else {
            &["ClusterRole"]
        };
        if !kinds.contains(&kind) {
            causes.push(not_supported("roleRef.kind", kind, kinds));
        }
        let name = s("/roleRef/name");
        if name.is_empty() {
            causes.push(required("roleRef.name", ""));
        } else {
            causes.extend(validate_name(name, NameRule::PathSegment, "roleRef.name"));
        }
        let subjects = obj.get("subjects").and_then(Value::as_array);
        for (i, subject) in subjects.into_iter().flatten().enumerate() {
            causes.extend(validate_subject(
                subject,
                self.namespaced,
                &format!("subjects[{i}]"),
            ));
        }
        causes
    }

    /// `ValidateRoleBindingUpdate`: and `roleRef` may not change.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<Cause> {
        let mut causes = self.validate(new);
        if new.get("roleRef") != old.get("roleRef") {
            causes.push(Cause::invalid(
                "roleRef",
                format!("Invalid value: {}: cannot change roleRef", go_role_ref(new)),
            ));
        }
        causes
    }
}

#[cfg(test)]
mod tests {
    //! After kube's `pkg/apis/rbac/validation/validation_test.go`.

    use super::*;

    fn messages(causes: &[Cause]) -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn rules_are_validated_as_kube_does() {
        let role = Roles { namespaced: true };
        let obj = json!({"rules": [
            {"apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/x"]},
            {"verbs": ["get"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["a", "b"], "resourceNames": ["n"]},
        ]});
        assert_eq!(
            messages(&role.validate(&obj)),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[1].nonResourceURLs: Invalid value: []string{\"/x\"}: namespaced rules cannot apply to non-resource URLs",
                "rules[2].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[2].resources: Required value: resource rules must supply at least one resource",
                "rules[3].resourceNames: Required value: resource names cannot apply to multiple resources",
            ]
        );
        let cluster = Roles { namespaced: false };
        assert!(
            cluster
                .validate(&json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}))
                .is_empty()
        );
    }

    #[test]
    fn bindings_are_defaulted_and_validated() {
        let rb = Bindings { namespaced: true };
        let mut obj = json!({
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "x"}],
        });
        rb.apply_defaults(&mut obj);
        assert_eq!(obj["roleRef"]["apiGroup"], GROUP);
        assert_eq!(obj["subjects"][0]["apiGroup"], GROUP);
        assert!(obj["subjects"][1].get("apiGroup").is_none());
        assert_eq!(
            messages(&rb.validate(&obj)),
            [
                "subjects[2].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
            ]
        );
        let crb = Bindings { namespaced: false };
        let mut obj = json!({"roleRef": {"kind": "Role", "name": ""}, "subjects": [{"kind": "ServiceAccount", "name": "sa"}]});
        crb.apply_defaults(&mut obj);
        assert_eq!(
            messages(&crb.validate(&obj)),
            [
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "roleRef.name: Required value",
                "subjects[0].namespace: Required value",
            ]
        );
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "a"}});
        let new = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "b"}});
        assert_eq!(
            messages(&crb.validate_update(&new, &old)),
            [
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"b\"}: cannot change roleRef"
            ]
        );
    }
}
