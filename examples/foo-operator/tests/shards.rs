//! Sharded replicas of the operator binary against one test server (issue 44, item 6(b)):
//! three `foo-operator --shards` processes share 1,000 Foos, each Foo's Deployment is
//! created once and carries its Foo's shard label; a replica killed with SIGKILL loses its
//! Foos to the others once its Lease expires (they reconcile them: a changed replica count
//! reaches the Deployments); a fourth replica takes its share through drains.
//!
//! What the processes did is read from the server's side: the Foos' and Deployments'
//! labels (an informer of each in the test), the audit log's create requests, and the
//! replicas' `/readyz` and `/metrics`.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use foo_operator::{CRD_YAML, Foo};
use k8s_openapi::api::apps::v1::Deployment;
use kube_core::params::{Patch, PatchParams, PostParams};
use kubegen::{
    cache::{ResourceEventHandlerFuncs, SharedIndexInformer},
    client::{Client, ResourceClient},
    informers::SharedInformerFactory,
};
use kubegen_testserver::{ClusterConfig, TestServer};
use parking_lot::Mutex;
use serde_json::json;
use tokio::task::JoinSet;

mod support;

use support::{Replica, get, until};

const N: usize = 1_000;
const RING: &str = "foo-operator";
const SHARD: &str = "shard.kubegen.io/foo-operator";
const DRAIN: &str = "drain.shard.kubegen.io/foo-operator";
/// The Lease timings every replica runs with: a dead replica's Foos move 3 s after its
/// last renewal.
const LEASE: Duration = Duration::from_secs(3);
const RETRY: Duration = Duration::from_millis(250);
const TIMINGS: [&str; 6] = [
    "--lease-duration",
    "3s",
    "--renew-deadline",
    "2s",
    "--retry-period",
    "250ms",
];
const WAIT: Duration = Duration::from_secs(120);

fn name(i: usize) -> String {
    format!("foo-{i:04}")
}

fn start(kubeconfig: &Path, identity: &str) -> Replica {
    let mut args = vec!["--shards", "--workers", "4"];
    args.extend(TIMINGS);
    support::start(kubeconfig, identity, &args, "warn")
}

fn label<'a>(meta: &'a kube_core::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

/// What the test's informers saw happen to Foos and Deployments.
#[derive(Default)]
struct Seen {
    /// Deployments added, by name (each is created once: never two adds).
    deployment_adds: HashMap<String, usize>,
    /// Foos asked to drain, by name, when the drain label appeared.
    drains: Vec<(Instant, String)>,
    /// Foos whose shard label changed from one member to another or to none, when.
    relabels: Vec<(Instant, String, Option<String>, Option<String>)>,
}

struct Observer {
    foos: SharedIndexInformer<Foo>,
    deployments: SharedIndexInformer<Deployment>,
    seen: Arc<Mutex<Seen>>,
    factory: SharedInformerFactory,
}

impl Observer {
    async fn start(client: &Client) -> Observer {
        let factory = SharedInformerFactory::builder(client.clone()).build();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let foos = factory.informer_for::<Foo>();
        let sink = seen.clone();
        foos.add_event_handler(ResourceEventHandlerFuncs::<Foo>::new().update_func(
            move |old, new| {
                let (was, is) = (label(&old.metadata, SHARD), label(&new.metadata, SHARD));
                let now = Instant::now();
                let name = new.metadata.name.clone().unwrap_or_default();
                let mut seen = sink.lock();
                if label(&new.metadata, DRAIN).is_some() && label(&old.metadata, DRAIN).is_none() {
                    seen.drains.push((now, name.clone()));
                }
                if was != is {
                    let (was, is) = (was.map(str::to_owned), is.map(str::to_owned));
                    seen.relabels.push((now, name, was, is));
                }
            },
        ))
        .expect("Foo handler");
        let deployments = factory.informer_for::<Deployment>();
        let sink = seen.clone();
        deployments
            .add_event_handler(ResourceEventHandlerFuncs::<Deployment>::new().add_func(
                move |d, _| {
                    let name = d.metadata.name.clone().unwrap_or_default();
                    *sink.lock().deployment_adds.entry(name).or_default() += 1;
                },
            ))
            .expect("Deployment handler");
        factory.start();
        until("the test's informers synced", WAIT, || async {
            foos.has_synced() && deployments.has_synced()
        })
        .await;
        Observer {
            foos,
            deployments,
            seen,
            factory,
        }
    }

    /// Each Foo's shard label (empty: none), by name.
    fn assignments(&self) -> BTreeMap<String, String> {
        self.foos
            .indexer()
            .list()
            .iter()
            .map(|f| {
                let name = f.metadata.name.clone().unwrap_or_default();
                (name, label(&f.metadata, SHARD).unwrap_or("").to_owned())
            })
            .collect()
    }

    /// Whether every Foo is assigned to one of `members` (each holding some), none is
    /// asked to drain, each has been reconciled (it has a status) and has its Deployment,
    /// which carries the Foo's shard label and `replicas` (when given, for the Foos of
    /// `which`).
    fn settled(&self, members: &[&str], replicas: Option<(i32, &BTreeSet<String>)>) -> bool {
        let foos = self.foos.indexer().list();
        if foos.len() != N {
            return false;
        }
        let deployments: HashMap<String, Arc<Deployment>> = self
            .deployments
            .indexer()
            .list()
            .into_iter()
            .map(|d| (d.metadata.name.clone().unwrap_or_default(), d))
            .collect();
        let mut spread = BTreeSet::new();
        for item in &foos {
            let meta = &item.metadata;
            let name = meta.name.clone().unwrap_or_default();
            let Some(member) = label(meta, SHARD) else {
                return false;
            };
            if !members.contains(&member) || label(meta, DRAIN).is_some() {
                return false;
            }
            spread.insert(member);
            if item.status.as_ref().is_none_or(|s| s.conditions.is_empty()) {
                return false;
            }
            let Some(deployment) = deployments.get(&name) else {
                return false;
            };
            if label(&deployment.metadata, SHARD) != Some(member) {
                return false;
            }
            if let Some((replicas, which)) = replicas
                && which.contains(&name)
                && deployment.spec.replicas != Some(replicas)
            {
                return false;
            }
        }
        spread.len() == members.len()
    }
}

/// Sets `spec.replicas` of the Foos `names`.
async fn scale(client: &Client, names: &BTreeSet<String>, replicas: i32) {
    let mut tasks = JoinSet::new();
    for chunk in names.iter().cloned().collect::<Vec<_>>().chunks(50) {
        let (client, chunk) = (client.clone(), chunk.to_vec());
        tasks.spawn(async move {
            let foos = ResourceClient::<Foo>::namespaced(client, "default");
            let patch = Patch::Merge(json!({"spec": {"replicas": replicas}}));
            for name in chunk {
                foos.patch(&name, &PatchParams::default(), &patch)
                    .await
                    .expect("scale a Foo");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("joined");
    }
}

/// Create requests for Deployments the server answered, and how many succeeded.
fn deployment_creates(server: &TestServer) -> (usize, usize) {
    let creates: Vec<_> = server
        .audit_events()
        .into_iter()
        .filter(|e| {
            e.verb == "create"
                && e.object_ref
                    .as_ref()
                    .is_some_and(|r| r.resource == "deployments" && r.subresource.is_empty())
        })
        .collect();
    let ok = creates
        .iter()
        .filter(|e| e.response_status.as_ref().is_some_and(|s| s.code == 201))
        .count();
    (creates.len(), ok)
}

/// The value of the first series of `/metrics` that starts with `series`.
fn metric(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The replica whose `/readyz` says it shards now, and that report.
async fn sharder<'a>(replicas: &[&'a Replica]) -> Option<(&'a Replica, String)> {
    for replica in replicas {
        let (status, body) = get(&replica.probes, "/readyz").await;
        if status == 200 && body.contains("sharder here") {
            return Some((replica, body));
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sharded_replicas_share_1000_foos_survive_a_kill_and_take_in_a_fourth() {
    // An API server alone (no Deployment controller: the Deployments stay as written).
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .audit()
        .start()
        .await
        .expect("server");
    server.load_crd_yaml(CRD_YAML).expect("CRD");
    let dir = std::env::temp_dir().join(format!("foo-operator-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let client = server.client().expect("client");

    let mut tasks = JoinSet::new();
    for chunk in (0..N).collect::<Vec<_>>().chunks(50) {
        let (client, chunk) = (client.clone(), chunk.to_vec());
        tasks.spawn(async move {
            let foos = ResourceClient::<Foo>::namespaced(client, "default");
            for i in chunk {
                let object = Foo::for_deployment(&name(i), &name(i), 1);
                foos.create(&PostParams::default(), &object)
                    .await
                    .expect("create a Foo");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("joined");
    }
    let observer = Observer::start(&client).await;

    // Three replicas join the ring; every Foo gets one of them and its Deployment.
    let began = Instant::now();
    let mut replicas: BTreeMap<&str, Replica> = ["a", "b", "c"]
        .into_iter()
        .map(|id| (id, start(&kubeconfig, id)))
        .collect();
    until("1,000 Foos reconciled by a, b and c", WAIT, || async {
        observer.settled(&["a", "b", "c"], None)
    })
    .await;
    eprintln!(
        "three replicas reconciled {N} Foos in {:.1} s",
        began.elapsed().as_secs_f64()
    );
    let (attempts, created) = deployment_creates(&server);
    assert_eq!(
        (attempts, created),
        (N, N),
        "Deployment create requests (all, successful)"
    );
    for replica in replicas.values() {
        let (status, body) = get(&replica.probes, "/readyz").await;
        assert_eq!(status, 200, "{}: {body}", replica.identity);
        let member = format!(
            "[+]shard-ring ok: member {} of ring {RING}",
            replica.identity
        );
        assert!(body.contains(&member), "{body}");
    }
    let all: Vec<&Replica> = replicas.values().collect();
    let (sharder_replica, report) = sharder(&all).await.expect("one replica shards");
    assert!(
        report.contains("members [a, b, c]")
            && report.contains("unassigned 0")
            && report.contains("drains in flight 0"),
        "{report}"
    );
    let victim = sharder_replica.identity.clone();

    // SIGKILL the sharder: no release. Its Foos are scaled at once; nobody reconciles them
    // until its Lease expires and a new sharder hands them to the others.
    let assigned = observer.assignments();
    let orphans: BTreeSet<String> = assigned
        .iter()
        .filter(|(_, m)| **m == victim)
        .map(|(n, _)| n.clone())
        .collect();
    assert!(!orphans.is_empty(), "{victim} held no Foo");
    let mut killed = replicas.remove(victim.as_str()).expect("victim");
    let killed_at = Instant::now();
    killed.child.kill().expect("SIGKILL");
    killed.child.wait().expect("reaped");
    scale(&client, &orphans, 3).await;
    let survivors: Vec<&str> = replicas.keys().copied().collect();
    until(
        "the killed replica's Foos reconciled by the others",
        WAIT,
        || async { observer.settled(&survivors, Some((3, &orphans))) },
    )
    .await;
    let first_move = observer
        .seen
        .lock()
        .relabels
        .iter()
        .filter(|(at, name, was, _)| {
            *at > killed_at && orphans.contains(name) && was.as_deref() == Some(victim.as_str())
        })
        .map(|(at, ..)| *at - killed_at)
        .min()
        .expect("the orphans moved");
    eprintln!(
        "killed {victim} ({} Foos): first moved after {:.1} s, all reconciled after {:.1} s",
        orphans.len(),
        first_move.as_secs_f64(),
        killed_at.elapsed().as_secs_f64()
    );
    // Its last renewal was at most a retry period before the kill.
    assert!(
        first_move + RETRY + Duration::from_millis(100) >= LEASE,
        "{victim}'s Foos moved {first_move:?} after the kill, before its Lease expired"
    );
    assert_eq!(
        deployment_creates(&server),
        (N, N),
        "a Deployment created again"
    );
    let all: Vec<&Replica> = replicas.values().collect();
    let (new_sharder, _) = sharder(&all).await.expect("a new sharder");
    let (_, metrics) = get(&new_sharder.metrics, "/metrics").await;
    let moves = metric(
        &metrics,
        r#"kubegen_shard_ring_moves_total{ring="foo-operator"}"#,
    );
    assert!(
        moves.is_some_and(|m| m >= orphans.len() as f64),
        "moves {moves:?} < {}:\n{metrics}",
        orphans.len()
    );

    // A fourth replica: its share moves to it through drains, and it reconciles it.
    let drains_before = observer.seen.lock().drains.len();
    let joined_at = Instant::now();
    replicas.insert("d", start(&kubeconfig, "d"));
    let mut members = survivors.clone();
    members.push("d");
    until("d took its share", WAIT, || async {
        observer.settled(&members, None)
    })
    .await;
    let taken: BTreeSet<String> = observer
        .assignments()
        .into_iter()
        .filter(|(_, m)| m == "d")
        .map(|(n, _)| n)
        .collect();
    let drained: BTreeSet<String> = observer.seen.lock().drains[drains_before..]
        .iter()
        .map(|(_, n)| n.clone())
        .collect();
    eprintln!(
        "d took {} Foos ({} drains) in {:.1} s",
        taken.len(),
        drained.len(),
        joined_at.elapsed().as_secs_f64()
    );
    assert!(
        taken.is_subset(&drained),
        "Foos moved to d without a drain: {:?}",
        taken.difference(&drained).collect::<Vec<_>>()
    );
    scale(&client, &taken, 5).await;
    until("d reconciles its Foos", WAIT, || async {
        observer.settled(&members, Some((5, &taken)))
    })
    .await;
    let (_, metrics) = get(&replicas["d"].metrics, "/metrics").await;
    let reconciled = metric(
        &metrics,
        r#"controller_runtime_reconcile_total{controller="foo-operator",result="success"}"#,
    );
    assert!(
        reconciled.is_some_and(|n| n >= taken.len() as f64),
        "{metrics}"
    );
    let all: Vec<&Replica> = replicas.values().collect();
    let (_, report) = sharder(&all).await.expect("a sharder");
    assert!(
        report.contains(&format!("d={}", taken.len())) && report.contains("drains in flight 0"),
        "{report}"
    );

    // Each Deployment was created once, and no replica lost its membership.
    assert_eq!(
        deployment_creates(&server),
        (N, N),
        "a Deployment created again"
    );
    let adds = observer.seen.lock().deployment_adds.clone();
    assert_eq!(adds.len(), N);
    assert!(adds.values().all(|n| *n == 1), "a Deployment added twice");
    for replica in replicas.values_mut() {
        assert!(
            replica.child.try_wait().expect("status").is_none(),
            "{} exited: {:?}",
            replica.identity,
            replica.log.lock().iter().rev().take(20).collect::<Vec<_>>()
        );
    }
    observer.factory.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
