//! kube-controller-manager's ClusterRole aggregation controller
//! (`pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`): every
//! ClusterRole with `aggregationRule.clusterRoleSelectors` gets the union of the rules of
//! the other ClusterRoles its selectors match (`crate::authz::rbac::aggregation`), kept
//! current: any ClusterRole's change requeues every aggregating one, as kube's `enqueue`
//! does.
//!
//! It runs with the cluster ([`crate::Workload::ClusterRoleAggregation`]). A server that
//! runs no cluster still starts with `admin`, `edit` and `view` aggregated: the bootstrap
//! policy writes them with their rules filled in (`crate::authz::rbac::bootstrap`), but
//! roles labelled into them later are aggregated only while the cluster runs.

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::ClusterRole;
use kubegen::{
    client::{Error, params::PostParams},
    controller::{Action, CachedClient, Controller, ControllerError, Request},
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::Cluster;
use crate::authz::rbac::{aggregation::aggregated_rules, rule::PolicyRule};

struct Context {
    roles: CachedClient<ClusterRole>,
}

/// Runs the controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let roles = CachedClient::<ClusterRole>::new(cluster.client.clone(), &cluster.factory)
        .map_err(|e| ControllerError::Informer {
            controller: "clusterrole-aggregation".into(),
            source: e,
        })?;
    let lister = cluster.factory.lister_for::<ClusterRole>();
    let controller = Controller::<ClusterRole>::builder(&cluster.factory)
        .named("clusterrole-aggregation")
        // Any ClusterRole's change may change what an aggregating one selects.
        .watches::<ClusterRole>(move |_| {
            let mut requests: Vec<Request> = lister
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|r| r.aggregation_rule.is_some())
                .filter_map(|r| Request::for_object(r.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .build();
    controller
        .run(reconcile, Arc::new(Context { roles }), stop)
        .await?;
    Ok(())
}

/// `syncClusterRole`.
async fn reconcile(role: Arc<ClusterRole>, cx: Arc<Context>) -> Result<Action, Error> {
    if role.aggregation_rule.is_none() {
        return Ok(Action::done());
    }
    let all: Vec<Arc<Value>> = cx
        .roles
        .lister()
        .list(&kube_core::Selector::default())
        .iter()
        .filter_map(|r| serde_json::to_value(r.as_ref()).ok())
        .map(Arc::new)
        .collect();
    let Ok(this) = serde_json::to_value(role.as_ref()) else {
        return Ok(Action::done());
    };
    let Some(rules) = aggregated_rules(&this, &all) else {
        return Ok(Action::done());
    };
    let parse =
        |rules: &[Value]| -> Vec<PolicyRule> { rules.iter().map(PolicyRule::from_value).collect() };
    let current: Vec<Value> = this
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if parse(&current) == parse(&rules) {
        return Ok(Action::done());
    }
    let mut updated = (*role).clone();
    updated.rules = serde_json::from_value(Value::Array(rules)).map_err(Error::Decode)?;
    match cx.roles.update(&PostParams::default(), &updated).await {
        Ok(_) => Ok(Action::done()),
        // Gone, or changed meanwhile: its event brings it back.
        Err(e) if e.is_not_found() || e.is_conflict() => Ok(Action::done()),
        Err(e) => Err(e),
    }
}
