//! kube-controller-manager's taint eviction controller
//! (`pkg/controller/tainteviction/taint_eviction.go`): a pod bound to a node with
//! `NoExecute` taints it does not tolerate is deleted; one that tolerates them for a while
//! (`tolerationSeconds`) is deleted once that while has passed. With the node lifecycle
//! controller's `unreachable` taint and the 300-second tolerations every pod gets at
//! admission (`DefaultTolerationSeconds`), this is how pods leave a dead node five minutes
//! after it went silent.
//!
//! The sync loop, one pod at a time (a Node's change brings back the pods bound to it):
//!
//! 1. Not bound, already being deleted, or finished: done.
//! 2. The node's `NoExecute` taints; none: done.
//! 3. A taint no toleration matches: evict now (`processPodOnNode`). Otherwise the
//!    shortest `tolerationSeconds` among the matching tolerations, counted from the
//!    taints' `timeAdded`, is when to evict; no `tolerationSeconds` at all: never.
//! 4. Due: the pod gets the `DisruptionTarget` condition (reason
//!    `DeletionByTaintManager`), then is deleted gracefully, as an eviction. Not yet due:
//!    look again then, on the server's clock.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, Pod, Taint, Toleration},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kubegen::{
    cache::Lister,
    client::{
        Error, ResourceClient,
        params::{DeleteParams, PostParams, Preconditions},
    },
    controller::{Action, Controller, ControllerError, Request},
};
use tokio_util::sync::CancellationToken;

use super::{config::Cluster, pods, scheduler::tolerates};

struct Context {
    cluster: Arc<Cluster>,
    nodes: Lister<Node>,
}

/// Runs the taint eviction controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let nodes = cluster.factory.lister_for::<Node>();
    let pods = cluster.factory.lister_for::<Pod>();
    let controller = Controller::<Pod>::builder(&cluster.factory)
        .named("taint-eviction")
        .with_event_filter(kubegen::controller::predicate::from_fn(|p: &Pod| {
            p.spec.as_ref().is_some_and(|s| s.node_name.is_some())
        }))
        .watches::<Node>(move |node| {
            let has_no_execute = node
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_deref())
                .is_some_and(|t| t.iter().any(|t| t.effect == "NoExecute"));
            if !has_no_execute {
                return Vec::new();
            }
            let name = node.metadata.name.as_deref().unwrap_or_default();
            pods::on_node(&pods, name)
                .iter()
                .filter_map(|p| Request::for_object(p.as_ref()))
                .collect()
        })
        .build();
    let cx = Arc::new(Context { cluster, nodes });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// When a pod must leave its node.
#[derive(Debug, PartialEq)]
enum Eviction {
    /// It tolerates every `NoExecute` taint for ever (or there is none).
    Never,
    /// Now.
    Now,
    /// After this long.
    After(Duration),
}

/// Steps 2 and 3: when a pod with `tolerations` must leave a node with `taints`, at `now`.
fn eviction(tolerations: &[Toleration], taints: &[Taint], now: jiff::Timestamp) -> Eviction {
    let no_execute: Vec<&Taint> = taints.iter().filter(|t| t.effect == "NoExecute").collect();
    let mut due: Option<jiff::Timestamp> = None;
    for taint in no_execute {
        let matching: Vec<&Toleration> =
            tolerations.iter().filter(|t| tolerates(t, taint)).collect();
        if matching.is_empty() {
            return Eviction::Now;
        }
        // `getMinTolerationTime`: the shortest bounded toleration; unbounded ones ignored
        // unless all are.
        let Some(seconds) = matching.iter().filter_map(|t| t.toleration_seconds).min() else {
            continue;
        };
        let since = taint.time_added.as_ref().map_or(now, |Time(t)| *t);
        let at = since
            .checked_add(jiff::SignedDuration::from_secs(seconds.max(0)))
            .unwrap_or(since);
        due = Some(due.map_or(at, |d| d.min(at)));
    }
    match due {
        None => Eviction::Never,
        Some(at) if at <= now => Eviction::Now,
        Some(at) => {
            Eviction::After(Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO))
        }
    }
}

async fn reconcile(pod: Arc<Pod>, cx: Arc<Context>) -> Result<Action, Error> {
    let node_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    if node_name.is_empty() || !pods::is_active(&pod) {
        return Ok(Action::done());
    }
    let Ok(node) = cx.nodes.get(node_name) else {
        return Ok(Action::done());
    };
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    match eviction(&tolerations, &taints, crate::clock::now()) {
        Eviction::Never => Ok(Action::done()),
        Eviction::After(wait) => Ok(Action::requeue_after(wait)),
        Eviction::Now => evict(&cx, &pod).await,
    }
}

/// Step 4: the `DisruptionTarget` condition, then a graceful delete.
async fn evict(cx: &Context, pod: &Pod) -> Result<Action, Error> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let client: ResourceClient<Pod> =
        ResourceClient::namespaced(cx.cluster.client.clone(), &namespace);
    tracing::info!(pod = %name, %namespace, "deleting pod for a NoExecute taint");
    let mut updated = pod.clone();
    let status = updated.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    if pods::set_condition(
        conditions,
        "DisruptionTarget",
        "True",
        Some("DeletionByTaintManager"),
        Some("Taint manager: deleting due to NoExecute taint"),
    ) {
        match client.update_status(&PostParams::default(), &updated).await {
            Ok(_) => {}
            Err(e) if e.is_conflict() || e.is_not_found() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: pod.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match client.delete(&name, &params).await {
        Ok(_) => Ok(Action::done()),
        Err(e) if e.is_not_found() || e.is_conflict() => Ok(Action::done()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(secs: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + secs).unwrap_or_default()
    }

    fn taint(key: &str, added: i64) -> Taint {
        Taint {
            key: key.into(),
            effect: "NoExecute".into(),
            time_added: Some(Time(at(added))),
            value: None,
        }
    }

    fn toleration(value: serde_json::Value) -> Toleration {
        serde_json::from_value(value).unwrap_or_default()
    }

    /// `taint_eviction.go` `processPodOnNode` and `getMinTolerationTime`.
    #[test]
    fn a_pod_leaves_when_its_shortest_matching_toleration_runs_out() {
        let unreachable = [taint("node.kubernetes.io/unreachable", 0)];
        assert_eq!(eviction(&[], &unreachable, at(1)), Eviction::Now);
        let default = toleration(json!({"key": "node.kubernetes.io/unreachable",
            "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        assert_eq!(
            eviction(std::slice::from_ref(&default), &unreachable, at(100)),
            Eviction::After(Duration::from_secs(200))
        );
        assert_eq!(
            eviction(std::slice::from_ref(&default), &unreachable, at(300)),
            Eviction::Now
        );
        let forever = toleration(json!({"operator": "Exists"}));
        assert_eq!(
            eviction(std::slice::from_ref(&forever), &unreachable, at(1000)),
            Eviction::Never
        );
        assert_eq!(
            eviction(&[forever, default.clone()], &unreachable, at(100)),
            Eviction::After(Duration::from_secs(200))
        );
        let two = [unreachable[0].clone(), taint("dedicated", 0)];
        assert_eq!(eviction(&[default], &two, at(1)), Eviction::Now);
        let no_schedule = Taint {
            effect: "NoSchedule".into(),
            ..taint("gpu", 0)
        };
        assert_eq!(eviction(&[], &[no_schedule], at(1)), Eviction::Never);
    }
}
