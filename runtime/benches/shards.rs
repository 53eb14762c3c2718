//! Sharding benchmark (issue 44, item 6(c)): a backlog of N objects reconciled by one
//! replica, and by a shard ring of three.
//!
//! `KUBEGEN_BENCH_ROUNDS=3 cargo bench -p kubegen --bench shards` (N = 30,000 by default,
//! `KUBEGEN_BENCH_SIZES` picks others; rounds default to 3: medians are reported, and
//! rounds alternate the workload order). `KUBEGEN_BENCH_WORKLOADS=single,ring-3` picks the
//! workloads (`ring-<k>` for any k); `KUBEGEN_BENCH_RECONCILERS` the concurrent reconciles
//! of each replica (2 by default); `KUBEGEN_BENCH_RECONCILE_MS` what one reconcile takes
//! (5 by default); `KUBEGEN_BENCH_WORKERS` each replica's tokio worker threads (2).
//!
//! The parent process serves N ConfigMaps (1 KiB of data each, as in the informer bench)
//! from the in-memory test server, a fresh one for every run; each replica is a child
//! process of this binary on its own client (HTTP, no client-side throttling):
//!
//! * `single`: a [`Manager`] with one ConfigMap controller, no ring: what one replica
//!   runs today (leader election left out: nothing to elect).
//! * `ring-<k>`: k managers with [`ManagerBuilder::shard_ring`](kubegen::manager::ManagerBuilder::shard_ring)
//!   (ring `bench`, identities `r0`, `r1`, ...): each caches and reconciles the share its
//!   ring's sharder labels for it; one of them runs the sharder.
//!
//! The reconcile sleeps 5 ms, then reports the object; each child prints what it
//! reconciled for the first time every 10 ms, and the parent stops the clock when every
//! object was reconciled once, counting from the go-ahead it gives every replica at once
//! (their managers are built, their processes warm). Then each replica reports its peak
//! RSS (VmHWM) and CPU time, and the sharder when it saw every object assigned.
//!
//! Reported per workload: the backlog's wall time; each replica's peak RSS (mean and max
//! over the replicas) and the CPU all replicas used; for a ring, when the sharder had
//! assigned every object. Ratios against `single` (medians of the per-round ratios):
//! backlog time (issue 44's target: at most 0.4 for three replicas), mean and max peak RSS
//! per replica (target: at most 0.45).
//!
//! The replicas share this machine's cores with each other and with the test server, where
//! a real ring has a node each: a backlog bound by CPU cannot shrink here as it would there.
//!
//! `KUBEGEN_BENCH_CHILD_WRAPPER` prefixes every replica's command line (a profiler: the
//! replicas are stopped with `go stop`, not killed, so it writes its data).
//!
//! As a smoke test (`cargo test -p kubegen --bench shards`, the test profile: the binary
//! runs without `--bench`) it runs one round of `single` and `ring-3` on 600 objects (or
//! `KUBEGEN_BENCH_SIZES`) and checks that every object was reconciled, judging no time.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::{
    collections::HashSet,
    sync::{Arc, mpsc},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen::{
    controller::Action,
    leaderelection::LeaderElectionConfig,
    manager::{Manager, ShardRingOptions},
};
use kubegen_testserver::{
    ClusterConfig, TestServer,
    bench::{WriteOptions, collection},
};
use parking_lot::Mutex;
use serde_json::json;
use support::{ChildProcess, Line, kubegen_client, median, mib, report, wait_for_parent};

const NAMESPACE: &str = "default";
const RING: &str = "bench";
/// How long the parent waits for the backlog before it gives up.
const GIVE_UP: Duration = Duration::from_secs(900);

// ---------------------------------------------------------------------------------------
// The child: one replica.

/// What the reconciles of one replica saw: objects reconciled the first time, not yet
/// printed.
#[derive(Default)]
struct Seen {
    names: HashSet<String>,
    fresh: Vec<String>,
}

struct Ctx {
    seen: Mutex<Seen>,
    reconcile: Duration,
}

async fn reconcile(obj: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, kubegen::client::Error> {
    if !ctx.reconcile.is_zero() {
        tokio::time::sleep(ctx.reconcile).await;
    }
    let name = obj.metadata.name.clone().unwrap_or_default();
    let mut seen = ctx.seen.lock();
    if seen.names.insert(name.clone()) {
        seen.fresh.push(name);
    }
    Ok(Action::done())
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).map_or(default, |v| v.parse().unwrap())
}

/// `single`, or `ring-<identity>`: builds the manager, says `ready`, starts on `go`,
/// prints `r <name>...` batches of first reconciles every 10 ms (and `assigned <secs>`
/// once its sharder, if it runs the ring's, counts every object assigned), and on
/// `go report` prints `sharder 0|1` and its `done` report; on `go stop` it stops its
/// manager and exits.
async fn child(workload: &str, url: &str, n: usize) {
    let client = kubegen_client(url);
    let mut builder = Manager::builder(client);
    if let Some(identity) = workload.strip_prefix("ring-") {
        builder = builder.shard_ring(ShardRingOptions {
            namespace: NAMESPACE.into(),
            ring: RING.into(),
            identity: identity.into(),
            // The default lease (15 s) and renew deadline (10 s); the sharder counts the
            // ring every retry period: 500 ms, so `assigned` is that precise.
            config: LeaderElectionConfig {
                retry_period: Duration::from_millis(500),
                ..LeaderElectionConfig::default()
            },
        });
    }
    let mut manager = builder.build().unwrap();
    let controller = manager
        .controller::<ConfigMap>()
        .named("bench")
        .max_concurrent_reconciles(env_usize("KUBEGEN_BENCH_RECONCILERS", 2))
        .build();
    let ctx = Arc::new(Ctx {
        seen: Mutex::default(),
        reconcile: Duration::from_millis(env_usize("KUBEGEN_BENCH_RECONCILE_MS", 5) as u64),
    });
    manager.add_controller(controller, reconcile, ctx.clone());
    let ring = manager.shard_ring().cloned();
    println!("ready");
    wait_for_parent();
    let start = Instant::now();
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(manager.run(stop.clone()));
    let printer = tokio::spawn({
        let ring = ring.clone();
        async move {
            let mut assigned = false;
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let fresh = std::mem::take(&mut ctx.seen.lock().fresh);
                if !fresh.is_empty() {
                    println!("r {}", fresh.join(" "));
                }
                if let Some(ring) = &ring
                    && !assigned
                {
                    let status = ring.status();
                    if status.sharding
                        && status.unassigned == 0
                        && status.drains_in_flight == 0
                        && status.objects.values().sum::<usize>() == n
                    {
                        assigned = true;
                        println!("assigned {:.3}", start.elapsed().as_secs_f64());
                    }
                }
            }
        }
    });
    let line = tokio::task::spawn_blocking(wait_for_parent).await.unwrap();
    assert_eq!(line, "report");
    printer.abort();
    let sharder = ring.is_some_and(|ring| ring.status().sharding);
    println!("sharder {}", u8::from(sharder));
    report("done", start.elapsed().as_secs_f64());
    // `go stop` (or the parent's end): stop the manager and exit.
    let _ = tokio::task::spawn_blocking(wait_for_parent).await;
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), running).await;
}

// ---------------------------------------------------------------------------------------
// The parent: the server, the replicas, the clock.

/// N ConfigMaps of 1 KiB of data each, written through the server's engine.
fn fill(server: &TestServer, n: usize) {
    let target = collection(server, ("", "v1", "configmaps"), Some(NAMESPACE));
    for i in 0..n {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:06}"), "labels": {"app": format!("app-{}", i % 17)}},
            "data": {"payload": "x".repeat(1024)}});
        server
            .engine()
            .create(&target, obj, &WriteOptions::default())
            .unwrap();
    }
}

/// One replica's figures at the end of a run.
#[derive(Clone, Copy, Debug)]
struct Replica {
    done: Line,
    sharder: bool,
}

/// One run of a workload.
#[derive(Clone, Debug)]
struct Run {
    /// Go-ahead to the last object's first reconcile.
    backlog_secs: f64,
    /// When the sharder saw every object assigned (a ring), from its go-ahead.
    assigned_secs: Option<f64>,
    replicas: Vec<Replica>,
    /// CPU the parent (the test server) used during the backlog.
    server_cpu_secs: f64,
}

impl Run {
    fn peak_mean_kib(&self) -> f64 {
        self.replicas.iter().map(|r| r.done.hwm as f64).sum::<f64>() / self.replicas.len() as f64
    }

    fn peak_max_kib(&self) -> f64 {
        self.replicas
            .iter()
            .map(|r| r.done.hwm as f64)
            .fold(0.0, f64::max)
    }

    fn cpu_secs(&self) -> f64 {
        self.replicas.iter().map(|r| r.done.cpu as f64).sum::<f64>() / 1000.0
    }

    fn sharder_peak_kib(&self) -> Option<f64> {
        self.replicas
            .iter()
            .find(|r| r.sharder)
            .map(|r| r.done.hwm as f64)
    }

    fn member_peak_mean_kib(&self) -> Option<f64> {
        let members: Vec<f64> = self
            .replicas
            .iter()
            .filter(|r| !r.sharder)
            .map(|r| r.done.hwm as f64)
            .collect();
        (!members.is_empty() && members.len() < self.replicas.len())
            .then(|| members.iter().sum::<f64>() / members.len() as f64)
    }
}

/// The children of `workload`: `single`, or `ring-<k>`.
fn replicas_of(workload: &str) -> Vec<String> {
    match workload.strip_prefix("ring-") {
        Some(k) => (0..k.parse::<usize>().expect("ring-<number>"))
            .map(|i| format!("ring-r{i}"))
            .collect(),
        None => {
            assert_eq!(workload, "single", "a workload is single or ring-<k>");
            vec!["single".to_owned()]
        }
    }
}

/// Serves `n` fresh ConfigMaps, runs `workload`'s replicas until every object was
/// reconciled once, and collects their reports.
fn run(rt: &tokio::runtime::Runtime, workload: &str, n: usize) -> Run {
    let server = rt.block_on(async {
        TestServer::builder()
            .cluster(ClusterConfig::none())
            .start()
            .await
            .unwrap()
    });
    fill(&server, n);
    let url = server.url();
    let mut children: Vec<ChildProcess> = replicas_of(workload)
        .iter()
        .map(|w| ChildProcess::spawn(w, &url, n))
        .collect();
    for child in &mut children {
        child.expect("ready");
    }
    let (tx, rx) = mpsc::channel();
    for (i, child) in children.iter_mut().enumerate() {
        child.forward_lines(i, tx.clone());
    }
    drop(tx);
    let cpu_before = support::user_sys_ms();
    let start = Instant::now();
    for child in &mut children {
        child.go("");
    }
    let mut reconciled: HashSet<String> = HashSet::with_capacity(n);
    let mut assigned_secs = None;
    while reconciled.len() < n {
        let (_, line) = rx.recv_timeout(GIVE_UP).unwrap_or_else(|e| {
            panic!(
                "{workload}: {} of {n} objects reconciled after {:.0} s: {e}",
                reconciled.len(),
                start.elapsed().as_secs_f64()
            )
        });
        match line.split_once(' ') {
            Some(("r", names)) => reconciled.extend(names.split(' ').map(str::to_owned)),
            Some(("assigned", secs)) => assigned_secs = Some(secs.parse::<f64>().unwrap()),
            _ => {}
        }
    }
    let backlog_secs = start.elapsed().as_secs_f64();
    let cpu_after = support::user_sys_ms();
    let server_cpu_secs =
        (cpu_after.0 + cpu_after.1).saturating_sub(cpu_before.0 + cpu_before.1) as f64 / 1000.0;
    for child in &mut children {
        child.go("report");
    }
    let mut sharders = vec![None; children.len()];
    let mut done = vec![None; children.len()];
    while done.iter().any(Option::is_none) {
        let (i, line) = rx.recv_timeout(GIVE_UP).unwrap();
        match line.split_once(' ') {
            Some(("sharder", flag)) => sharders[i] = Some(flag == "1"),
            Some(("done", figures)) => done[i] = Some(support::parse_figures(figures)),
            Some(("assigned", secs)) if assigned_secs.is_none() => {
                assigned_secs = Some(secs.parse::<f64>().unwrap());
            }
            _ => {}
        }
    }
    // Stopped, not killed, so a profiler wrapping a child (KUBEGEN_BENCH_CHILD_WRAPPER)
    // writes its data.
    for child in &mut children {
        child.go("stop");
    }
    for child in &mut children {
        child.wait_for_exit(Duration::from_secs(10));
    }
    drop(children);
    rt.block_on(async move { drop(server) });
    Run {
        backlog_secs,
        assigned_secs,
        server_cpu_secs,
        replicas: done
            .into_iter()
            .zip(sharders)
            .map(|(done, sharder)| Replica {
                done: done.unwrap(),
                sharder: sharder.unwrap_or(false),
            })
            .collect(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if support::run_child_args(&args, |workload, url, n| async move {
        child(&workload, &url, n).await;
    }) {
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`: nothing to list.
    }
    // `cargo bench` passes `--bench`; `cargo test --bench shards` (the test profile) does
    // not: then this is the smoke test.
    let smoke = !args.iter().any(|a| a == "--bench");
    let sizes = support::env_sizes(if smoke { &[600] } else { &[30_000] });
    let rounds = if smoke { 1 } else { support::env_rounds(3) };
    let workloads = support::env_workloads("single,ring-3");
    let rt = support::server_runtime();
    println!(
        "reconcile {} ms, {} concurrent reconciles per replica, {} tokio workers per replica",
        env_usize("KUBEGEN_BENCH_RECONCILE_MS", 5),
        env_usize("KUBEGEN_BENCH_RECONCILERS", 2),
        env_usize("KUBEGEN_BENCH_WORKERS", 2),
    );
    for &n in &sizes {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); workloads.len()];
        for round in 0..rounds {
            for i in support::round_order(workloads.len(), round) {
                let run = run(&rt, &workloads[i], n);
                println!(
                    "n={n} round {round} {:<8} backlog {:>7.2} s{}  peak RSS per replica: mean {:>6.1} MiB, max {:>6.1} MiB  CPU: replicas {:>5.1} s, server {:>5.1} s",
                    workloads[i],
                    run.backlog_secs,
                    run.assigned_secs
                        .map(|s| format!(" (all assigned at {s:.1} s)"))
                        .unwrap_or_default(),
                    mib(run.peak_mean_kib() as u64),
                    mib(run.peak_max_kib() as u64),
                    run.cpu_secs(),
                    run.server_cpu_secs,
                );
                runs[i].push(run);
            }
        }
        for (i, workload) in workloads.iter().enumerate() {
            let r = &runs[i];
            assert!(r.iter().all(|run| run.backlog_secs > 0.0));
            let sharder = r
                .iter()
                .filter_map(Run::sharder_peak_kib)
                .collect::<Vec<_>>();
            let members = r
                .iter()
                .filter_map(Run::member_peak_mean_kib)
                .collect::<Vec<_>>();
            let split = if sharder.is_empty() || members.is_empty() {
                String::new()
            } else {
                format!(
                    " (sharder {:.1}, others {:.1})",
                    mib(median(sharder) as u64),
                    mib(median(members) as u64)
                )
            };
            println!(
                "n={n} {workload:<8} median of {rounds}: backlog {:.2} s, peak RSS per replica mean {:.1} MiB, max {:.1} MiB{split}, CPU {:.1} s",
                median(r.iter().map(|run| run.backlog_secs)),
                mib(median(r.iter().map(Run::peak_mean_kib)) as u64),
                mib(median(r.iter().map(Run::peak_max_kib)) as u64),
                median(r.iter().map(Run::cpu_secs)),
            );
        }
        let Some(single) = workloads.iter().position(|w| w == "single") else {
            continue;
        };
        for (i, workload) in workloads.iter().enumerate() {
            if i == single {
                continue;
            }
            let (ours, base) = (&runs[i], &runs[single]);
            let time = support::ratio_spread(ours, base, |r| r.backlog_secs);
            let mean = support::ratio_spread(ours, base, Run::peak_mean_kib);
            let max = support::ratio_spread(ours, base, Run::peak_max_kib);
            println!(
                "n={n} {workload} / single: backlog time {time} (target <= 0.40), peak RSS per replica mean {mean}, max {max} (target <= 0.45)"
            );
        }
    }
}
