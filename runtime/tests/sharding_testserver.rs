//! Sharded managers against the test server (issue 44): replicas join a ring on their own
//! Leases, the sharder spreads ConfigMaps over them by label, owned Secrets follow their
//! owner, a clean stop hands a member's objects over at once, a crash after its Lease
//! expires, a new member takes its share through the drain handover, and no object is
//! ever reconciled by two replicas at once.
//!
//! The Lease timing rules are client-go's `tools/leaderelection/leaderelection.go`
//! (a Lease is valid for `leaseDurationSeconds` after its holder's last observed renewal;
//! a holder that cannot renew within its renew deadline stops); a label-selected watch
//! delivers an object that stops matching as DELETED (kube-apiserver's
//! `staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go`, `convertToWatchEvent`).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube_core::{
    ObjectMeta, Resource,
    params::{ListParams, PostParams},
};
use kubegen::{
    client::{Client, ResourceClient},
    controller::Action,
    controllerutil::set_controller_reference,
    leaderelection::LeaderElectionConfig,
    manager::{Manager, ManagerError, ShardRingOptions},
    sharding::ShardRing,
};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod informer_support;

use informer_support::{cm, eventually, http_get, server_and_client};

const WAIT: Duration = Duration::from_secs(20);
const RING: &str = "cms";
const SHARD: &str = "shard.kubegen.io/cms";
const DRAIN: &str = "drain.shard.kubegen.io/cms";

fn ring_options(identity: &str) -> ShardRingOptions {
    ShardRingOptions {
        namespace: "default".into(),
        ring: RING.into(),
        identity: identity.into(),
        config: LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_millis(1500),
            retry_period: Duration::from_millis(200),
            ..LeaderElectionConfig::default()
        },
    }
}

/// Every reconcile, and whether two replicas ever reconciled one object at once.
#[derive(Default)]
struct Log {
    reconciles: Mutex<Vec<(String, String)>>,
    running: Mutex<HashMap<String, BTreeSet<String>>>,
    overlaps: AtomicUsize,
    secrets_created: AtomicUsize,
}

struct Ctx {
    identity: String,
    log: Arc<Log>,
    client: Client,
    ring: ShardRing,
}

async fn reconcile(obj: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, kubegen::client::Error> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    {
        let mut running = ctx.log.running.lock();
        let set = running.entry(name.clone()).or_default();
        set.insert(ctx.identity.clone());
        if set.len() > 1 {
            ctx.log.overlaps.fetch_add(1, Ordering::SeqCst);
        }
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    // The owned Secret carries its owner's shard label, so it lands in the same cache.
    let secrets = ResourceClient::<Secret>::namespaced(ctx.client.clone(), "default");
    let mut secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some("default".into()),
            labels: Some(ctx.ring.owner_labels(obj.meta())),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    set_controller_reference(obj.as_ref(), &mut secret).expect("owner reference");
    let result = match secrets.create(&PostParams::default(), &secret).await {
        Ok(_) => {
            ctx.log.secrets_created.fetch_add(1, Ordering::SeqCst);
            Ok(Action::done())
        }
        Err(error) if error.is_already_exists() => Ok(Action::done()),
        Err(error) => Err(error),
    };
    if let Some(set) = ctx.log.running.lock().get_mut(&name) {
        set.remove(&ctx.identity);
    }
    ctx.log.reconciles.lock().push((ctx.identity.clone(), name));
    result
}

/// A sharded manager `identity` running a ConfigMap controller that owns Secrets.
fn replica(client: &Client, identity: &str, log: &Arc<Log>) -> (Manager, String) {
    let mut manager = Manager::builder(client.clone())
        .shard_ring(ring_options(identity))
        .probe_address(([127, 0, 0, 1], 0).into())
        .build()
        .expect("manager");
    let controller = manager
        .controller::<ConfigMap>()
        .named("cm")
        .owns::<Secret>()
        .build();
    let ctx = Arc::new(Ctx {
        identity: identity.to_owned(),
        log: log.clone(),
        client: client.clone(),
        ring: manager.shard_ring().expect("sharded").clone(),
    });
    let probes = format!("http://{}", manager.probe_addr().expect("probe"));
    manager.add_controller(controller, reconcile, ctx);
    (manager, probes)
}

struct Running {
    stop: CancellationToken,
    task: JoinHandle<Result<(), ManagerError>>,
    probes: String,
}

/// A TCP proxy to `target` that [`cut`](CancellationToken::cancel) partitions: it stops
/// accepting and drops every connection (a replica cut off from the API server).
async fn partitionable(target: std::net::SocketAddr) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let cut = CancellationToken::new();
    let stop = cut.clone();
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            let Ok((mut inbound, _)) = accepted else {
                continue;
            };
            let stop = stop.clone();
            tokio::spawn(async move {
                let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                tokio::select! {
                    () = stop.cancelled() => {}
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                }
            });
        }
    });
    (url, cut)
}

fn start(client: &Client, identity: &str, log: &Arc<Log>) -> Running {
    let (manager, probes) = replica(client, identity, log);
    let stop = CancellationToken::new();
    let task = tokio::spawn(manager.run(stop.clone()));
    Running { stop, task, probes }
}

/// The shard label of every ConfigMap, and whether any still carries a drain label.
async fn assignments(client: &Client) -> (BTreeMap<String, String>, bool) {
    let list = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .expect("list");
    let mut drains = false;
    let mut out = BTreeMap::new();
    for cm in list.items {
        let labels = cm.metadata.labels.unwrap_or_default();
        drains |= labels.contains_key(DRAIN);
        out.insert(
            cm.metadata.name.unwrap_or_default(),
            labels.get(SHARD).cloned().unwrap_or_default(),
        );
    }
    (out, drains)
}

/// Waits until every ConfigMap is assigned to one of `members` (each holding some) and no
/// drain is in flight.
async fn settled(client: &Client, members: &[&str], n: usize) -> BTreeMap<String, String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (assigned, drains) = assignments(client).await;
        let spread: BTreeSet<&str> = assigned.values().map(String::as_str).collect();
        let want: BTreeSet<&str> = members.iter().copied().collect();
        if assigned.len() == n && !drains && spread == want {
            return assigned;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never settled on {members:?}: {assigned:?} (drains: {drains})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn readyz(probes: &str) -> (u16, String) {
    http_get(format!("{probes}/readyz")).await
}

/// Three replicas share 60 ConfigMaps; a clean stop and a crash move a member's share to
/// the others; a fourth member takes its share through drains; each Secret is created
/// once; no ConfigMap is ever reconciled by two replicas at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_objects_and_hand_them_over_safely() {
    let (server, client) = server_and_client().await;
    const N: usize = 60;
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for i in 0..N {
        cms.create(&PostParams::default(), &cm(&format!("cm-{i}")))
            .await
            .expect("create");
    }
    let log = Arc::new(Log::default());
    let (b_url, partition_b) = partitionable(server.addr()).await;
    let b_client = Client::try_from_config(
        kubegen::client::Config::new(b_url.parse().expect("url")).with_rate_limit(-1.0, 0),
    )
    .expect("client");
    let a = start(&client, "a", &log);
    let b = start(&b_client, "b", &log);
    let c = start(&client, "c", &log);

    // Every object assigned to one of the three, reconciled by its member only.
    let assigned = settled(&client, &["a", "b", "c"], N).await;
    eventually("every ConfigMap reconciled by its member", WAIT, || {
        let reconciles = log.reconciles.lock();
        assigned
            .iter()
            .all(|(name, member)| reconciles.iter().any(|(by, n)| by == member && n == name))
    })
    .await;
    for (by, name) in log.reconciles.lock().iter() {
        // Before the first assignment settles nobody reconciles an unassigned object.
        assert!(
            assigned.contains_key(name),
            "{by} reconciled unknown {name}"
        );
    }
    eventually("each Secret created once", WAIT, || {
        log.secrets_created.load(Ordering::SeqCst) == N
    })
    .await;
    let (status, body) = readyz(&a.probes).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("[+]shard-ring ok: member a of ring cms"),
        "{body}"
    );

    // Owned Secrets follow their owner's assignment.
    let secrets = ResourceClient::<Secret>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .expect("secrets");
    for secret in &secrets.items {
        let name = secret.metadata.name.clone().unwrap_or_default();
        let label = secret
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SHARD))
            .cloned();
        assert_eq!(label.as_ref(), assigned.get(&name), "secret {name}");
    }

    // A clean stop releases c's Lease: its objects move to a and b at once.
    c.stop.cancel();
    c.task.await.expect("joined").expect("clean stop");
    settled(&client, &["a", "b"], N).await;

    // A fourth replica joins: objects move to it through drains.
    let before = log.reconciles.lock().len();
    let d = start(&client, "d", &log);
    let with_d = settled(&client, &["a", "b", "d"], N).await;
    eventually("d reconciles its share", WAIT, || {
        let reconciles = log.reconciles.lock();
        with_d.iter().filter(|(_, m)| *m == "d").all(|(name, _)| {
            reconciles[before..]
                .iter()
                .any(|(by, n)| by == "d" && n == name)
        })
    })
    .await;

    // A partition (no release): b cannot renew, stops at its renew deadline, and its
    // objects move once its Lease expires.
    partition_b.cancel();
    let lost = tokio::time::timeout(WAIT, b.task)
        .await
        .expect("b stops")
        .expect("joined");
    assert!(
        matches!(lost, Err(ManagerError::ShardMembershipLost)),
        "{lost:?}"
    );
    settled(&client, &["a", "d"], N).await;

    assert_eq!(
        log.overlaps.load(Ordering::SeqCst),
        0,
        "an object was reconciled twice at once"
    );
    assert_eq!(
        log.secrets_created.load(Ordering::SeqCst),
        N,
        "a Secret was created twice"
    );
    for r in [a, d] {
        r.stop.cancel();
        r.task.await.expect("joined").expect("clean stop");
    }
    drop((b.stop, b.probes));
}

/// A ring and leader election cannot be combined.
#[tokio::test]
async fn a_ring_excludes_leader_election() {
    let (_server, client) = server_and_client().await;
    let result = Manager::builder(client)
        .shard_ring(ring_options("a"))
        .leader_election(kubegen::manager::LeaderElectionOptions {
            namespace: "default".into(),
            name: "x".into(),
            identity: "a".into(),
            config: LeaderElectionConfig::default(),
        })
        .build();
    assert!(matches!(
        result,
        Err(ManagerError::ShardRingWithLeaderElection)
    ));
}
