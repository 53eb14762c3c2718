//! Escalation prevention on RBAC writes (kube's `pkg/registry/rbac/escalation_check.go`,
//! `pkg/registry/rbac/{role,clusterrole}/policybased/storage.go`,
//! `pkg/registry/rbac/{rolebinding,clusterrolebinding}/policybased/storage.go` and
//! `pkg/registry/rbac/validation/rule.go` `ConfirmNoEscalation`): a user may write a Role
//! or ClusterRole only with rules they already hold, unless they may `escalate` it, and a
//! RoleBinding or ClusterRoleBinding only to a role whose rules they hold, unless they may
//! `bind` it. Members of `system:masters` skip both checks.
//!
//! kube's policy-based storage wraps the registry; here the endpoint handlers ask
//! [`guard`] for a [`WriteGuard`] that the registry runs on the object about to be stored
//! (after a patch is applied, before the strategy's validation, as kube's
//! `rest.WrapUpdatedObjectInfo` runs). The guard runs under the store's lock, so what it
//! needs (the user's rules, the bound role's rules, the `escalate`/`bind` decision) is
//! read before the write. The checks run only with `--authorization-mode=RBAC` (with
//! `AlwaysAllow` kube's `escalate`/`bind` checks always pass).

use std::sync::Arc;

use serde_json::Value;

use super::{
    authorizer::rules_for,
    covers::{compact, covers},
    resolver::{GROUP, RoleRef, RoleRefError, RuleResolver},
    rule::{PolicyRule, go_quote, go_quote_list},
};
use crate::{
    Engine,
    authn::{SYSTEM_MASTERS, UserInfo},
    authz::{Attributes, AuthorizationMode, Authorizer},
    engine::{Target, WriteGuard},
    errors::{ApiError, ApiResult},
    meta,
};

/// The guard of a create, update or patch of `target` by `user` (`body`: the object sent,
/// `None` for a patch), or `None` when nothing is to be checked.
pub(crate) fn guard(
    authorizer: &Authorizer,
    engine: &Arc<Engine>,
    target: &Target,
    user: &UserInfo,
    body: Option<&Value>,
) -> ApiResult<Option<WriteGuard>> {
    let rt = &target.rt;
    if authorizer.mode() != AuthorizationMode::Rbac
        || rt.group != GROUP
        || target.subresource.is_some()
        || user.in_group(SYSTEM_MASTERS)
    {
        return Ok(None);
    }
    let namespace = target.namespace.clone().unwrap_or_default();
    let name = target.name.clone().unwrap_or_default();
    let plural = rt.plural.clone();
    match plural.as_str() {
        "roles" | "clusterroles" => {
            // RoleEscalationAuthorized: `escalate` on the request's resource and name.
            let escalate = Attributes {
                user: user.clone(),
                verb: "escalate".into(),
                resource_request: true,
                api_group: GROUP.into(),
                api_version: "*".into(),
                resource: plural.clone(),
                namespace: namespace.clone(),
                name,
                ..Attributes::default()
            };
            if authorizer.authorize(engine, &escalate).allowed() {
                return Ok(None);
            }
            let (owner, errors) = rules_for(engine.store(), user, &namespace);
            let user = user.clone();
            Ok(Some(WriteGuard::new(move |new, old| {
                if old.is_some_and(|old| only_gc_fields(new, old)) {
                    return Ok(());
                }
                let name = meta::name(new);
                confirm_no_escalation(&user, &owner, &errors, &PolicyRule::of_role(new))
                    .map_err(|msg| forbidden(&plural, name, &msg))?;
                // clusterrole/policybased/storage.go: an aggregation rule can gather
                // anything, so setting (or changing away from) one takes `*` on `*.*`.
                let aggregates = |v: &Value| v.get("aggregationRule").is_some_and(|a| !a.is_null());
                if plural == "clusterroles"
                    && (aggregates(new) || old.is_some_and(aggregates))
                    && confirm_no_escalation(&user, &owner, &errors, &full_authority()).is_err()
                {
                    return Err(forbidden(
                        &plural,
                        name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    ));
                }
                Ok(())
            })))
        }
        "rolebindings" | "clusterrolebindings" => {
            // The role the binding refers to: the body's, or (a patch) the stored one's.
            let role_ref = match body {
                Some(body) => RoleRef::of(body),
                None => match &target.name {
                    Some(name) => engine
                        .store()
                        .get(&rt.group_resource(), &(target.ns_key(), name.clone()))
                        .map(|old| RoleRef::of(&old))
                        .unwrap_or_default(),
                    None => RoleRef::default(),
                },
            };
            if binding_authorized(authorizer, engine, user, &role_ref, &namespace) {
                return Ok(None);
            }
            let role_rules = RuleResolver::new(engine.store())
                .role_reference_rules(&role_ref, &namespace)
                .map_err(|e| e.registry_message());
            let (owner, errors) = rules_for(engine.store(), user, &namespace);
            let user = user.clone();
            let (engine, authorizer) = (engine.clone(), Authorizer::new(authorizer.mode()));
            Ok(Some(WriteGuard::new(move |new, old| {
                if old.is_some_and(|old| only_gc_fields(new, old)) {
                    return Ok(());
                }
                let name = meta::name(new);
                let new_ref = RoleRef::of(new);
                let mut role_rules = role_rules.clone();
                if new_ref != role_ref {
                    if old.is_some() {
                        // A changed roleRef is refused by validation (it is immutable).
                        return Ok(());
                    }
                    // A server-side apply that creates the binding: its roleRef is known
                    // only now. A create's guard runs before the store's lock is taken,
                    // so the store may be read here.
                    if binding_authorized(&authorizer, &engine, &user, &new_ref, &namespace) {
                        return Ok(());
                    }
                    role_rules = RuleResolver::new(engine.store())
                        .role_reference_rules(&new_ref, &namespace)
                        .map_err(|e| e.registry_message());
                }
                let rules = role_rules
                    .as_ref()
                    .map_err(|msg| forbidden(&plural, name, msg))?;
                confirm_no_escalation(&user, &owner, &errors, rules)
                    .map_err(|msg| forbidden(&plural, name, &msg))
            })))
        }
        _ => Ok(None),
    }
}

/// `fullAuthority`: every verb on everything, and every non-resource URL.
fn full_authority() -> Vec<PolicyRule> {
    vec![
        PolicyRule::resource(&["*"], &["*"], &["*"]),
        PolicyRule::urls(&["*"], &["*"]),
    ]
}

/// `BindingAuthorized`: whether `user` may `bind` the role `role_ref` names, in the
/// binding's namespace (empty for a ClusterRoleBinding).
fn binding_authorized(
    authorizer: &Authorizer,
    engine: &Engine,
    user: &UserInfo,
    role_ref: &RoleRef,
    namespace: &str,
) -> bool {
    let resource = match role_ref.kind.as_str() {
        "ClusterRole" => "clusterroles",
        "Role" => "roles",
        _ => return false,
    };
    let bind = Attributes {
        user: user.clone(),
        verb: "bind".into(),
        resource_request: true,
        api_group: role_ref.api_group.clone(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: role_ref.name.clone(),
        ..Attributes::default()
    };
    authorizer.authorize(engine, &bind).allowed()
}

/// `ConfirmNoEscalation`: `Ok` when `owner` covers `rules`, else kube's message.
pub(crate) fn confirm_no_escalation(
    user: &UserInfo,
    owner: &[PolicyRule],
    errors: &[RoleRefError],
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (covered, missing) = covers(owner, rules);
    if covered {
        return Ok(());
    }
    let mut descriptions: Vec<String> = compact(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    descriptions.sort();
    descriptions.dedup();
    let mut msg = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(&user.name),
        go_quote_list(&user.groups),
        descriptions.join("\n")
    );
    if !errors.is_empty() {
        let errs: Vec<String> = errors.iter().map(RoleRefError::registry_message).collect();
        msg.push_str(&format!("; resolution errors: [{}]", errs.join(" ")));
    }
    Err(msg)
}

/// `errors.NewForbidden(rbac.Resource(plural), name, err)`.
fn forbidden(plural: &str, name: &str, msg: &str) -> ApiError {
    let qualified = format!("{plural}.{GROUP}");
    let message = if name.is_empty() {
        format!("{qualified} is forbidden: {msg}")
    } else {
        format!("{qualified} {} is forbidden: {msg}", go_quote(name))
    };
    let mut err = ApiError::forbidden(message);
    err.details.group = Some(GROUP.into());
    err.details.kind = Some(plural.into());
    err.details.name = (!name.is_empty()).then(|| name.to_string());
    err
}

/// `IsOnlyMutatingGCFields`: `new` differs from `old` only in owner references,
/// finalizers, self link or managed fields.
fn only_gc_fields(new: &Value, old: &Value) -> bool {
    let mut copied = new.clone();
    let old_meta = old.get("metadata");
    let m = meta::meta_mut(&mut copied);
    for field in ["ownerReferences", "finalizers", "selfLink", "managedFields"] {
        match old_meta.and_then(|o| o.get(field)) {
            Some(v) => m.insert(field.into(), v.clone()),
            None => m.remove(field),
        };
    }
    &copied == old
}

#[cfg(test)]
mod tests {
    //! After kube's `pkg/registry/rbac/validation/rule_test.go` (`TestConfirmNoEscalation`)
    //! and `pkg/registry/rbac/helpers_test.go` (`TestIsOnlyMutatingGCFields`).

    use serde_json::json;

    use super::*;

    #[test]
    fn escalation_message_is_kubes() {
        let user = UserInfo::new("alice", ["system:authenticated"]);
        let owner = vec![PolicyRule::resource(&["get"], &[""], &["pods"])];
        assert_eq!(confirm_no_escalation(&user, &owner, &[], &owner), Ok(()));
        let wanted = vec![
            PolicyRule::resource(&["get", "list"], &[""], &["pods"]),
            PolicyRule::resource(&["get"], &["apps"], &["deployments"]),
        ];
        assert_eq!(
            confirm_no_escalation(&user, &owner, &[], &wanted),
            Err("user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\"]}\n{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"get\"]}".into())
        );
    }

    #[test]
    fn only_gc_fields_changes_skip_the_check() {
        let old = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "rules": []});
        let mut new = old.clone();
        new["metadata"]["finalizers"] = json!(["x/y"]);
        assert!(only_gc_fields(&new, &old));
        new["rules"] = json!([{"verbs": ["get"]}]);
        assert!(!only_gc_fields(&new, &old));
    }

    #[test]
    fn forbidden_status_names_the_object() {
        let err = forbidden("roles", "x", "no");
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            r#"roles.rbac.authorization.k8s.io "x" is forbidden: no"#
        );
        assert_eq!(err.details.kind.as_deref(), Some("roles"));
    }
}
