//! kube-controller-manager's EndpointSlice controller
//! (`pkg/controller/endpointslice/endpointslice_controller.go`, the reconciler in
//! `staging/src/k8s.io/endpointslice/reconciler.go`): every Service with a selector gets an
//! EndpointSlice listing the pods it selects, with their readiness, so a client that waits
//! for endpoints (or `kubectl get endpointslices`) sees them.
//!
//! The sync loop, one Service at a time:
//!
//! 1. A Service without a selector (its endpoints are managed by hand), or being deleted:
//!    nothing (the slice goes with the Service through its owner reference).
//! 2. The endpoints: the pods of the Service's namespace its selector matches that have a
//!    pod IP and are not finished, in name order, each with `conditions.ready` (pod Ready
//!    and not terminating), `serving` (pod Ready), `terminating` (deletion started),
//!    its node and a `targetRef` to the pod.
//! 3. The ports: each Service port with its `targetPort` resolved against the pods
//!    (a number as is; a name looked up in the first pod's container ports, as the
//!    reconciler groups pods by resolved ports, simplified here to one group).
//! 4. One slice per Service (`<service>-<suffix>`, labelled
//!    `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`, controlled
//!    by the Service), created, or updated when its endpoints or ports changed.

use std::sync::Arc;

use k8s_openapi::api::{
    core::v1::{Pod, Service},
    discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice},
};
use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference},
    util::intstr::IntOrString,
};
use kubegen::{
    cache::Lister,
    client::{Error, params::PostParams},
    controller::{Action, CachedClient, Controller, ControllerError, Request},
};
use tokio_util::sync::CancellationToken;

use super::{
    compat::{self, Opt},
    config::Cluster,
    pods,
};

/// The label naming a slice's Service.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The label naming the controller that manages a slice.
const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";

/// This controller's value of [`MANAGED_BY_LABEL`].
const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

struct Context {
    slices: CachedClient<EndpointSlice>,
    pods: Lister<Pod>,
}

/// Runs the EndpointSlice controller until `stop`.
pub(crate) async fn run(
    cluster: Arc<Cluster>,
    stop: CancellationToken,
) -> Result<(), ControllerError> {
    let slices = CachedClient::<EndpointSlice>::new(cluster.client.clone(), &cluster.factory)
        .map_err(|e| ControllerError::Informer {
            controller: "endpointslice".into(),
            source: e,
        })?;
    let pod_lister = cluster.factory.lister_for::<Pod>();
    let services = cluster.factory.lister_for::<Service>();
    let controller = Controller::<Service>::builder(&cluster.factory)
        .named("endpointslice")
        .owns::<EndpointSlice>()
        // A pod's change requeues the Services whose selectors match it (old or new).
        .watches::<Pod>(move |pod| {
            let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
            let mut requests: Vec<Request> = services
                .namespaced(namespace)
                .list(&kube_core::Selector::default())
                .iter()
                .filter(|s| {
                    selector(s).is_some_and(|sel| pods::selects(&sel, pod.metadata.labels.as_ref()))
                })
                .filter_map(|s| Request::for_object(s.as_ref()))
                .collect();
            requests.sort_by_key(Request::cache_key);
            requests
        })
        .build();
    let cx = Arc::new(Context {
        slices,
        pods: pod_lister,
    });
    controller.run(reconcile, cx, stop).await?;
    Ok(())
}

/// The Service's selector as a label selector (`None`: no selector, endpoints by hand).
fn selector(service: &Service) -> Option<LabelSelector> {
    let labels = service.spec.as_ref()?.selector.clone()?;
    (!labels.is_empty()).then_some(LabelSelector {
        match_labels: Some(labels),
        match_expressions: None,
    })
}

async fn reconcile(service: Arc<Service>, cx: Arc<Context>) -> Result<Action, Error> {
    if let Some(consistency) = cx.slices.consistency()
        && !consistency
            .ensure_all_ready(std::time::Duration::from_secs(5))
            .await
    {
        return Ok(Action::requeue_after(std::time::Duration::from_millis(100)));
    }
    // 1.
    let Some(selector) = selector(&service) else {
        return Ok(Action::done());
    };
    if service.metadata.deletion_timestamp.is_some() {
        return Ok(Action::done());
    }
    let namespace = service.metadata.namespace.clone().unwrap_or_default();
    let name = service.metadata.name.clone().unwrap_or_default();
    // 2.
    let mut selected: Vec<Arc<Pod>> = cx
        .pods
        .namespaced(&namespace)
        .list(&kube_core::Selector::default())
        .into_iter()
        .filter(|p| pods::selects(&selector, p.metadata.labels.as_ref()))
        .filter(|p| !pods::is_terminal(p) && pod_ip(p).is_some())
        .collect();
    selected.sort_by_key(|p| p.metadata.name.clone());
    let endpoints: Vec<Endpoint> = selected.iter().map(|p| endpoint(p)).collect();
    // 3.
    let ports: Vec<EndpointPort> = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|port| EndpointPort {
            name: Some(port.name.clone().unwrap_or_default()),
            port: resolve_target_port(port.target_port.as_ref(), port.port, &selected),
            protocol: Some(port.protocol.clone().unwrap_or_else(|| "TCP".into())),
            app_protocol: port.app_protocol.clone(),
        })
        .collect();
    // 4.
    let existing = cx
        .slices
        .lister()
        .namespaced(&namespace)
        .list(&kube_core::Selector::default())
        .into_iter()
        .find(|s| {
            pods::is_controlled_by(
                &s.metadata,
                service.metadata.uid.as_deref().unwrap_or_default(),
            )
        });
    match existing {
        Some(slice) => {
            if slice.endpoints.opt().map(Vec::as_slice).unwrap_or_default() == endpoints.as_slice()
                && slice.ports.as_deref() == Some(ports.as_slice())
            {
                return Ok(Action::done());
            }
            let mut updated = (*slice).clone();
            *updated.endpoints.opt_mut() = endpoints;
            updated.ports = Some(ports);
            match cx.slices.update(&PostParams::default(), &updated).await {
                Ok(_) => Ok(Action::done()),
                // Gone, or changed meanwhile: the newer slice's event brings it back.
                Err(e) if e.is_not_found() || e.is_conflict() => Ok(Action::done()),
                Err(e) => Err(e),
            }
        }
        None => {
            let slice = EndpointSlice {
                metadata: ObjectMeta {
                    generate_name: Some(format!("{name}-")),
                    namespace: Some(namespace),
                    labels: Some(
                        [
                            (SERVICE_NAME_LABEL.to_string(), name.clone()),
                            (MANAGED_BY_LABEL.to_string(), MANAGED_BY.to_string()),
                        ]
                        .into(),
                    ),
                    owner_references: Some(vec![OwnerReference {
                        api_version: "v1".into(),
                        kind: "Service".into(),
                        name,
                        uid: service.metadata.uid.clone().unwrap_or_default(),
                        controller: Some(true),
                        block_owner_deletion: Some(true),
                    }]),
                    ..ObjectMeta::default()
                },
                address_type: "IPv4".into(),
                ports: Some(ports),
                endpoints: compat::field(endpoints),
            };
            match cx.slices.create(&PostParams::default(), &slice).await {
                Ok(_) => Ok(Action::done()),
                Err(e) if e.is_not_found() => Ok(Action::done()),
                Err(e) => Err(e),
            }
        }
    }
}

fn pod_ip(pod: &Pod) -> Option<&str> {
    pod.status
        .as_ref()?
        .pod_ip
        .as_deref()
        .filter(|ip| !ip.is_empty())
}

/// Step 2: one pod as an endpoint.
fn endpoint(pod: &Pod) -> Endpoint {
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let ready = pods::is_ready(pod);
    Endpoint {
        addresses: pod_ip(pod).map(str::to_string).into_iter().collect(),
        conditions: Some(EndpointConditions {
            ready: Some(ready && !terminating),
            serving: Some(ready),
            terminating: Some(terminating),
        }),
        node_name: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
        target_ref: Some(k8s_openapi::api::core::v1::ObjectReference {
            kind: Some("Pod".into()),
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        }),
        ..Endpoint::default()
    }
}

/// Step 3: a Service port's `targetPort` as a number (`podutil.FindPort`): a number as
/// is, a name through the first selected pod's container ports, nothing given: the
/// Service port.
fn resolve_target_port(target: Option<&IntOrString>, port: i32, pods: &[Arc<Pod>]) -> Option<i32> {
    match target {
        None => Some(port),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(name)) => match name.parse::<i32>() {
            Ok(n) => Some(n),
            Err(_) => pods.iter().find_map(|p| {
                p.spec
                    .as_ref()?
                    .containers
                    .iter()
                    .flat_map(|c| c.ports.iter().flatten())
                    .find(|cp| cp.name.as_deref() == Some(name.as_str()))
                    .map(|cp| cp.container_port)
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, ready: bool, deleting: bool) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default", "uid": name,
                             "deletionTimestamp": deleting.then_some("2026-01-01T00:00:00Z")},
                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx",
                         "ports": [{"name": "http", "containerPort": 8080}]}]},
                "status": {"phase": "Running", "podIP": "10.244.1.9",
                           "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]},
            }))
            .unwrap_or_default(),
        )
    }

    #[test]
    fn endpoints_carry_ready_serving_and_terminating() {
        let conditions = |p: &Pod| {
            let c = endpoint(p).conditions.unwrap_or_default();
            (c.ready, c.serving, c.terminating)
        };
        assert_eq!(
            conditions(&pod("a", true, false)),
            (Some(true), Some(true), Some(false))
        );
        assert_eq!(
            conditions(&pod("b", false, false)),
            (Some(false), Some(false), Some(false))
        );
        assert_eq!(
            conditions(&pod("c", true, true)),
            (Some(false), Some(true), Some(true))
        );
        let e = endpoint(&pod("a", true, false));
        assert_eq!(e.addresses, ["10.244.1.9"]);
        assert_eq!(e.node_name.as_deref(), Some("node-1"));
    }

    #[test]
    fn named_target_ports_resolve_through_the_pods() {
        let pods = [pod("a", true, false)];
        let named = IntOrString::String("http".into());
        assert_eq!(resolve_target_port(Some(&named), 80, &pods), Some(8080));
        assert_eq!(
            resolve_target_port(Some(&IntOrString::Int(9000)), 80, &pods),
            Some(9000)
        );
        assert_eq!(resolve_target_port(None, 80, &pods), Some(80));
        assert_eq!(
            resolve_target_port(Some(&IntOrString::String("grpc".into())), 80, &pods),
            None
        );
    }
}
