//! The reconciler helpers against the test server: `create_or_update` / `create_or_patch`
//! (controller-runtime `controllerutil.go` and `controllerutil_test.go`), status conditions
//! written through the status subresource (apimachinery `meta/conditions.go`),
//! `await_condition` (kube-runtime `wait.rs`) and the finalizer flow (kube-runtime
//! `finalizer.rs`, controller-runtime `pkg/finalizer`).

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::{
    apps::v1::{Deployment, DeploymentSpec, DeploymentStatus},
    core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec},
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
use kube_core::{
    ObjectMeta,
    params::{DeleteParams, PostParams},
};
use kubegen::{
    client::{Client, ResourceClient},
    controller::{
        Action,
        finalizer::{FinalizerError, FinalizerEvent, finalizer},
    },
    controllerutil::{
        CONDITION_FALSE, CONDITION_TRUE, CreateOrUpdateError, OperationResult, WaitError,
        await_condition, contains_finalizer, create_or_patch, create_or_update, find_condition,
        set_condition,
        wait::{is_condition_true, is_deleted},
    },
};
use kubegen_testserver::{ApiError, InProcess};
use kubegen_testserver::{FailRule, Verb};
use serde::{Deserialize, Serialize};

mod informer_support;

use informer_support::server_and_client;

const FINALIZER: &str = "example.com/cleanup";

fn data(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

fn named<K: Default + kube_core::Resource>(name: &str) -> K {
    let mut object = K::default();
    object.meta_mut().name = Some(name.into());
    object
}

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        image: Some("nginx:1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

type Never = std::convert::Infallible;

// ---------------------------------------------------------------------------------------
// create_or_update

/// controller-runtime `controllerutil_test.go` "CreateOrUpdate": "creates a new object if
/// one doesn't exists", "updates existing object", "updates only changed objects" (the
/// result is `OperationResultNone` when the mutate function changes nothing).
#[tokio::test]
async fn create_or_update_creates_then_leaves_unchanged_then_updates() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let calls = AtomicUsize::new(0);
    let set = |value: &'static str| {
        let calls = &calls;
        move |cm: &mut ConfigMap| {
            calls.fetch_add(1, Ordering::SeqCst);
            cm.data = data(&[("mode", value)]);
            // An empty label map is "unset", as apimachinery's semantic equality has it.
            cm.metadata.labels.get_or_insert_with(BTreeMap::new);
            Ok::<_, Never>(())
        }
    };

    let (created, result) = create_or_update(&cms, named("settings"), set("a"))
        .await
        .expect("create");
    assert_eq!(result, OperationResult::Created);
    assert_eq!(created.data, data(&[("mode", "a")]));
    assert!(
        created.metadata.uid.is_some(),
        "the server's copy comes back"
    );

    let (same, result) = create_or_update(&cms, named("settings"), set("a"))
        .await
        .expect("no-op");
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(
        same.metadata.resource_version, created.metadata.resource_version,
        "nothing was written"
    );

    let (updated, result) = create_or_update(&cms, named("settings"), set("b"))
        .await
        .expect("update");
    assert_eq!(result, OperationResult::Updated);
    assert_ne!(
        updated.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(
        cms.get("settings").await.expect("get").data,
        data(&[("mode", "b")])
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one mutate per call");
}

/// client-go `util/retry`: `RetryOnConflict` with `DefaultRetry` makes 5 attempts. Four
/// injected 409s on the update are absorbed (each attempt reads and mutates again); five are
/// not, and the typed error says it was a conflict.
#[tokio::test]
async fn create_or_update_converges_under_injected_conflicts() {
    let (server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    create_or_update(&cms, named("c"), |cm: &mut ConfigMap| {
        cm.data = data(&[("n", "0")]);
        Ok::<_, Never>(())
    })
    .await
    .expect("create");

    server.fail(
        FailRule::on(Verb::Update)
            .resource("configmaps")
            .code(409)
            .times(4),
    );
    let calls = AtomicUsize::new(0);
    let (_, result) = create_or_update(&cms, named("c"), |cm: &mut ConfigMap| {
        calls.fetch_add(1, Ordering::SeqCst);
        cm.data = data(&[("n", "1")]);
        Ok::<_, Never>(())
    })
    .await
    .expect("converges");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        5,
        "re-mutated on each attempt"
    );
    assert_eq!(cms.get("c").await.expect("get").data, data(&[("n", "1")]));

    server.fail(
        FailRule::on(Verb::Update)
            .resource("configmaps")
            .code(409)
            .times(5),
    );
    let err = create_or_update(&cms, named("c"), |cm: &mut ConfigMap| {
        cm.data = data(&[("n", "2")]);
        Ok::<_, Never>(())
    })
    .await
    .expect_err("bounded");
    assert!(err.is_conflict(), "{err}");
    assert_eq!(cms.get("c").await.expect("get").data, data(&[("n", "1")]));

    // A 409 on the create (a racing creator) goes the update path on the next attempt.
    server.fail(FailRule::on(Verb::Create).resource("configmaps").code(409));
    let (_, result) = create_or_update(&cms, named("fresh"), |cm: &mut ConfigMap| {
        cm.data = data(&[("n", "0")]);
        Ok::<_, Never>(())
    })
    .await
    .expect("retried create");
    assert_eq!(result, OperationResult::Created);
}

/// A real concurrent writer: between our read and our update another client changes the
/// object, so the update is a genuine 409 (kube-apiserver's optimistic concurrency on
/// resourceVersion). The retry reads the writer's change, mutates on top of it, and both
/// changes survive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_update_converges_with_a_concurrent_writer() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("shared");
    cm.data = data(&[("theirs", "0")]);
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");

    let other = cms.clone();
    let calls = AtomicUsize::new(0);
    let (result_cm, result) = create_or_update(&cms, named("shared"), |cm: &mut ConfigMap| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            // The other writer commits while our copy is in hand.
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async {
                    let mut theirs = other.get("shared").await.expect("get");
                    theirs
                        .data
                        .get_or_insert_with(BTreeMap::new)
                        .insert("theirs".into(), "1".into());
                    other
                        .update(&PostParams::default(), &theirs)
                        .await
                        .expect("their update");
                });
            });
        }
        cm.data
            .get_or_insert_with(BTreeMap::new)
            .insert("ours".into(), "1".into());
        Ok::<_, Never>(())
    })
    .await
    .expect("converges");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the conflict cost one attempt"
    );
    assert_eq!(result_cm.data, data(&[("ours", "1"), ("theirs", "1")]));
    assert_eq!(
        cms.get("shared").await.expect("get").data,
        data(&[("ours", "1"), ("theirs", "1")])
    );
}

/// Someone creates the object between our "not found" and our create: the create answers
/// 409 AlreadyExists and the next attempt goes the update path on their object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_update_takes_the_update_path_when_someone_created_it_meanwhile() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let other = cms.clone();
    let calls = AtomicUsize::new(0);
    let (cm, result) = create_or_update(&cms, named("raced"), |cm: &mut ConfigMap| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async {
                    let mut theirs = named::<ConfigMap>("raced");
                    theirs.data = data(&[("theirs", "1")]);
                    other
                        .create(&PostParams::default(), &theirs)
                        .await
                        .expect("their create");
                });
            });
        }
        cm.data
            .get_or_insert_with(BTreeMap::new)
            .insert("ours".into(), "1".into());
        Ok::<_, Never>(())
    })
    .await
    .expect("converges");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(cm.data, data(&[("ours", "1"), ("theirs", "1")]));
}

/// controller-runtime: "errors when MutateFn changes object name on creation" and "...
/// renames ... on update"; a failing mutate function writes nothing.
#[tokio::test]
async fn create_or_update_refuses_renames_and_mutate_errors() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let err = create_or_update(&cms, named("a"), |cm: &mut ConfigMap| {
        cm.metadata.name = Some("b".into());
        Ok::<_, Never>(())
    })
    .await
    .expect_err("rename on create");
    assert!(
        matches!(err, CreateOrUpdateError::KeyChanged { .. }),
        "{err}"
    );
    assert!(cms.get("a").await.expect_err("not created").is_not_found());
    assert!(cms.get("b").await.expect_err("not created").is_not_found());

    create_or_update(&cms, named("a"), |_: &mut ConfigMap| Ok::<_, Never>(()))
        .await
        .expect("create");
    let err = create_or_update(&cms, named("a"), |cm: &mut ConfigMap| {
        cm.metadata.namespace = Some("kube-system".into());
        Ok::<_, Never>(())
    })
    .await
    .expect_err("move on update");
    assert!(
        matches!(err, CreateOrUpdateError::KeyChanged { .. }),
        "{err}"
    );

    let err = create_or_update(&cms, named("a"), |_: &mut ConfigMap| {
        Err(std::io::Error::other("no"))
    })
    .await
    .expect_err("mutate error");
    assert!(matches!(err, CreateOrUpdateError::Mutate(_)), "{err}");
    let err = create_or_update(&cms, ConfigMap::default(), |_: &mut ConfigMap| {
        Ok::<_, Never>(())
    })
    .await
    .expect_err("no name");
    assert!(matches!(err, CreateOrUpdateError::MissingName));
}

// ---------------------------------------------------------------------------------------
// create_or_patch

/// controller-runtime `controllerutil_test.go` "CreateOrPatch": created, unchanged,
/// updated (spec), updatedStatusOnly, updatedStatus. A patch sends only what the mutate
/// function changed, so a field another writer set meanwhile survives.
#[tokio::test]
async fn create_or_patch_reports_each_result() {
    let (server, client) = server_and_client().await;
    let deploys: ResourceClient<Deployment> = ResourceClient::namespaced(client, "default");
    let replicas = |n: i32| {
        move |d: &mut Deployment| {
            d.spec.replicas = Some(n);
            Ok::<_, Never>(())
        }
    };

    let (_, result) = create_or_patch(&deploys, deployment("web"), replicas(2))
        .await
        .expect("create");
    assert_eq!(result, OperationResult::Created);
    let (_, result) = create_or_patch(&deploys, named("web"), replicas(2))
        .await
        .expect("no-op");
    assert_eq!(result, OperationResult::Unchanged);

    // Another writer adds a label; our spec patch must not remove it.
    let mut theirs = deploys.get("web").await.expect("get");
    theirs.metadata.labels = data(&[("team", "a")]);
    deploys
        .update(&PostParams::default(), &theirs)
        .await
        .expect("their update");
    let (patched, result) = create_or_patch(&deploys, named("web"), replicas(3))
        .await
        .expect("spec");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(patched.spec.replicas, Some(3));
    assert_eq!(patched.metadata.labels, data(&[("team", "a")]));

    let status = |observed: i64| {
        move |d: &mut Deployment| {
            d.status = Some(DeploymentStatus {
                observed_generation: Some(observed),
                replicas: Some(3),
                ..DeploymentStatus::default()
            });
            Ok::<_, Never>(())
        }
    };
    let (patched, result) = create_or_patch(&deploys, named("web"), status(2))
        .await
        .expect("status only");
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert_eq!(
        patched.status.as_ref().and_then(|s| s.observed_generation),
        Some(2)
    );

    // Both, with one injected conflict on the first patch: the attempt starts over.
    server.fail(FailRule::on(Verb::Patch).resource("deployments").code(409));
    let (patched, result) = create_or_patch(&deploys, named("web"), |d: &mut Deployment| {
        replicas(4)(d)?;
        status(3)(d)
    })
    .await
    .expect("both");
    assert_eq!(result, OperationResult::UpdatedStatus);
    assert_eq!(patched.spec.replicas, Some(4));
    assert_eq!(
        patched.status.as_ref().and_then(|s| s.observed_generation),
        Some(3)
    );
    let stored = deploys.get("web").await.expect("get");
    assert_eq!(stored.spec.replicas, Some(4));
    assert_eq!(
        stored.status.as_ref().and_then(|s| s.observed_generation),
        Some(3)
    );
    assert_eq!(stored.metadata.labels, data(&[("team", "a")]));
}

/// The patch carries the resourceVersion it was computed from: a writer committing between
/// our read and our patch makes it a 409, and the retry patches on top of their change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_patch_is_optimistically_locked() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("locked");
    cm.data = data(&[("list", "a")]);
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let other = cms.clone();
    let calls = AtomicUsize::new(0);
    let (cm, result) = create_or_patch(&cms, named("locked"), |cm: &mut ConfigMap| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async {
                    let mut theirs = other.get("locked").await.expect("get");
                    theirs.data = data(&[("list", "a,b")]);
                    other
                        .update(&PostParams::default(), &theirs)
                        .await
                        .expect("their update");
                });
            });
        }
        // Append to a value computed from what we read: with the stale copy this would
        // drop their "b".
        let list = cm
            .data
            .as_ref()
            .and_then(|d| d.get("list"))
            .cloned()
            .unwrap_or_default();
        cm.data = data(&[("list", &format!("{list},c"))]);
        Ok::<_, Never>(())
    })
    .await
    .expect("converges");
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(cm.data, data(&[("list", "a,b,c")]));
}

/// The writes an in-process server saw: `verb` plus `/subresource`, in order.
fn writes(server: &InProcess) -> Vec<String> {
    server
        .actions()
        .into_iter()
        .filter(|a| !matches!(a.request.verb.as_str(), "get" | "list" | "watch"))
        .map(|a| {
            if a.request.subresource.is_empty() {
                a.request.verb.to_string()
            } else {
                format!("{}/{}", a.request.verb, a.request.subresource)
            }
        })
        .collect()
}

/// The request log (client-go's fake-clientset actions) shows what was sent: a mutate
/// function that changes nothing semantically (an empty label map where the server has
/// none, apimachinery `equality.Semantic`) sends no write at all; a main-resource patch
/// carries the resourceVersion it was computed from.
#[tokio::test]
async fn an_unchanged_object_is_not_written_and_patches_carry_their_resource_version() {
    let server = InProcess::new();
    let cms: ResourceClient<ConfigMap> =
        ResourceClient::namespaced(Client::new(server.clone()), "default");
    let mutate = |cm: &mut ConfigMap| {
        cm.data = data(&[("k", "v")]);
        cm.metadata.labels.get_or_insert_with(BTreeMap::new);
        Ok::<_, Never>(())
    };
    create_or_update(&cms, named("quiet"), mutate)
        .await
        .expect("create");
    server.clear_actions();
    let (_, result) = create_or_update(&cms, named("quiet"), mutate)
        .await
        .expect("no-op");
    assert_eq!(result, OperationResult::Unchanged);
    let (read, result) = create_or_patch(&cms, named("quiet"), mutate)
        .await
        .expect("no-op patch");
    assert_eq!(result, OperationResult::Unchanged);
    assert!(writes(&server).is_empty(), "{:?}", writes(&server));

    create_or_patch(&cms, named("quiet"), |cm: &mut ConfigMap| {
        cm.data = data(&[("k", "w")]);
        Ok::<_, Never>(())
    })
    .await
    .expect("patch");
    let patch = server
        .actions()
        .into_iter()
        .find(|a| a.request.verb == Verb::Patch)
        .and_then(|a| a.body)
        .expect("a patch body");
    assert_eq!(
        patch,
        serde_json::json!({
            "data": {"k": "w"},
            "metadata": {"resourceVersion": read.metadata.resource_version},
        }),
        "only the change, locked to the version read"
    );
}

/// When the status patch conflicts after the main patch went through, the next attempt
/// has only the status left to patch and still reports `UpdatedStatus`
/// (controller-runtime: the result says what this call changed).
#[tokio::test]
async fn a_status_conflict_after_the_main_patch_still_reports_updated_status() {
    let server = InProcess::new();
    let deploys: ResourceClient<Deployment> =
        ResourceClient::namespaced(Client::new(server.clone()), "default");
    create_or_patch(&deploys, deployment("web"), |_: &mut Deployment| {
        Ok::<_, Never>(())
    })
    .await
    .expect("create");
    let fired = Arc::new(AtomicUsize::new(0));
    server.prepend_reactor("patch", "deployments", {
        let fired = fired.clone();
        move |action| {
            (action.request.subresource == "status" && fired.fetch_add(1, Ordering::SeqCst) == 0)
                .then(|| {
                    Err(ApiError::conflict(
                        "apps",
                        "deployments",
                        "web",
                        "the object has been modified",
                    ))
                })
        }
    });
    server.clear_actions();
    let (patched, result) = create_or_patch(&deploys, named("web"), |d: &mut Deployment| {
        d.spec.replicas = Some(5);
        d.status = Some(DeploymentStatus {
            observed_generation: Some(2),
            ..DeploymentStatus::default()
        });
        Ok::<_, Never>(())
    })
    .await
    .expect("converges");
    assert_eq!(result, OperationResult::UpdatedStatus);
    assert_eq!(
        writes(&server),
        ["patch", "patch/status", "patch/status"],
        "the main patch once, the status patch again after the conflict"
    );
    assert_eq!(patched.spec.replicas, Some(5));
    assert_eq!(patched.status.and_then(|s| s.observed_generation), Some(2));
}

// ---------------------------------------------------------------------------------------
// status conditions through the status subresource

/// A custom resource whose status holds `metav1.Condition`s, as kubebuilder scaffolds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    plural = "widgets",
    namespaced
)]
struct Widget {
    metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<WidgetSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<WidgetStatus>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct WidgetSpec {
    size: i64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conditions: Vec<Condition>,
}

const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

fn ready(status: &str, reason: &str, generation: i64) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        observed_generation: Some(generation),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
    }
}

/// apimachinery `SetStatusCondition` as a reconciler uses it: set the condition on the
/// server's copy and patch the status. The same status with a new reason keeps
/// `lastTransitionTime` (and writes only the reason); a new status moves it; setting the
/// same condition again writes nothing.
#[tokio::test]
async fn set_condition_keeps_last_transition_time_until_the_status_changes() {
    let (server, client) = server_and_client().await;
    server.load_crd_yaml(WIDGET_CRD).expect("crd");
    let widgets: ResourceClient<Widget> = ResourceClient::namespaced(client, "default");
    let mut widget = named::<Widget>("w");
    widget.spec = Some(WidgetSpec { size: 1 });
    widgets
        .create(&PostParams::default(), &widget)
        .await
        .expect("create");
    let set = |condition: Condition| {
        move |w: &mut Widget| {
            let status = w.status.get_or_insert_with(WidgetStatus::default);
            set_condition(&mut status.conditions, condition.clone());
            Ok::<_, Never>(())
        }
    };
    let transition_time = |w: &Widget| {
        w.status
            .as_ref()
            .and_then(|s| find_condition(&s.conditions, "Ready"))
            .map(|c| c.last_transition_time.clone())
            .expect("Ready condition")
    };

    let (w, result) = create_or_patch(
        &widgets,
        named("w"),
        set(ready(CONDITION_FALSE, "Creating", 1)),
    )
    .await
    .expect("first");
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    let first = transition_time(&w);

    // lastTransitionTime has one-second resolution on the wire: make a move visible.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (w, result) = create_or_patch(
        &widgets,
        named("w"),
        set(ready(CONDITION_FALSE, "Pulling", 1)),
    )
    .await
    .expect("same status");
    assert_eq!(
        result,
        OperationResult::UpdatedStatusOnly,
        "the reason changed"
    );
    assert_eq!(transition_time(&w), first, "no transition: time kept");

    let (_, result) = create_or_patch(
        &widgets,
        named("w"),
        set(ready(CONDITION_FALSE, "Pulling", 1)),
    )
    .await
    .expect("again");
    assert_eq!(result, OperationResult::Unchanged);

    let (w, result) = create_or_patch(&widgets, named("w"), set(ready(CONDITION_TRUE, "Up", 1)))
        .await
        .expect("transition");
    assert_eq!(result, OperationResult::UpdatedStatusOnly);
    assert!(
        transition_time(&w) > first,
        "the status changed: time moved"
    );
    let stored = widgets.get("w").await.expect("get");
    assert!(kubegen::controllerutil::is_condition_true(
        &stored.status.expect("status").conditions,
        "Ready"
    ));
}

// ---------------------------------------------------------------------------------------
// await_condition

/// kube-runtime `wait::await_condition`: resolves with the object once the condition holds
/// on a later change (seen through the watch), and at once when it already holds.
#[tokio::test]
async fn await_condition_resolves_on_a_later_change() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("gate");
    cm.data = data(&[("open", "no")]);
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let is_open = |cm: Option<&ConfigMap>| {
        cm.and_then(|c| c.data.as_ref())
            .and_then(|d| d.get("open"))
            .is_some_and(|v| v == "yes")
    };
    let waiter = tokio::spawn(await_condition(
        cms.clone(),
        "gate",
        is_open,
        Duration::from_secs(10),
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished(), "the condition does not hold yet");
    let mut current = cms.get("gate").await.expect("get");
    current.data = data(&[("open", "yes")]);
    cms.update(&PostParams::default(), &current)
        .await
        .expect("open");
    let opened = waiter
        .await
        .expect("join")
        .expect("resolved")
        .expect("exists");
    assert_eq!(opened.data, data(&[("open", "yes")]));

    let again = await_condition(cms, "gate", is_open, Duration::from_secs(1))
        .await
        .expect("already holds");
    assert!(again.is_some());
}

/// `conditions::is_deleted(uid)`: the wait resolves with `None` once the object is gone
/// (its finalizer removed after the delete, so the watch sees a Modified then a Deleted).
#[tokio::test]
async fn await_condition_resolves_on_deletion() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("doomed");
    cm.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let uid = created.metadata.uid.clone().expect("uid");
    let waiter = tokio::spawn({
        let cms = cms.clone();
        async move { await_condition(cms, "doomed", is_deleted(&uid), Duration::from_secs(10)).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cms.delete("doomed", &DeleteParams::default())
        .await
        .expect("delete");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiter.is_finished(), "held by its finalizer");
    let mut held = cms.get("doomed").await.expect("still there");
    held.metadata.finalizers = None;
    cms.update(&PostParams::default(), &held)
        .await
        .expect("release");
    let gone = waiter.await.expect("join").expect("resolved");
    assert!(gone.is_none());
}

/// The deadline is a typed error naming the object; a missing object is not an error
/// (the condition sees `None`).
#[tokio::test]
async fn await_condition_times_out_with_a_typed_error() {
    let (_server, client) = server_and_client().await;
    let deploys: ResourceClient<Deployment> = ResourceClient::namespaced(client, "default");
    deploys
        .create(&PostParams::default(), &deployment("slow"))
        .await
        .expect("create");
    let started = tokio::time::Instant::now();
    let err = await_condition(
        deploys,
        "slow",
        is_condition_true("Available"),
        Duration::from_millis(300),
    )
    .await
    .expect_err("never available on a server without controllers");
    assert!(
        matches!(&err, WaitError::Timeout { name, timeout } if name == "slow" && *timeout == Duration::from_millis(300)),
        "{err}"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
}

/// A watch cut off and history compacted meanwhile (410 Gone on resume): the wait lists
/// again and still sees the change.
#[tokio::test]
async fn await_condition_survives_dropped_watches_and_compaction() {
    let (server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    cms.create(&PostParams::default(), &named::<ConfigMap>("later"))
        .await
        .expect("create");
    let waiter = tokio::spawn(await_condition(
        cms.clone(),
        "later",
        |cm: Option<&ConfigMap>| cm.is_some_and(|c| c.data.is_some()),
        Duration::from_secs(10),
    ));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let other = named::<ConfigMap>("noise");
    cms.create(&PostParams::default(), &other)
        .await
        .expect("noise");
    server.compact();
    server.drop_watches();
    let mut current = cms.get("later").await.expect("get");
    current.data = data(&[("done", "1")]);
    cms.update(&PostParams::default(), &current)
        .await
        .expect("update");
    let seen = waiter
        .await
        .expect("join")
        .expect("resolved")
        .expect("exists");
    assert_eq!(seen.data, data(&[("done", "1")]));
}

// ---------------------------------------------------------------------------------------
// finalizer

#[derive(Default)]
struct Calls {
    applies: AtomicUsize,
    cleanups: AtomicUsize,
}

impl Calls {
    fn applies(&self) -> usize {
        self.applies.load(Ordering::SeqCst)
    }

    fn cleanups(&self) -> usize {
        self.cleanups.load(Ordering::SeqCst)
    }
}

/// A reconciler counting its events; cleanup fails while `fail_cleanup` says so.
async fn reconcile(
    calls: &Calls,
    fail_cleanup: bool,
    event: FinalizerEvent<ConfigMap>,
) -> Result<Action, std::io::Error> {
    match event {
        FinalizerEvent::Apply(_) => {
            calls.applies.fetch_add(1, Ordering::SeqCst);
            Ok(Action::requeue_after(Duration::from_secs(300)))
        }
        FinalizerEvent::Cleanup(obj) => {
            assert!(obj.metadata.deletion_timestamp.is_some());
            if fail_cleanup {
                return Err(std::io::Error::other("the external system is down"));
            }
            calls.cleanups.fetch_add(1, Ordering::SeqCst);
            Ok(Action::done())
        }
    }
}

async fn run(
    cms: &ResourceClient<ConfigMap>,
    obj: Arc<ConfigMap>,
    calls: &Calls,
    fail_cleanup: bool,
) -> Result<Action, FinalizerError<std::io::Error>> {
    finalizer(cms, FINALIZER, obj, |event| {
        reconcile(calls, fail_cleanup, event)
    })
    .await
}

async fn fresh(cms: &ResourceClient<ConfigMap>, name: &str) -> Arc<ConfigMap> {
    Arc::new(cms.get(name).await.expect("get"))
}

/// kube-runtime `finalizer.rs`, "Expected Flow": the finalizer is added before any Apply;
/// Apply runs with it in place; a delete leaves the object (the test server honours
/// finalizers: deletionTimestamp set, object kept, as kube-apiserver's
/// `registry/generic/registry/store.go` `Delete` does); Cleanup runs, the finalizer is
/// removed and the object goes.
#[tokio::test]
async fn finalizer_adds_then_applies_then_cleans_up_and_lets_the_object_go() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("db");
    cm.metadata.finalizers = Some(vec!["other.io/keep".into()]);
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let calls = Calls::default();

    let action = run(&cms, Arc::new(created), &calls, false)
        .await
        .expect("add");
    assert_eq!(action, Action::done());
    assert_eq!(
        calls.applies(),
        0,
        "no Apply before the finalizer is stored"
    );
    let stored = fresh(&cms, "db").await;
    assert_eq!(
        stored.metadata.finalizers,
        Some(vec!["other.io/keep".to_owned(), FINALIZER.to_owned()]),
        "appended, the other finalizer kept"
    );

    let action = run(&cms, stored.clone(), &calls, false)
        .await
        .expect("apply");
    assert_eq!(action, Action::requeue_after(Duration::from_secs(300)));
    assert_eq!(calls.applies(), 1);
    run(&cms, stored, &calls, false).await.expect("apply again");
    assert_eq!(calls.applies(), 2);

    cms.delete("db", &DeleteParams::default())
        .await
        .expect("delete");
    let deleting = fresh(&cms, "db").await;
    assert!(
        deleting.metadata.deletion_timestamp.is_some(),
        "held by finalizers"
    );
    run(&cms, deleting, &calls, false).await.expect("cleanup");
    assert_eq!(calls.cleanups(), 1);
    let left = fresh(&cms, "db").await;
    assert_eq!(
        left.metadata.finalizers,
        Some(vec!["other.io/keep".to_owned()]),
        "only ours removed"
    );

    // Deleting without our finalizer: nothing to do.
    run(&cms, left.clone(), &calls, false)
        .await
        .expect("not ours");
    assert_eq!((calls.applies(), calls.cleanups()), (2, 1));

    let mut last = (*left).clone();
    last.metadata.finalizers = None;
    cms.update(&PostParams::default(), &last)
        .await
        .expect("release");
    assert!(cms.get("db").await.expect_err("gone").is_not_found());
}

/// A failing Cleanup returns the error (the controller retries it with backoff) and keeps
/// the finalizer; the next call cleans up and the object goes.
#[tokio::test]
async fn a_failing_cleanup_keeps_the_finalizer_and_is_retried() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("bucket");
    cm.metadata.finalizers = Some(vec![FINALIZER.into()]);
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    cms.delete("bucket", &DeleteParams::default())
        .await
        .expect("delete");
    let calls = Calls::default();

    let err = run(&cms, fresh(&cms, "bucket").await, &calls, true)
        .await
        .expect_err("cleanup fails");
    assert!(matches!(err, FinalizerError::CleanupFailed(_)), "{err}");
    assert!(contains_finalizer(&*fresh(&cms, "bucket").await, FINALIZER));

    run(&cms, fresh(&cms, "bucket").await, &calls, false)
        .await
        .expect("cleanup");
    assert_eq!(calls.cleanups(), 1);
    assert!(cms.get("bucket").await.expect_err("gone").is_not_found());
}

/// Cleanup runs exactly once when the flow is called twice with the same stale object (a
/// requeue racing the cache): the second call reads the object fresh, finds it gone (or
/// the finalizer gone, when another finalizer still holds it) and does nothing.
#[tokio::test]
async fn cleanup_runs_once_for_a_stale_object_seen_twice() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let calls = Calls::default();
    for (name, others) in [("alone", vec![]), ("shared", vec!["other.io/keep"])] {
        let mut cm = named::<ConfigMap>(name);
        let mut finalizers: Vec<String> = others.iter().map(|f| (*f).to_owned()).collect();
        finalizers.push(FINALIZER.into());
        cm.metadata.finalizers = Some(finalizers);
        cms.create(&PostParams::default(), &cm)
            .await
            .expect("create");
        cms.delete(name, &DeleteParams::default())
            .await
            .expect("delete");
        let stale = fresh(&cms, name).await;
        let before = calls.cleanups();
        run(&cms, stale.clone(), &calls, false)
            .await
            .expect("first");
        let second = run(&cms, stale, &calls, false).await.expect("second");
        assert_eq!(second, Action::done());
        assert_eq!(calls.cleanups() - before, 1, "{name}: cleanup ran once");
    }
    assert!(cms.get("alone").await.expect_err("gone").is_not_found());
    assert!(!contains_finalizer(
        &*fresh(&cms, "shared").await,
        FINALIZER
    ));
}

/// The finalizer patches are guarded by resourceVersion: adding the finalizer from a stale
/// copy conflicts instead of overwriting the newer finalizer list; a conflict while removing
/// it after a successful Cleanup is retried within the call, without running Cleanup again.
#[tokio::test]
async fn finalizer_writes_are_guarded_and_removal_conflicts_do_not_rerun_cleanup() {
    let (server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let created = cms
        .create(&PostParams::default(), &named::<ConfigMap>("guarded"))
        .await
        .expect("create");
    let mut theirs = created.clone();
    theirs.metadata.finalizers = Some(vec!["other.io/keep".into()]);
    cms.update(&PostParams::default(), &theirs)
        .await
        .expect("their finalizer");
    let calls = Calls::default();
    let err = run(&cms, Arc::new(created), &calls, false)
        .await
        .expect_err("stale add");
    match &err {
        FinalizerError::AddFinalizer(e) => assert!(e.is_conflict(), "{e}"),
        other => panic!("expected a conflict, got {other}"),
    }
    assert_eq!(
        fresh(&cms, "guarded").await.metadata.finalizers,
        Some(vec!["other.io/keep".to_owned()]),
        "their finalizer kept, ours not added"
    );

    run(&cms, fresh(&cms, "guarded").await, &calls, false)
        .await
        .expect("add");
    cms.delete("guarded", &DeleteParams::default())
        .await
        .expect("delete");
    server.fail(
        FailRule::on(Verb::Patch)
            .resource("configmaps")
            .code(409)
            .times(2),
    );
    run(&cms, fresh(&cms, "guarded").await, &calls, false)
        .await
        .expect("cleanup");
    assert_eq!(calls.cleanups(), 1);
    assert_eq!(
        fresh(&cms, "guarded").await.metadata.finalizers,
        Some(vec!["other.io/keep".to_owned()])
    );
}

/// Kubernetes does not deduplicate finalizers (kube-rs #964): a finalizer listed twice is
/// removed in full after one Cleanup, or the object would stay and Cleanup come back.
#[tokio::test]
async fn a_duplicated_finalizer_is_removed_in_full() {
    let (_server, client) = server_and_client().await;
    let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    let mut cm = named::<ConfigMap>("twice");
    cm.metadata.finalizers = Some(vec![
        FINALIZER.into(),
        "other.io/keep".into(),
        FINALIZER.into(),
    ]);
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    cms.delete("twice", &DeleteParams::default())
        .await
        .expect("delete");
    let calls = Calls::default();
    run(&cms, fresh(&cms, "twice").await, &calls, false)
        .await
        .expect("cleanup");
    run(&cms, fresh(&cms, "twice").await, &calls, false)
        .await
        .expect("nothing left to do");
    assert_eq!(calls.cleanups(), 1);
    assert_eq!(
        fresh(&cms, "twice").await.metadata.finalizers,
        Some(vec!["other.io/keep".to_owned()])
    );
}

fn assert_send<T: Send>(_: &T) {}

/// A controller runs reconciles on `tokio::spawn`, so every helper's future must be `Send`
/// (when the mutate function and reconcile future are).
#[test]
fn the_helpers_futures_are_send() {
    let cms: ResourceClient<ConfigMap> =
        ResourceClient::namespaced(Client::new(InProcess::new()), "default");
    let mutate = |_: &mut ConfigMap| Ok::<_, Never>(());
    assert_send(&create_or_update(&cms, named("a"), mutate));
    assert_send(&create_or_patch(&cms, named("a"), mutate));
    assert_send(&await_condition(
        cms.clone(),
        "a",
        is_deleted("uid"),
        Duration::from_secs(1),
    ));
    assert_send(&finalizer(
        &cms,
        FINALIZER,
        Arc::new(named::<ConfigMap>("a")),
        |_event| async { Ok::<_, std::io::Error>(Action::done()) },
    ));
}
