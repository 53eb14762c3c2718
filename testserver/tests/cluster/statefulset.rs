//! StatefulSets and their volumes on the cluster in a process: kube-controller-manager's
//! StatefulSet controller (`pkg/controller/statefulset/stateful_set_control.go`), its
//! PersistentVolume controller (`pkg/controller/volume/persistentvolume/pv_controller.go`)
//! with the default StorageClass's provisioner, and kube-scheduler's VolumeBinding plugin
//! (`pkg/scheduler/framework/plugins/volumebinding`).

use std::{collections::BTreeMap, time::Duration};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::{
    apps::v1::{ControllerRevision, StatefulSet},
    core::v1::{Event, PersistentVolume, PersistentVolumeClaim, Pod},
    storage::v1::StorageClass,
};
use kube_core::WatchEvent;
use kubegen::client::{
    Client, ResourceClient,
    params::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
};
use kubegen_testserver::ClusterConfig;
use serde_json::json;

use crate::common::{cluster, eventually};

/// A StatefulSet `web` of nginx with a 1Gi `www` claim per pod, patched with `extra`.
fn web(replicas: i32, extra: serde_json::Value) -> StatefulSet {
    let mut v = json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": "nginx",
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                    "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]},
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    });
    json_patch::merge(&mut v, &extra);
    serde_json::from_value(v).unwrap()
}

fn sets(client: &Client) -> ResourceClient<StatefulSet> {
    ResourceClient::namespaced(client.clone(), "default")
}

fn pods(client: &Client) -> ResourceClient<Pod> {
    ResourceClient::namespaced(client.clone(), "default")
}

fn claims(client: &Client) -> ResourceClient<PersistentVolumeClaim> {
    ResourceClient::namespaced(client.clone(), "default")
}

/// Whether kubectl's `rollout status` would say the set is rolled out
/// (`kubectl/pkg/polymorphichelpers/rollout_status.go` `StatefulSetStatusViewer`).
fn rolled_out(set: &StatefulSet) -> bool {
    let Some(status) = &set.status else {
        return false;
    };
    let replicas = set.spec.replicas.unwrap_or(1);
    let partition = set
        .spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition)
        .unwrap_or(0);
    status.observed_generation.unwrap_or(0) >= set.metadata.generation.unwrap_or(0)
        && status.ready_replicas.unwrap_or(0) >= replicas
        && status.updated_replicas.unwrap_or(0) >= replicas - partition
}

/// Waits until `web` is rolled out with `ready` ready pods and returns it.
async fn ready(client: &Client, ready: i32) -> StatefulSet {
    eventually("web rolled out", || async {
        sets(client)
            .get("web")
            .await
            .ok()
            .filter(|s| rolled_out(s) && s.status.as_ref().unwrap().replicas == ready)
    })
    .await
}

/// What a pod watch saw, as `(pod, what)`: `added`, `running` (Running and Ready),
/// `terminating`, `deleted`, each once per pod uid.
async fn drain(
    events: &mut (impl futures::Stream<Item = Result<WatchEvent<Pod>, kubegen::client::Error>> + Unpin),
) -> Vec<(String, &'static str)> {
    let mut seen: Vec<(String, &'static str)> = Vec::new();
    let mut noted: BTreeMap<(String, &'static str), ()> = BTreeMap::new();
    while let Ok(Ok(Some(event))) =
        tokio::time::timeout(Duration::from_millis(10), events.try_next()).await
    {
        let (pod, deleted) = match event {
            WatchEvent::Added(p) | WatchEvent::Modified(p) => (p, false),
            WatchEvent::Deleted(p) => (p, true),
            _ => continue,
        };
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let status = pod.status.clone().unwrap_or_default();
        let running = status.phase.as_deref() == Some("Running")
            && status
                .conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "Ready" && c.status == "True");
        let mut note = |what: &'static str| {
            if noted.insert((uid.clone(), what), ()).is_none() {
                seen.push((name.clone(), what));
            }
        };
        note("added");
        if running {
            note("running");
        }
        if pod.metadata.deletion_timestamp.is_some() {
            note("terminating");
        }
        if deleted {
            note("deleted");
        }
    }
    seen
}

fn position(seen: &[(String, &'static str)], pod: &str, what: &str) -> usize {
    seen.iter()
        .position(|(p, w)| p == pod && *w == what)
        .unwrap_or_else(|| panic!("no {what} for {pod} in {seen:#?}"))
}

/// The last time `what` happened to a pod named `pod` (a pod recreated under its name has
/// several).
fn last_position(seen: &[(String, &'static str)], pod: &str, what: &str) -> usize {
    seen.iter()
        .rposition(|(p, w)| p == pod && *w == what)
        .unwrap_or_else(|| panic!("no {what} for {pod} in {seen:#?}"))
}

fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// OrderedReady: `web-0`, `web-1`, `web-2`, each created once the one before is Running
/// and Ready (`stateful_set_control.go` `processReplica`); each pod's claim `www-web-<n>`
/// waits for the scheduler (`WaitForFirstConsumer`), which picks a node and annotates it;
/// the provisioner makes `pvc-<uid>` pinned to that node and the PV controller binds both
/// sides (`pv_controller.go` `bind`); the pod then runs on that node.
#[tokio::test]
async fn ordered_pods_each_run_before_the_next_with_a_provisioned_volume() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let mut events = pods(&client)
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    sets(&client)
        .create(&PostParams::default(), &web(3, json!({})))
        .await
        .unwrap();
    let set = ready(&client, 3).await;
    let seen = drain(&mut events).await;
    assert!(
        position(&seen, "web-0", "running") < position(&seen, "web-1", "added"),
        "{seen:#?}"
    );
    assert!(
        position(&seen, "web-1", "running") < position(&seen, "web-2", "added"),
        "{seen:#?}"
    );

    let status = set.status.clone().unwrap();
    assert_eq!(status.current_replicas, Some(3));
    assert_eq!(status.updated_replicas, Some(3));
    assert_eq!(status.available_replicas, Some(3));
    assert_eq!(status.current_revision, status.update_revision);
    assert_eq!(status.collision_count, Some(0));
    let revisions = ResourceClient::<ControllerRevision>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].metadata.name, status.update_revision);
    assert_eq!(revisions[0].revision, Some(1));

    let class = ResourceClient::<StorageClass>::cluster(client.clone())
        .get("standard")
        .await
        .unwrap();
    assert_eq!(
        annotation(
            &class.metadata,
            "storageclass.kubernetes.io/is-default-class"
        ),
        Some("true")
    );
    assert_eq!(
        class.volume_binding_mode.as_deref(),
        Some("WaitForFirstConsumer")
    );

    let volumes = ResourceClient::<PersistentVolume>::cluster(client.clone());
    for ordinal in 0..3 {
        let pod = pods(&client).get(&format!("web-{ordinal}")).await.unwrap();
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(
            labels["statefulset.kubernetes.io/pod-name"],
            format!("web-{ordinal}")
        );
        assert_eq!(labels["apps.kubernetes.io/pod-index"], ordinal.to_string());
        assert_eq!(
            Some(&labels["controller-revision-hash"]),
            status.update_revision.as_ref()
        );
        let spec = pod.spec.clone().unwrap();
        assert_eq!(spec.hostname, Some(format!("web-{ordinal}")));
        assert_eq!(spec.subdomain.as_deref(), Some("nginx"));
        let node = spec.node_name.clone().unwrap();
        let claim_name = format!("www-web-{ordinal}");
        let volume = spec
            .volumes
            .unwrap()
            .into_iter()
            .find(|v| v.name == "www")
            .unwrap();
        assert_eq!(
            volume.persistent_volume_claim.unwrap().claim_name,
            claim_name
        );

        let claim = claims(&client).get(&claim_name).await.unwrap();
        let claim_status = claim.status.clone().unwrap();
        assert_eq!(claim_status.phase.as_deref(), Some("Bound"));
        assert_eq!(claim_status.capacity.unwrap()["storage"].0, "1Gi");
        assert_eq!(
            claim_status.access_modes,
            Some(vec!["ReadWriteOnce".to_string()])
        );
        assert_eq!(claim.metadata.labels.clone().unwrap()["app"], "nginx");
        assert_eq!(
            annotation(&claim.metadata, "volume.kubernetes.io/selected-node"),
            Some(node.as_str())
        );
        assert_eq!(
            annotation(&claim.metadata, "pv.kubernetes.io/bind-completed"),
            Some("yes")
        );
        assert_eq!(
            annotation(&claim.metadata, "pv.kubernetes.io/bound-by-controller"),
            Some("yes")
        );
        assert_eq!(
            annotation(&claim.metadata, "volume.kubernetes.io/storage-provisioner"),
            Some("kubegen.io/hostpath")
        );
        let claim_spec = claim.spec.clone().unwrap();
        assert_eq!(
            claim_spec.storage_class_name.as_deref(),
            Some("standard"),
            "the default class"
        );
        let volume_name = claim_spec.volume_name.unwrap();
        assert_eq!(
            volume_name,
            format!("pvc-{}", claim.metadata.uid.clone().unwrap())
        );

        let pv = volumes.get(&volume_name).await.unwrap();
        assert_eq!(pv.status.unwrap().phase.as_deref(), Some("Bound"));
        assert_eq!(
            annotation(&pv.metadata, "pv.kubernetes.io/provisioned-by"),
            Some("kubegen.io/hostpath")
        );
        let pv_spec = pv.spec.unwrap();
        assert_eq!(
            pv_spec.claim_ref.unwrap().name.as_deref(),
            Some(claim_name.as_str())
        );
        assert_eq!(
            pv_spec.persistent_volume_reclaim_policy.as_deref(),
            Some("Delete")
        );
        let term = &pv_spec
            .node_affinity
            .unwrap()
            .required
            .unwrap()
            .node_selector_terms[0];
        let requirement = &term.match_expressions.as_ref().unwrap()[0];
        assert_eq!(requirement.key, "kubernetes.io/hostname");
        assert_eq!(requirement.values, Some(vec![node.clone()]));
    }
}

/// Scale down deletes the highest ordinal first and waits for it to be gone before the
/// next (`processCondemned`); the claims stay (`whenScaled: Retain`), and a pod deleted by
/// hand comes back under its name on its node, with its claim.
#[tokio::test]
async fn scale_down_goes_in_reverse_and_a_deleted_pod_comes_back_with_its_claim() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    sets(&client)
        .create(&PostParams::default(), &web(3, json!({})))
        .await
        .unwrap();
    ready(&client, 3).await;
    let web1 = pods(&client).get("web-1").await.unwrap();
    let mut events = pods(&client)
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    pods(&client)
        .delete("web-1", &DeleteParams::default())
        .await
        .unwrap();
    let again = eventually("web-1 recreated and running", || async {
        pods(&client).get("web-1").await.ok().filter(|p| {
            p.metadata.uid != web1.metadata.uid
                && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        })
    })
    .await;
    assert_eq!(
        again.spec.as_ref().unwrap().node_name,
        web1.spec.as_ref().unwrap().node_name,
        "its volume's node"
    );
    ready(&client, 3).await;

    sets(&client)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    ready(&client, 1).await;
    let seen = drain(&mut events).await;
    assert!(
        position(&seen, "web-2", "deleted") < last_position(&seen, "web-1", "terminating"),
        "{seen:#?}"
    );
    let names: Vec<_> = pods(&client)
        .list(&ListParams::default().labels("app=nginx"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(names, ["web-0"]);
    let kept = claims(&client)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(kept.len(), 3, "claims outlive their pods");
    assert!(
        kept.iter()
            .all(|c| c.status.as_ref().unwrap().phase.as_deref() == Some("Bound"))
    );
}

/// `RollingUpdate` with a partition: only ordinals at or above it move to the update
/// revision, highest first; lowering the partition finishes the rollout and the update
/// revision becomes current (`updateStatefulSetAfterInvariantEstablished`,
/// `completeRollingUpdate`); going back to the first template renumbers its revision
/// (`getStatefulSetRevisions`).
#[tokio::test]
async fn a_rolling_update_goes_by_ordinal_down_to_the_partition() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let partitioned = json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}});
    sets(&client)
        .create(&PostParams::default(), &web(3, partitioned))
        .await
        .unwrap();
    let first = ready(&client, 3)
        .await
        .status
        .unwrap()
        .update_revision
        .unwrap();
    let image = |image: &str| json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}});
    sets(&client)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(image("nginx:1.28")),
        )
        .await
        .unwrap();
    let set = eventually("web-2 updated", || async {
        sets(&client).get("web").await.ok().filter(|s| {
            let status = s.status.as_ref().unwrap();
            s.metadata.generation == status.observed_generation
                && status.updated_replicas == Some(1)
                && status.ready_replicas == Some(3)
        })
    })
    .await;
    let status = set.status.unwrap();
    let second = status.update_revision.clone().unwrap();
    assert_ne!(first, second);
    assert_eq!(
        status.current_revision.as_deref(),
        Some(first.as_str()),
        "not complete below the partition"
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    let revision_of =
        |p: &Pod| p.metadata.labels.as_ref().unwrap()["controller-revision-hash"].clone();
    let all = pods(&client)
        .list(&ListParams::default().labels("app=nginx"))
        .await
        .unwrap()
        .items;
    let revisions: Vec<_> = all.iter().map(revision_of).collect();
    assert_eq!(revisions, [first.clone(), first.clone(), second.clone()]);

    let mut events = pods(&client)
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    sets(&client)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})),
        )
        .await
        .unwrap();
    let set = eventually("web rolled out", || async {
        sets(&client).get("web").await.ok().filter(|s| {
            let status = s.status.as_ref().unwrap();
            rolled_out(s) && status.current_revision == status.update_revision
        })
    })
    .await;
    assert_eq!(set.status.unwrap().current_replicas, Some(3));
    let seen = drain(&mut events).await;
    // web-1 is replaced and its successor runs before web-0 goes.
    assert!(
        position(&seen, "web-1", "deleted") < position(&seen, "web-0", "terminating"),
        "{seen:#?}"
    );
    assert!(
        last_position(&seen, "web-1", "running") < position(&seen, "web-0", "terminating"),
        "{seen:#?}"
    );
    for pod in pods(&client)
        .list(&ListParams::default().labels("app=nginx"))
        .await
        .unwrap()
        .items
    {
        assert_eq!(revision_of(&pod), second);
        assert_eq!(
            pod.spec.unwrap().containers[0].image.as_deref(),
            Some("nginx:1.28")
        );
    }

    sets(&client)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(image("nginx:1.27")),
        )
        .await
        .unwrap();
    let set = eventually("rolled back", || async {
        sets(&client).get("web").await.ok().filter(|s| {
            let status = s.status.as_ref().unwrap();
            rolled_out(s) && status.current_revision == status.update_revision
        })
    })
    .await;
    assert_eq!(
        set.status.unwrap().update_revision.as_deref(),
        Some(first.as_str())
    );
    let revisions = ResourceClient::<ControllerRevision>::namespaced(client.clone(), "default")
        .get(&first)
        .await
        .unwrap();
    assert_eq!(
        revisions.revision,
        Some(3),
        "the first template is the newest revision again"
    );
}

/// `podManagementPolicy: Parallel` creates every pod at once, without waiting for any to
/// run (`allowsBurst`).
#[tokio::test]
async fn parallel_pods_start_together() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let mut events = pods(&client)
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    sets(&client)
        .create(
            &PostParams::default(),
            &web(3, json!({"spec": {"podManagementPolicy": "Parallel"}})),
        )
        .await
        .unwrap();
    ready(&client, 3).await;
    let seen = drain(&mut events).await;
    let first_running = seen.iter().position(|(_, w)| *w == "running").unwrap();
    for pod in ["web-0", "web-1", "web-2"] {
        assert!(position(&seen, pod, "added") < first_running, "{seen:#?}");
    }
}

/// The PV controller's refusals and defaults: a claim of a class that does not exist stays
/// Pending with `ProvisioningFailed` (`pv_controller.go` `provisionClaim`); a claim without
/// a class gets the default one (KEP-3333); a pod whose claim does not exist is
/// unschedulable (`volume_binding.go` `PreFilter`).
#[tokio::test]
async fn missing_classes_and_claims_leave_things_pending() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let claim = |name: &str, class: Option<&str>| -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}},
        }))
        .unwrap()
    };
    claims(&client)
        .create(&PostParams::default(), &claim("fast-data", Some("fast")))
        .await
        .unwrap();
    claims(&client)
        .create(&PostParams::default(), &claim("plain", None))
        .await
        .unwrap();
    let event = eventually("ProvisioningFailed", || async {
        ResourceClient::<Event>::namespaced(client.clone(), "default")
            .list(&ListParams::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("ProvisioningFailed"))
    })
    .await;
    assert_eq!(event.involved_object.name.as_deref(), Some("fast-data"));
    assert_eq!(
        event.message.as_deref(),
        Some("storageclass.storage.k8s.io \"fast\" not found")
    );
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    eventually("the default class", || async {
        claims(&client)
            .get("plain")
            .await
            .ok()
            .filter(|c| c.spec.as_ref().unwrap().storage_class_name.as_deref() == Some("standard"))
    })
    .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let pending = claims(&client).get("fast-data").await.unwrap();
    assert_eq!(pending.status.unwrap().phase.as_deref(), Some("Pending"));
    let waiting = claims(&client).get("plain").await.unwrap();
    assert_eq!(
        waiting.status.unwrap().phase.as_deref(),
        Some("Pending"),
        "waits for its first consumer"
    );

    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "orphan"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "nope"}}]},
    }))
    .unwrap();
    pods(&client)
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    let message = eventually("unschedulable", || async {
        let pod = pods(&client).get("orphan").await.ok()?;
        pod.status?
            .conditions?
            .into_iter()
            .find(|c| c.type_ == "PodScheduled")?
            .message
    })
    .await;
    assert_eq!(
        message,
        "0/3 nodes are available: persistentvolumeclaim \"nope\" not found."
    );
}

/// A pre-created volume of an `Immediate` class binds to a claim that fits it (static
/// binding, `FindMatchingVolume`: class, access modes, the smallest big enough); deleting
/// a claim releases its volume, and a provisioned `Delete` volume goes with it
/// (`pv_controller.go` `syncVolume`, `reclaimVolume`).
#[tokio::test]
async fn static_volumes_bind_and_released_volumes_are_reclaimed() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let class: StorageClass = serde_json::from_value(json!({
        "metadata": {"name": "manual"}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "Immediate",
    }))
    .unwrap();
    ResourceClient::<StorageClass>::cluster(client.clone())
        .create(&PostParams::default(), &class)
        .await
        .unwrap();
    let volumes = ResourceClient::<PersistentVolume>::cluster(client.clone());
    for (name, size) in [("big", "10Gi"), ("small", "2Gi")] {
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "manual", "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": format!("/data/{name}")}},
        }))
        .unwrap();
        volumes.create(&PostParams::default(), &pv).await.unwrap();
    }
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data"},
        "spec": {"storageClassName": "manual", "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}},
    }))
    .unwrap();
    claims(&client)
        .create(&PostParams::default(), &claim)
        .await
        .unwrap();
    let bound = eventually("bound", || async {
        claims(&client)
            .get("data")
            .await
            .ok()
            .filter(|c| c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound"))
    })
    .await;
    assert_eq!(bound.spec.unwrap().volume_name.as_deref(), Some("small"));
    let small = volumes.get("small").await.unwrap();
    assert_eq!(
        annotation(&small.metadata, "pv.kubernetes.io/bound-by-controller"),
        Some("yes")
    );
    assert_eq!(small.status.unwrap().phase.as_deref(), Some("Bound"));
    claims(&client)
        .delete("data", &DeleteParams::default())
        .await
        .unwrap();
    eventually("released", || async {
        volumes
            .get("small")
            .await
            .ok()
            .filter(|v| v.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released"))
    })
    .await;

    // A provisioned volume: claim, pod, then both gone.
    let mut claim = claim.clone();
    claim.metadata.name = Some("scratch".into());
    claim.spec.as_mut().unwrap().storage_class_name = None;
    claims(&client)
        .create(&PostParams::default(), &claim)
        .await
        .unwrap();
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "user"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "scratch"}}]},
    }))
    .unwrap();
    pods(&client)
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    eventually("running", || async {
        pods(&client)
            .get("user")
            .await
            .ok()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
    })
    .await;
    let volume = claims(&client)
        .get("scratch")
        .await
        .unwrap()
        .spec
        .unwrap()
        .volume_name
        .unwrap();
    pods(&client)
        .delete("user", &DeleteParams::default())
        .await
        .unwrap();
    claims(&client)
        .delete("scratch", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the provisioned volume deleted", || async {
        volumes
            .get(&volume)
            .await
            .err()
            .filter(|e| e.is_not_found())
    })
    .await;
}

/// `persistentVolumeClaimRetentionPolicy` (KEP-1847): with `whenScaled: Delete` a
/// scaled-down pod's claim is owned by the pod and goes with it (the garbage collector),
/// and its provisioned volume with the claim (`reclaimPolicy: Delete`); with
/// `whenDeleted: Delete` the claims go with the set (`stateful_set_control.go`
/// `UpdatePodClaimForRetentionPolicy`).
#[tokio::test]
async fn the_retention_policy_deletes_claims_with_their_pods_or_set() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let policy = json!({"spec": {"persistentVolumeClaimRetentionPolicy":
        {"whenDeleted": "Delete", "whenScaled": "Delete"}}});
    sets(&client)
        .create(&PostParams::default(), &web(2, policy))
        .await
        .unwrap();
    ready(&client, 2).await;
    let claim = claims(&client).get("www-web-1").await.unwrap();
    let owners = claim.metadata.owner_references.clone().unwrap();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (owners[0].kind.as_str(), owners[0].controller),
        ("StatefulSet", Some(true))
    );
    let volume = claim.spec.unwrap().volume_name.unwrap();
    let volumes = ResourceClient::<PersistentVolume>::cluster(client.clone());
    sets(&client)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    eventually("web-1's claim and volume gone", || async {
        let claim_gone = claims(&client)
            .get("www-web-1")
            .await
            .err()
            .is_some_and(|e| e.is_not_found());
        let volume_gone = volumes
            .get(&volume)
            .await
            .err()
            .is_some_and(|e| e.is_not_found());
        (claim_gone && volume_gone).then_some(())
    })
    .await;
    assert!(claims(&client).get("www-web-0").await.is_ok());
    sets(&client)
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("every claim and volume gone", || async {
        let claims = claims(&client).list(&ListParams::default()).await.ok()?;
        let volumes = volumes.list(&ListParams::default()).await.ok()?;
        (claims.items.is_empty() && volumes.items.is_empty()).then_some(())
    })
    .await;
}

/// A `WaitForFirstConsumer` class without a provisioner (local volumes): the scheduler
/// only places the pod where a matching volume is, binds that volume to the claim
/// (`binder.go` `BindPodVolumes`: the volume's `claimRef`), and the PV controller finishes
/// the binding before the pod is bound (`volume_binding.go` `Filter`, `PreBind`).
#[tokio::test]
async fn a_local_volume_takes_its_pod_to_its_node() {
    let (_server, client) = cluster(ClusterConfig::default()).await;
    let class: StorageClass = serde_json::from_value(json!({
        "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }))
    .unwrap();
    ResourceClient::<StorageClass>::cluster(client.clone())
        .create(&PostParams::default(), &class)
        .await
        .unwrap();
    let pv: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": "disk-on-node-2"},
        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "local", "persistentVolumeReclaimPolicy": "Retain",
                 "local": {"path": "/mnt/disks/1"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}]}]}}},
    }))
    .unwrap();
    let volumes = ResourceClient::<PersistentVolume>::cluster(client.clone());
    volumes.create(&PostParams::default(), &pv).await.unwrap();
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data"},
        "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}},
    }))
    .unwrap();
    claims(&client)
        .create(&PostParams::default(), &claim)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let waiting = claims(&client).get("data").await.unwrap();
    assert_eq!(
        waiting.status.unwrap().phase.as_deref(),
        Some("Pending"),
        "no consumer yet"
    );
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"containers": [{"name": "c", "image": "postgres"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
    }))
    .unwrap();
    pods(&client)
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    let running = eventually("running", || async {
        pods(&client)
            .get("db")
            .await
            .ok()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
    })
    .await;
    assert_eq!(
        running.spec.unwrap().node_name.as_deref(),
        Some("node-2"),
        "where its volume is"
    );
    let bound = claims(&client).get("data").await.unwrap();
    assert_eq!(
        bound.spec.unwrap().volume_name.as_deref(),
        Some("disk-on-node-2")
    );
    assert_eq!(bound.status.unwrap().phase.as_deref(), Some("Bound"));
    let pv = volumes.get("disk-on-node-2").await.unwrap();
    assert_eq!(
        annotation(&pv.metadata, "pv.kubernetes.io/bound-by-controller"),
        Some("yes")
    );
    assert_eq!(pv.status.unwrap().phase.as_deref(), Some("Bound"));
}
