//! Informer sync benchmark: `cargo bench -p kubegen --bench informer [-- --quick]`
//! (`KUBEGEN_BENCH_SIZES=100000` picks the object counts, `KUBEGEN_BENCH_WORKLOADS=kubegen`
//! the workloads, `KUBEGEN_BENCH_ROUNDS=3` the rounds: medians are reported, and rounds
//! alternate the workload order; `KUBEGEN_BENCH_WORKERS=1` the workload's tokio worker
//! threads, 2 by default).
//!
//! The parent process serves N ConfigMaps (1 KiB of data each) from the in-memory test
//! server; each workload runs in a child process of this binary so its peak RSS (VmHWM) is
//! its own:
//!
//! * `kubegen`: a `SharedIndexInformer` syncs (list + watch), then a forced relist (watches
//!   dropped, history compacted: the resume gets 410), then a stream of N updates (one per
//!   object) through the open watch — the relist and stream peaks are measured separately
//!   (VmHWM reset through /proc/self/clear_refs before each phase).
//! * `kubegen-metadata` (on request): a metadata-only informer (`MetadataListWatch`,
//!   `as=PartialObjectMetadata`) over the same objects.
//! * `kubegen-list` (on request): the same informer with a paged LIST for its initial
//!   state instead of the default streaming list (`sendInitialEvents`).
//! * `kubegen-noindex` (on request, see below): the same informer without the namespace
//!   index, which kube-rs's store does not keep.
//! * `kube-rs`: kube-runtime's `watcher` + `reflector` store, the same three phases.
//! * `floor`: fetch and decode the same pages, then decode the same update stream from a
//!   plain watch; keep nothing.
//!
//! Wall times depend on the machine's load; the CPU columns (user + system time of the
//! workload's process over the phase, from /proc/self/stat) are steadier.
//!
//! `--profile-sync [kubegen|kube-rs|floor|kube-rs-floor]` (with `KUBEGEN_BENCH_SIZES` and `KUBEGEN_BENCH_ROUNDS`)
//! runs only the initial sync, repeatedly, in one process: the server's threads are named
//! `server` and the client's `client`, so a profiler can tell them apart
//! (`perf record -- <bench> --profile-sync`, then `perf report --comm client`; or
//! `valgrind --tool=callgrind --separate-threads=yes` for instruction counts).
//!
//! `--serve N` serves N ConfigMaps and prints the URL; `--child <workload> <url> N` with
//! `KUBEGEN_BENCH_SYNC_ONLY=1` then runs one workload's initial sync and exits, so a tool
//! like `perf stat -r 10` can time the sync alone (`hack/bench-sync-cpu.sh` does that,
//! alternating the workloads).
//!
//! `KUBEGEN_BENCH_CHILD_WRAPPER` prefixes every child's command line (split at spaces), so a
//! profiler sees one workload in its own process, for example the watch path alone:
//! `KUBEGEN_BENCH_CHILD_WRAPPER="valgrind --tool=callgrind --zero-before=*stream_phase_begins*
//! --dump-before=*stream_phase_ends*"` with `KUBEGEN_BENCH_WORKLOADS=kubegen` writes a dump
//! (`callgrind.out.<pid>.1`) of the instructions every thread of the child ran while the
//! stream of updates came in (`stream_phase`).
//!
//! Client-side throttling is off on both clients. An unreported floor run warms the server
//! up first, so the order of the workloads does not favour any of them.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::{
    io::Write,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    WatchEvent,
    params::{ListParams, WatchParams},
};
use kubegen::{
    cache::{
        Indexers, InitialListStrategy, ListWatch, MetadataListWatch, QueueKind, ReflectorConfig,
        SharedIndexInformer, namespace_indexers,
    },
    client::ResourceClient,
};
use kubegen_testserver::{
    EngineConfig, TestServer,
    bench::{Target, WriteOptions, collection},
};
use serde_json::json;
use support::{
    ChildProcess, kube_rs_client, kubegen_client, median, mib, ratio_spread, report, reset_peak,
    round_order, run_until_synced, stream_done, wait_for_parent, wait_until,
};
use tokio_util::sync::CancellationToken;

/// Starts a kubegen informer and waits until it has synced `n` objects; returns it, its
/// stop token and the seconds the sync took.
async fn kubegen_sync(
    url: &str,
    n: usize,
    indexers: Indexers<ConfigMap>,
    queue: QueueKind,
    initial_list: InitialListStrategy,
) -> (SharedIndexInformer<ConfigMap>, CancellationToken, f64) {
    let lw = ListWatch::new(ResourceClient::<ConfigMap>::all(kubegen_client(url)));
    let informer = SharedIndexInformer::builder(lw)
        .indexers(indexers)
        .queue(queue)
        .reflector(ReflectorConfig {
            initial_list,
            ..ReflectorConfig::default()
        })
        .build();
    run_until_synced(informer, n).await
}

/// The relist and stream phases of a cache (a kubegen informer, full or metadata-only, or
/// kube-rs's store) whose sync took `secs`: `marker` reads the marker object from it.
async fn cache_phases<M: kube_core::Resource>(
    secs: f64,
    marker: impl Fn() -> Option<std::sync::Arc<M>>,
) {
    report("synced", secs);
    reset_peak();
    println!("ready");
    wait_for_parent();
    report("relisted", wait_until(|| marker().is_some()).await);
    reset_peak();
    println!("ready");
    let done = wait_for_parent();
    support::stream_phase_begins();
    let secs = wait_until(|| marker().is_some_and(|m| stream_done(m.as_ref(), &done))).await;
    support::stream_phase_ends();
    report("streamed", secs);
}

/// [`cache_phases`] of a kubegen informer, which is stopped after them.
async fn kubegen_phases<T: kubegen::Object>(
    informer: SharedIndexInformer<T>,
    stop: CancellationToken,
    secs: f64,
) {
    cache_phases(secs, || informer.indexer().get_by_key("default/marker")).await;
    stop.cancel();
}

/// Starts kube-runtime's watcher + reflector and waits until its store is ready with `n`
/// objects; returns the store, the stream's task and the seconds the sync took.
async fn kube_rs_sync(
    url: &str,
    n: usize,
) -> (
    kube::runtime::reflector::Store<ConfigMap>,
    tokio::task::JoinHandle<()>,
    f64,
) {
    use kube::runtime::{WatchStreamExt, reflector, watcher};
    let api: kube::Api<ConfigMap> = kube::Api::all(kube_rs_client(url));
    let (store, writer) = reflector::store();
    let stream = reflector(writer, watcher(api, watcher::Config::default())).default_backoff();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    let start = Instant::now();
    store.wait_until_ready().await.unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(store.len(), n);
    (store, task, secs)
}

/// Fetches every page of 500 through `list` and decodes it, keeping nothing; returns the
/// seconds it took.
async fn list_all<F, Fut, E>(n: usize, mut list: F) -> f64
where
    F: FnMut(ListParams) -> Fut,
    Fut: std::future::Future<Output = Result<kube_core::ObjectList<ConfigMap>, E>>,
    E: std::fmt::Debug,
{
    let start = Instant::now();
    let mut params = ListParams::default().limit(500);
    let mut seen = 0;
    loop {
        let page = list(params.clone()).await.unwrap();
        seen += page.items.len();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params.continue_token = Some(token),
            None => break,
        }
    }
    assert_eq!(seen, n);
    start.elapsed().as_secs_f64()
}

async fn child(workload: &str, url: &str, n: usize) {
    match workload {
        "kubegen" | "kubegen-list" | "kubegen-noindex" | "kubegen-deltafifo" => {
            // client-go's informers keep a namespace index; kube-rs's store has none.
            let indexers = if workload == "kubegen-noindex" {
                Indexers::default()
            } else {
                namespace_indexers()
            };
            // The keyed queue the informer used before the in-order RealFifo.
            let queue = if workload == "kubegen-deltafifo" {
                QueueKind::DeltaFifo
            } else {
                QueueKind::RealFifo
            };
            // The default initial list is a streaming list; `kubegen-list` pages a LIST.
            let initial_list = if workload == "kubegen-list" {
                InitialListStrategy::ListWatch
            } else {
                InitialListStrategy::StreamingList
            };
            let (informer, stop, secs) = kubegen_sync(url, n, indexers, queue, initial_list).await;
            kubegen_phases(informer, stop, secs).await;
        }
        "kubegen-metadata" => {
            // Metadata only (`as=PartialObjectMetadata`): what a controller that only needs
            // names, labels and owners keeps.
            let lw = ListWatch::new(ResourceClient::<ConfigMap>::all(kubegen_client(url)));
            let informer = SharedIndexInformer::builder(MetadataListWatch::new(lw))
                .indexers(namespace_indexers())
                .build();
            let (informer, stop, secs) = run_until_synced(informer, n).await;
            kubegen_phases(informer, stop, secs).await;
        }
        "kube-rs" => {
            use kube::runtime::reflector;
            let (store, task, secs) = kube_rs_sync(url, n).await;
            let marker = reflector::ObjectRef::<ConfigMap>::new("marker").within("default");
            cache_phases(secs, || store.get(&marker)).await;
            task.abort();
        }
        "floor" => {
            let api = ResourceClient::<ConfigMap>::all(kubegen_client(url));
            let secs = list_all(n, |params| {
                let api = api.clone();
                async move { api.list(&params).await }
            })
            .await;
            report("synced", secs);
            println!("ready");
            wait_for_parent();
            report("relisted", 0.0);
            // Stream: a plain watch from the current version, events decoded and dropped.
            let rv = api
                .list(&ListParams {
                    limit: Some(1),
                    ..ListParams::default()
                })
                .await
                .unwrap()
                .metadata
                .resource_version
                .unwrap();
            let mut events = api
                .watch(&WatchParams::default().timeout(290), &rv)
                .await
                .unwrap();
            reset_peak();
            println!("ready");
            let done = wait_for_parent();
            let start = Instant::now();
            while let Some(event) = events.next().await {
                if let WatchEvent::Modified(cm) = event.unwrap()
                    && stream_done(&cm, &done)
                {
                    break;
                }
            }
            report("streamed", start.elapsed().as_secs_f64());
        }
        other => panic!("unknown workload {other}"),
    }
}

#[derive(Clone, Copy)]
struct Measured {
    sync_secs: f64,
    sync_peak_kib: u64,
    steady_kib: u64,
    relist_secs: f64,
    relist_peak_kib: u64,
    relist_ratio: f64,
    sync_cpu_ms: u64,
    /// The sync's CPU in user space and in the kernel, and its minor page faults.
    sync_user_ms: u64,
    sync_sys_ms: u64,
    sync_faults: u64,
    stream_secs: f64,
    stream_cpu_ms: u64,
    stream_user_ms: u64,
    stream_peak_kib: u64,
}

impl Measured {
    /// The median of every figure, each taken on its own.
    fn median(runs: &[Measured]) -> Measured {
        fn mid<T: Copy + PartialOrd>(runs: &[Measured], f: impl Fn(&Measured) -> T) -> T {
            median(runs.iter().map(f))
        }
        Measured {
            sync_secs: mid(runs, |m| m.sync_secs),
            sync_peak_kib: mid(runs, |m| m.sync_peak_kib),
            steady_kib: mid(runs, |m| m.steady_kib),
            relist_secs: mid(runs, |m| m.relist_secs),
            relist_peak_kib: mid(runs, |m| m.relist_peak_kib),
            relist_ratio: mid(runs, |m| m.relist_ratio),
            sync_cpu_ms: mid(runs, |m| m.sync_cpu_ms),
            sync_user_ms: mid(runs, |m| m.sync_user_ms),
            sync_sys_ms: mid(runs, |m| m.sync_sys_ms),
            sync_faults: mid(runs, |m| m.sync_faults),
            stream_secs: mid(runs, |m| m.stream_secs),
            stream_cpu_ms: mid(runs, |m| m.stream_cpu_ms),
            stream_user_ms: mid(runs, |m| m.stream_user_ms),
            stream_peak_kib: mid(runs, |m| m.stream_peak_kib),
        }
    }
}

fn run_child(workload: &str, server: &TestServer, n: usize, marker_seq: &mut usize) -> Measured {
    let mut child = ChildProcess::spawn(workload, &server.url(), n);
    let synced = child.expect("synced");
    child.expect("ready");
    // Force a relist: drop the watches while responses are delayed, so the client's resume
    // reaches the server only after the history it resumes from is compacted (410 Gone).
    server.set_delay(Some(Duration::from_millis(400)));
    server.drop_watches();
    std::thread::sleep(Duration::from_millis(50));
    *marker_seq += 1;
    create(server, "marker", *marker_seq);
    server.compact();
    std::thread::sleep(Duration::from_millis(100));
    server.set_delay(None);
    child.go("");
    let relisted = child.expect("relisted");
    // Stream: one update per object through the open watches, then the marker's label.
    child.expect("ready");
    std::thread::sleep(Duration::from_millis(500));
    let done = format!("done-{marker_seq}");
    child.go(&done);
    for i in 0..n {
        update(server, &format!("cm-{i:06}"), i, *marker_seq, None);
    }
    update(server, "marker", *marker_seq, *marker_seq, Some(&done));
    let streamed = child.expect("streamed");
    drop(child);
    let _ = server
        .engine()
        .delete(&target(server, Some("marker")), &Default::default());
    Measured {
        sync_secs: synced.secs,
        sync_peak_kib: synced.hwm,
        steady_kib: synced.rss,
        relist_secs: relisted.secs,
        relist_peak_kib: relisted.hwm,
        relist_ratio: relisted.hwm as f64 / synced.rss as f64,
        sync_cpu_ms: synced.cpu,
        sync_user_ms: synced.user,
        sync_sys_ms: synced.sys,
        sync_faults: synced.faults,
        stream_secs: streamed.secs,
        stream_cpu_ms: streamed.cpu.saturating_sub(relisted.cpu),
        stream_user_ms: streamed.user.saturating_sub(relisted.user),
        stream_peak_kib: streamed.hwm,
    }
}

fn target(server: &TestServer, name: Option<&str>) -> Target {
    Target {
        name: name.map(Into::into),
        ..collection(server, ("", "v1", "configmaps"), Some("default"))
    }
}

/// Replaces `name`'s data (and, for the marker, sets the `stream` label).
/// `run` makes every round's payloads new: an update that changes nothing is a no-op for
/// the server (no new resourceVersion, no watch event), as for kube-apiserver.
fn update(server: &TestServer, name: &str, seq: usize, run: usize, stream: Option<&str>) {
    let mut labels = json!({"app": format!("app-{}", seq % 17)});
    if let Some(stream) = stream {
        labels["stream"] = json!(stream);
    }
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": {"payload": format!("{run:06}-{seq:08}{}", "y".repeat(1009))}});
    server
        .engine()
        .update(&target(server, Some(name)), obj, &WriteOptions::default())
        .unwrap();
}

fn create(server: &TestServer, name: &str, seq: usize) {
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": format!("app-{}", seq % 17)}},
        "data": {"payload": "x".repeat(1024)}});
    server
        .engine()
        .create(&target(server, None), obj, &WriteOptions::default())
        .unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // KUBEGEN_BENCH_WORKERS sets the workload's runtime threads (2 by default).
    if support::run_child_args(&args, |workload, url, n| async move {
        child(&workload, &url, n).await;
    }) {
        return;
    }
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench -- --list`: nothing to list.
    }
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        let n: usize = args[i + 1].parse().unwrap();
        serve(n);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--profile-sync") {
        profile_sync(args.get(i + 1).map_or("kubegen", String::as_str));
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    // KUBEGEN_BENCH_SIZES=100000 (comma-separated) picks the object counts.
    let sizes = support::env_sizes(if quick { &[10_000] } else { &[10_000, 100_000] });
    // KUBEGEN_BENCH_WORKLOADS=kubegen,floor picks the workloads.
    let workloads = support::env_workloads("kubegen,kube-rs,floor");
    // KUBEGEN_BENCH_ROUNDS=3 runs every workload three times (median reported).
    let rounds = support::env_rounds(1);
    let rt = support::server_runtime();
    println!(
        "| objects | workload | initial sync | sync CPU (user + kernel) | sync peak RSS | steady RSS | relist | relist peak RSS | relist peak / steady | N updates streamed | stream CPU | stream peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut marker_seq = 0;
    for &n in &sizes {
        let server = rt.block_on(async {
            TestServer::builder()
                .engine_config(EngineConfig::default().history_limit(1_000))
                .start()
                .await
                .unwrap()
        });
        for i in 0..n {
            create(&server, &format!("cm-{i:06}"), i);
        }
        let _guard = rt.enter();
        // Warm-up (not reported): the server's first full list and first round of updates
        // are slower (its heap grows), which would penalise whichever workload ran first.
        run_child("floor", &server, n, &mut marker_seq);
        // Rounds alternate the workload order; each figure is the median over rounds.
        let mut results: Vec<Vec<Measured>> = workloads.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for i in round_order(workloads.len(), round) {
                results[i].push(run_child(&workloads[i], &server, n, &mut marker_seq));
            }
        }
        for (workload, runs) in workloads.iter().zip(&results) {
            let m = Measured::median(runs);
            let listed = workload != "floor";
            let relist = if listed {
                format!("{:.2} s", m.relist_secs)
            } else {
                "—".to_owned()
            };
            let relist_peak = if listed {
                format!("{:.0} MiB", mib(m.relist_peak_kib))
            } else {
                "—".to_owned()
            };
            let ratio = if listed {
                format!("{:.2}×", m.relist_ratio)
            } else {
                "—".to_owned()
            };
            println!(
                "| {n} | {workload} | {:.2} s | {:.2} s ({:.2} + {:.2}) | {:.0} MiB | {:.0} MiB | {relist} | {relist_peak} | {ratio} | {:.2} s | {:.2} s | {:.0} MiB |",
                m.sync_secs,
                m.sync_cpu_ms as f64 / 1000.0,
                m.sync_user_ms as f64 / 1000.0,
                m.sync_sys_ms as f64 / 1000.0,
                mib(m.sync_peak_kib),
                mib(m.steady_kib),
                m.stream_secs,
                m.stream_cpu_ms as f64 / 1000.0,
                mib(m.stream_peak_kib),
            );
        }
        print_ratios(&workloads, &results);
        drop(server);
    }
}

/// The side-by-side table: kubegen / kube-rs per figure, the median of the
/// per-round ratios with their min–max (rounds pair the two tools), and kubegen's sync CPU
/// against the decode floor.
fn print_ratios(workloads: &[String], results: &[Vec<Measured>]) {
    let runs = |name: &str| {
        workloads
            .iter()
            .position(|w| w == name)
            .map(|i| &results[i])
    };
    let (Some(ours), Some(theirs)) = (runs("kubegen"), runs("kube-rs")) else {
        return;
    };
    let spread = |f: &dyn Fn(&Measured) -> f64, other: &[Measured]| ratio_spread(ours, other, f);
    println!();
    println!(
        "| figure | kubegen / kube-rs, median (min–max) of {} rounds |",
        ours.len()
    );
    println!("|---|---|");
    // The figures, then where the CPU goes: user space (decoding, caching) and the
    // kernel (mostly mapping and zeroing the pages a cache grows into: a minor fault a page).
    type Figure = fn(&Measured) -> f64;
    let rows: [(&str, Figure); 8] = [
        ("initial sync, wall", |m| m.sync_secs),
        ("initial sync, CPU", |m| m.sync_cpu_ms as f64),
        ("peak RSS after sync", |m| m.steady_kib as f64),
        ("watch, CPU for the update stream", |m| {
            m.stream_cpu_ms as f64
        }),
        ("initial sync, user-space CPU", |m| m.sync_user_ms as f64),
        ("initial sync, kernel CPU", |m| m.sync_sys_ms as f64),
        ("initial sync, minor page faults", |m| m.sync_faults as f64),
        ("watch, user-space CPU for the update stream", |m| {
            m.stream_user_ms as f64
        }),
    ];
    for (label, figure) in rows {
        println!("| {label} | {} |", spread(&figure, theirs));
    }
    if let Some(floor) = runs("floor") {
        println!(
            "| kubegen initial sync CPU / decode floor | {} |",
            spread(&|m| m.sync_cpu_ms as f64, floor)
        );
    }
}

/// Serves `n` ConfigMaps, prints the server's URL, and serves until killed (see the header).
fn serve(n: usize) {
    let rt = support::server_runtime();
    let server = rt.block_on(async { TestServer::builder().start().await.unwrap() });
    for i in 0..n {
        create(&server, &format!("cm-{i:06}"), i);
    }
    println!("{}", server.url());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
    }
}

/// Initial syncs only, server and client on separately named runtimes (see the header).
fn profile_sync(workload: &str) {
    let n: usize = std::env::var("KUBEGEN_BENCH_SIZES").map_or(100_000, |v| v.parse().unwrap());
    let rounds: usize = std::env::var("KUBEGEN_BENCH_ROUNDS").map_or(5, |v| v.parse().unwrap());
    let runtime = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()
            .unwrap()
    };
    let (server_rt, client_rt) = (runtime("server"), runtime("client"));
    let server = server_rt.block_on(async { TestServer::builder().start().await.unwrap() });
    for i in 0..n {
        create(&server, &format!("cm-{i:06}"), i);
    }
    for round in 0..rounds {
        let url = server.url();
        let secs = client_rt.block_on(async move {
            match workload {
                "floor" => {
                    let api = ResourceClient::<ConfigMap>::all(kubegen_client(&url));
                    list_all(n, |params| {
                        let api = api.clone();
                        async move { api.list(&params).await }
                    })
                    .await
                }
                // kube-rs's client fetching and decoding the same pages.
                "kube-rs-floor" => {
                    let api: kube::Api<ConfigMap> = kube::Api::all(kube_rs_client(&url));
                    list_all(n, |params| {
                        let api = api.clone();
                        async move { api.list(&params).await }
                    })
                    .await
                }
                "kube-rs" => {
                    let (_, task, secs) = kube_rs_sync(&url, n).await;
                    task.abort();
                    secs
                }
                "kubegen-deltafifo" => {
                    let (_, stop, secs) = kubegen_sync(
                        &url,
                        n,
                        namespace_indexers(),
                        QueueKind::DeltaFifo,
                        InitialListStrategy::default(),
                    )
                    .await;
                    stop.cancel();
                    secs
                }
                "kubegen-list" => {
                    let (_, stop, secs) = kubegen_sync(
                        &url,
                        n,
                        namespace_indexers(),
                        QueueKind::RealFifo,
                        InitialListStrategy::ListWatch,
                    )
                    .await;
                    stop.cancel();
                    secs
                }
                _ => {
                    let (_, stop, secs) = kubegen_sync(
                        &url,
                        n,
                        namespace_indexers(),
                        QueueKind::RealFifo,
                        InitialListStrategy::default(),
                    )
                    .await;
                    stop.cancel();
                    secs
                }
            }
        });
        println!("round {round}: {workload} synced {n} in {secs:.3} s");
    }
}
