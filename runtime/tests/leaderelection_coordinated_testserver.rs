//! Coordinated leader election (KEP-4355, beta in Kubernetes 1.33) against the test
//! server's coordinated leader election controller, on a paused clock through the
//! in-process front: candidates declared by `LeaseCandidateKeeper`s
//! (client-go `tools/leaderelection/leasecandidate.go`), electors in coordinated mode
//! (`tools/leaderelection/leaderelection.go`, `tryCoordinatedRenew`), the election by the
//! rules of `pkg/controlplane/controller/leaderelection/leaderelection_controller.go` and
//! `election.go` (the scenarios of `test/integration/apiserver/coordinatedleaderelection`).
//!
//! Each test runs minutes of virtual time in milliseconds: tokio's clock is paused, and it
//! jumps ahead whenever every task waits on a timer.

use std::{future::Future, sync::Arc, time::Duration};

use k8s_openapi::{
    api::coordination::{
        v1::Lease,
        v1beta1::{LeaseCandidate, LeaseCandidateSpec},
    },
    apimachinery::pkg::apis::meta::v1::MicroTime,
    jiff::Timestamp,
};
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::{Client, ResourceClient},
    leaderelection::{
        CandidateError, LeaderElectionConfig, LeaderElector, LeaseCandidateKeeper, LeaseLock,
        OLDEST_EMULATION_VERSION,
    },
};
use kubegen_testserver::{ClusterConfig, TestServer, Workload};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod election_support;

use election_support::Terms;

const NAMESPACE: &str = "kube-system";
const LEASE: &str = "my-operator";

/// A server running the coordinated leader election controller (and nothing else), on a
/// paused clock, with a client over its in-process front.
async fn server(coordinated: bool) -> (TestServer, Client) {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .try_init();
    let cluster = if coordinated {
        ClusterConfig::none().with(Workload::CoordinatedLeaderElection)
    } else {
        ClusterConfig::none()
    };
    let server = TestServer::builder()
        .cluster(cluster)
        .paused_clock()
        .start()
        .await
        .expect("server");
    let client = Client::new(server.transport());
    (server, client)
}

/// Polls `check` every 100 ms of virtual time until it yields `Some` (10 virtual minutes
/// at most).
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..6000 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A replica of a coordinated component: its LeaseCandidate keeper and (once started) its
/// elector, both running until `stop`.
struct Replica {
    identity: String,
    elector: Option<LeaderElector>,
    stop: CancellationToken,
    electing: Option<JoinHandle<()>>,
    keeping: JoinHandle<Result<(), CandidateError>>,
}

impl Replica {
    /// Declares `identity` a candidate at `binary` emulating `emulation`: its keeper runs,
    /// its elector does not yet.
    fn candidate(client: &Client, identity: &str, binary: &str, emulation: &str) -> Replica {
        let stop = CancellationToken::new();
        let keeper = LeaseCandidateKeeper::new(
            client.clone(),
            NAMESPACE,
            identity,
            LEASE,
            binary,
            emulation,
        );
        let keeping = tokio::spawn({
            let stop = stop.clone();
            async move { keeper.run(stop).await }
        });
        Replica {
            identity: identity.to_owned(),
            elector: None,
            stop,
            electing: None,
            keeping,
        }
    }

    /// Starts `identity` (its keeper and its elector) at `binary` emulating `emulation`;
    /// `release`: release the Lease when it stops leading.
    fn start(
        client: &Client,
        terms: &Terms,
        identity: &str,
        binary: &str,
        emulation: &str,
        release: bool,
    ) -> Replica {
        let mut replica = Replica::candidate(client, identity, binary, emulation);
        replica.elect(client, terms, release);
        replica
    }

    /// Starts the elector, recording its terms in `terms`.
    fn elect(&mut self, client: &Client, terms: &Terms, release: bool) {
        let config = LeaderElectionConfig {
            coordinated: true,
            ..terms.config(&self.identity, release)
        };
        let lock = LeaseLock::new(client.clone(), NAMESPACE, LEASE, &self.identity);
        let elector = LeaderElector::new(lock, config).expect("valid config");
        self.electing = Some(tokio::spawn({
            let (elector, stop) = (elector.clone(), self.stop.clone());
            async move { elector.run(stop).await }
        }));
        self.elector = Some(elector);
    }

    fn elector(&self) -> &LeaderElector {
        self.elector.as_ref().expect("electing")
    }

    /// Whether the elector's `run` has returned.
    fn stopped_electing(&self) -> bool {
        self.electing.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// Stops the replica cleanly: its elector (releasing, if configured) and its keeper
    /// (deleting its LeaseCandidate).
    async fn stop(self) {
        self.stop.cancel();
        if let Some(electing) = self.electing {
            electing.await.expect("elector stopped");
        }
        self.keeping
            .await
            .expect("keeper stopped")
            .expect("keeper ran");
    }
}

async fn lease(client: &Client) -> Option<Lease> {
    ResourceClient::<Lease>::namespaced(client.clone(), NAMESPACE)
        .get(LEASE)
        .await
        .ok()
}

async fn holder(client: &Client) -> Option<String> {
    lease(client)
        .await
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

async fn candidate(client: &Client, name: &str) -> Option<LeaseCandidate> {
    ResourceClient::<LeaseCandidate>::namespaced(client.clone(), NAMESPACE)
        .get(name)
        .await
        .ok()
}

/// The spec of a LeaseCandidate as JSON (its Rust field is optional or not depending on
/// the k8s-openapi version).
fn spec_json(candidate: &LeaseCandidate) -> serde_json::Value {
    serde_json::to_value(candidate).expect("encodes")["spec"].clone()
}

/// `election.go` `pickBestLeaderOldestEmulationVersion`: of 1.34/1.34, 1.33/1.33 and
/// 1.35/1.34 (binary/emulation), the 1.33 candidate leads; the Lease carries the strategy.
#[tokio::test]
async fn the_oldest_emulation_version_leads() {
    let (_server, client) = server(true).await;
    let terms = Terms::default();
    let mut replicas: Vec<_> = [
        ("a", "1.34.0", "1.34.0"),
        ("b", "1.33.0", "1.33.0"),
        ("c", "1.35.0", "1.34.0"),
    ]
    .into_iter()
    .map(|(id, binary, emulation)| Replica::candidate(&client, id, binary, emulation))
    .collect();
    // The first candidate may be elected before the others exist; with all three known,
    // the controller settles on the 1.33 one. Only then do the electors start.
    eventually("b elected", || async {
        (holder(&client).await.as_deref() == Some("b")).then_some(())
    })
    .await;
    for replica in &mut replicas {
        replica.elect(&client, &terms, true);
    }
    eventually("a leader", || async { terms.leading() }).await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(terms.leaders(), ["b"], "only the 1.33 candidate ever leads");
    assert!(replicas[1].elector().is_leader());
    assert_eq!(replicas[0].elector().leader(), "b");
    let spec = lease(&client).await.and_then(|l| l.spec).expect("lease");
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(spec.strategy.as_deref(), Some(OLDEST_EMULATION_VERSION));
    assert_eq!(spec.preferred_holder, None);
    assert_eq!(
        spec.lease_duration_seconds,
        Some(15),
        "the holder renews with its own lease duration"
    );
    for replica in replicas {
        replica.stop().await;
    }
    terms.assert_disjoint();
}

/// A mixed-version rollout: the 1.33 replica leads while it runs; when it stops (releasing
/// the Lease, deleting its candidate) a 1.34 replica takes over, and a second 1.34 replica
/// joining later does not displace it (same versions: the older candidate stays).
#[tokio::test]
async fn a_rollout_keeps_the_old_leader_until_it_stops() {
    let (_server, client) = server(true).await;
    let terms = Terms::default();
    let old = Replica::start(&client, &terms, "old", "1.33.0", "1.33.0", true);
    eventually("old leads", || async {
        (terms.leading().as_deref() == Some("old")).then_some(())
    })
    .await;
    let new = Replica::start(&client, &terms, "new", "1.34.0", "1.34.0", true);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        terms.leaders(),
        ["old"],
        "a newer candidate does not take over"
    );

    old.stop().await;
    assert!(
        candidate(&client, "old").await.is_none(),
        "a clean stop deletes the candidate"
    );
    eventually("new leads", || async {
        (terms.leading().as_deref() == Some("new")).then_some(())
    })
    .await;
    let newer = Replica::start(&client, &terms, "newer", "1.34.0", "1.34.0", true);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(terms.leaders(), ["old", "new"]);
    assert_eq!(holder(&client).await.as_deref(), Some("new"));
    newer.stop().await;
    new.stop().await;
    terms.assert_disjoint();
}

/// An older candidate joining (`leaderelection_controller.go`: a valid Lease held by
/// another candidate gets the electee as `preferredHolder`): the 1.34 holder stops leading
/// at once (`tryCoordinatedRenew`'s "end of term"); without `release_on_cancel` it leaves
/// the Lease to expire, and the controller then makes the 1.33 candidate holder.
#[tokio::test]
async fn an_older_candidate_joining_is_handed_the_lease() {
    let (_server, client) = server(true).await;
    let terms = Terms::default();
    let current = Replica::start(&client, &terms, "current", "1.34.0", "1.34.0", false);
    eventually("current leads", || async {
        (terms.leading().as_deref() == Some("current")).then_some(())
    })
    .await;
    let older = Replica::start(&client, &terms, "older", "1.34.0", "1.33.0", true);
    eventually("preferredHolder set", || async {
        let spec = lease(&client).await?.spec?;
        (spec.holder_identity.as_deref() == Some("current")
            && spec.preferred_holder.as_deref() == Some("older"))
        .then_some(())
    })
    .await;
    eventually("current steps down", || async {
        (current.stopped_electing() && terms.leading().is_none()).then_some(())
    })
    .await;
    assert_eq!(
        holder(&client).await.as_deref(),
        Some("current"),
        "it stepped down before the Lease changed hands"
    );
    eventually("older leads", || async {
        (terms.leading().as_deref() == Some("older")).then_some(())
    })
    .await;
    let spec = lease(&client).await.and_then(|l| l.spec).expect("lease");
    assert_eq!(spec.holder_identity.as_deref(), Some("older"));
    assert_eq!(spec.preferred_holder, None);
    assert_eq!(terms.leaders(), ["current", "older"]);
    terms.assert_disjoint();
    older.stop().await;
    current.stop().await;
}

/// A candidate that stops renewing (`reconcileElectionStep`: pinged, no answer within
/// `electionDuration`) is skipped, though its versions would win.
#[tokio::test]
async fn a_candidate_that_stops_renewing_is_skipped() {
    let (_server, client) = server(true).await;
    let terms = Terms::default();
    // A candidate whose process is gone: it last renewed a minute ago and answers nothing.
    let spec = LeaseCandidateSpec {
        lease_name: LEASE.into(),
        binary_version: "1.30.0".into(),
        emulation_version: Some("1.30.0".into()),
        strategy: OLDEST_EMULATION_VERSION.into(),
        renew_time: Some(MicroTime(
            Timestamp::now()
                .checked_sub(Duration::from_secs(60))
                .expect("in range"),
        )),
        ping_time: None,
    };
    let ghost: LeaseCandidate = serde_json::from_value(serde_json::json!({
        "metadata": ObjectMeta { name: Some("ghost".into()), ..ObjectMeta::default() },
        "spec": spec,
    }))
    .expect("a LeaseCandidate");
    ResourceClient::<LeaseCandidate>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &ghost)
        .await
        .expect("created");
    let a = Replica::start(&client, &terms, "a", "1.34.0", "1.34.0", true);
    let b = Replica::start(&client, &terms, "b", "1.33.0", "1.33.0", true);
    eventually("b leads", || async {
        (terms.leading().as_deref() == Some("b")).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(holder(&client).await.as_deref(), Some("b"));
    assert!(
        !terms.leaders().iter().any(|l| l == "ghost"),
        "{:?}",
        terms.leaders()
    );
    let ghost = spec_json(&candidate(&client, "ghost").await.expect("ghost"));
    assert!(
        ghost["pingTime"].is_string(),
        "the ghost was pinged: {ghost}"
    );
    assert!(
        ghost["renewTime"].as_str() < ghost["pingTime"].as_str(),
        "and never answered: {ghost}"
    );
    a.stop().await;
    b.stop().await;
    terms.assert_disjoint();
}

/// A coordinated candidate never takes a Lease itself (client-go: `tryCoordinatedRenew`
/// does not create the lock, nor take an expired one): without the controller it never
/// leads.
#[tokio::test]
async fn without_the_controller_a_coordinated_candidate_never_leads() {
    let (_server, client) = server(false).await;
    let terms = Terms::default();
    let replica = Replica::start(&client, &terms, "a", "1.34.0", "1.34.0", true);
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert!(
        lease(&client).await.is_none(),
        "it did not create the Lease"
    );
    // An expired Lease with nobody holding it is not taken either.
    let expired = Lease {
        metadata: ObjectMeta {
            name: Some(LEASE.into()),
            ..ObjectMeta::default()
        },
        spec: Some(k8s_openapi::api::coordination::v1::LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            ..Default::default()
        }),
    };
    ResourceClient::<Lease>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &expired)
        .await
        .expect("created");
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert!(terms.leaders().is_empty());
    assert_eq!(holder(&client).await, None);
    let spec = spec_json(&candidate(&client, "a").await.expect("its candidate"));
    assert_eq!(spec["leaseName"], LEASE);
    assert_eq!(spec["binaryVersion"], "1.34.0");
    assert_eq!(spec["emulationVersion"], "1.34.0");
    assert_eq!(spec["strategy"], OLDEST_EMULATION_VERSION);
    replica.stop().await;
}

/// Plain election is unchanged beside the controller: two plain candidates of another
/// Lease race for it as ever (one leads, the Lease has no strategy), while a coordinated
/// replica is elected for its own Lease.
#[tokio::test]
async fn plain_election_works_beside_the_controller() {
    let (_server, client) = server(true).await;
    let terms = Terms::default();
    let coordinated = Replica::start(&client, &terms, "coordinated", "1.34.0", "1.34.0", true);
    let stop = CancellationToken::new();
    let plain: Vec<_> = ["p1", "p2"]
        .into_iter()
        .map(|id| {
            let lock = LeaseLock::new(client.clone(), NAMESPACE, "plain", id);
            let elector = LeaderElector::new(lock, LeaderElectionConfig::default()).expect("valid");
            let task = tokio::spawn({
                let (elector, stop) = (elector.clone(), stop.clone());
                async move { elector.run(stop).await }
            });
            (elector, task)
        })
        .collect();
    eventually("a plain leader", || async {
        plain.iter().any(|(e, _)| e.is_leader()).then_some(())
    })
    .await;
    eventually("the coordinated leader", || async {
        (terms.leading().as_deref() == Some("coordinated")).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(plain.iter().filter(|(e, _)| e.is_leader()).count(), 1);
    let spec = ResourceClient::<Lease>::namespaced(client.clone(), NAMESPACE)
        .get("plain")
        .await
        .expect("plain lease")
        .spec
        .expect("spec");
    assert_eq!(
        spec.strategy, None,
        "the controller leaves a Lease without candidates alone"
    );
    assert_eq!(spec.lease_transitions, Some(0));
    stop.cancel();
    for (_, task) in plain {
        task.await.expect("stopped");
    }
    coordinated.stop().await;
}

/// The manager with a coordinated election and its `LeaseCandidate` (KEP-4355): of two
/// operator replicas at 1.34 and 1.33, the controller runs on the 1.33 one only
/// (kubernetes `pkg/controlplane/controller/leaderelection/election.go`,
/// `pickBestLeaderOldestEmulationVersion`).
#[tokio::test]
async fn a_managers_coordinated_election_runs_controllers_on_the_oldest_version() {
    use kubegen::{
        controller::Action,
        manager::{LeaderElectionOptions, Manager},
    };
    let (_server, client) = server(true).await;
    let reconciled_by: Arc<Mutex<Vec<String>>> = Arc::default();
    let replica = |identity: &str, version: &str| {
        let config = LeaderElectionConfig {
            coordinated: true,
            release_on_cancel: true,
            ..LeaderElectionConfig::default()
        };
        let mut manager = Manager::builder(client.clone())
            .leader_election(LeaderElectionOptions {
                namespace: NAMESPACE.into(),
                name: LEASE.into(),
                identity: identity.into(),
                config,
            })
            .lease_candidate(LeaseCandidateKeeper::new(
                client.clone(),
                NAMESPACE,
                identity,
                LEASE,
                version,
                version,
            ))
            .build()
            .expect("manager");
        let controller = manager
            .controller::<k8s_openapi::api::core::v1::ConfigMap>()
            .build();
        let (who, log) = (identity.to_owned(), reconciled_by.clone());
        manager.add_controller(
            controller,
            move |_obj, _ctx: Arc<()>| {
                let (who, log) = (who.clone(), log.clone());
                async move {
                    log.lock().push(who);
                    Ok::<_, std::io::Error>(Action::done())
                }
            },
            Arc::new(()),
        );
        let stop = CancellationToken::new();
        (stop.clone(), tokio::spawn(manager.run(stop)))
    };
    let (stop_new, new) = replica("new", "1.34.0");
    let (stop_old, old) = replica("old", "1.33.0");
    let configmaps = ResourceClient::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(
        client.clone(),
        NAMESPACE,
    );
    let cm = k8s_openapi::api::core::v1::ConfigMap {
        metadata: ObjectMeta {
            name: Some("x".into()),
            ..ObjectMeta::default()
        },
        ..Default::default()
    };
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    eventually("a reconcile", || {
        let seen = !reconciled_by.lock().is_empty();
        async move { seen.then_some(()) }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let who: std::collections::BTreeSet<String> = reconciled_by.lock().iter().cloned().collect();
    assert_eq!(
        who,
        ["old".to_owned()].into(),
        "only the oldest version reconciles"
    );
    for (stop, task) in [(stop_new, new), (stop_old, old)] {
        stop.cancel();
        task.await.expect("joined").expect("clean stop");
    }
}
