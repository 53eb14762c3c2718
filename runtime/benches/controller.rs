//! Controller benchmark: `cargo bench -p kubegen --bench controller` — no-op reconciles
//! over N ConfigMaps (`KUBEGEN_BENCH_SIZES`, 10000 by default) through kubegen's
//! `Controller` and kube-runtime's `Controller`, against the same in-memory test server,
//! in the same run: `KUBEGEN_BENCH_ROUNDS` rounds (3 by default) alternate the order, and
//! medians are reported. Both run `KUBEGEN_BENCH_CONCURRENCY` reconciles at once (4 by
//! default), without client-side throttling, on a 2-thread tokio runtime.
//!
//! A third row runs kubegen's controller with read-your-own-writes on (a `CachedClient`'s
//! consistency store gating every reconcile; nothing written, so every check is the fast
//! path), for the tracker's overhead.
//!
//! Two figures per tool: from start until every object has been reconciled once (initial
//! sync included: kubegen's streaming list, kube-runtime's paged list), and the reconcile
//! phase alone (first to last reconcile), as reconciles per second.
#![allow(missing_docs, clippy::unwrap_used)]

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen::{
    client::{Client, Config},
    controller::{Action, CachedClient, Controller},
    informers::SharedInformerFactory,
};
use kubegen_testserver::{
    TestServer,
    bench::{WriteOptions, collection},
};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Counts reconciles; notifies when `n` have run.
struct Counter {
    n: usize,
    done: AtomicUsize,
    first: OnceLock<Instant>,
    last: OnceLock<Instant>,
    all: Notify,
}

impl Counter {
    fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            n,
            done: AtomicUsize::new(0),
            first: OnceLock::new(),
            last: OnceLock::new(),
            all: Notify::new(),
        })
    }

    fn hit(&self) {
        let now = Instant::now();
        self.first.get_or_init(|| now);
        if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            self.last.get_or_init(|| now);
            self.all.notify_one();
        }
    }

    /// (start → all, first → last) in seconds.
    fn figures(&self, start: Instant) -> (f64, f64) {
        let (first, last) = (*self.first.get().unwrap(), *self.last.get().unwrap());
        ((last - start).as_secs_f64(), (last - first).as_secs_f64())
    }
}

async fn kubegen_run(
    url: &str,
    n: usize,
    concurrency: usize,
    read_your_writes: bool,
) -> (f64, f64) {
    let client =
        Client::try_from_config(Config::new(url.parse().unwrap()).with_rate_limit(-1.0, 0))
            .unwrap();
    let counter = Counter::new(n);
    let start = Instant::now();
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let mut builder =
        Controller::<ConfigMap>::builder(&factory).max_concurrent_reconciles(concurrency);
    if read_your_writes {
        let cached = CachedClient::<ConfigMap>::new(client.clone(), &factory).unwrap();
        builder = builder.read_your_writes(&cached);
    }
    let controller = builder.build();
    let stop = CancellationToken::new();
    let run = tokio::spawn(controller.run(
        |_cm: Arc<ConfigMap>, counter: Arc<Counter>| {
            counter.hit();
            futures::future::ready(Ok::<_, std::io::Error>(Action::done()))
        },
        counter.clone(),
        stop.clone(),
    ));
    counter.all.notified().await;
    let figures = counter.figures(start);
    stop.cancel();
    run.await.unwrap().unwrap();
    factory.shutdown().await;
    figures
}

async fn kube_rs_run(url: &str, n: usize, concurrency: usize) -> (f64, f64) {
    use kube::runtime::{controller, watcher};
    let client = kube::Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap();
    let counter = Counter::new(n);
    let start = Instant::now();
    let api: kube::Api<ConfigMap> = kube::Api::all(client);
    let stop = Arc::new(Notify::new());
    let trigger = stop.clone();
    let run = tokio::spawn(
        kube::runtime::Controller::new(api, watcher::Config::default())
            .with_config(controller::Config::default().concurrency(concurrency as u16))
            .graceful_shutdown_on(async move { trigger.notified().await })
            .run(
                |_cm: Arc<ConfigMap>, counter: Arc<Counter>| {
                    counter.hit();
                    futures::future::ready(Ok::<_, std::io::Error>(
                        kube::runtime::controller::Action::await_change(),
                    ))
                },
                |_, _, _| kube::runtime::controller::Action::await_change(),
                counter.clone(),
            )
            .for_each(|_| futures::future::ready(())),
    );
    counter.all.notified().await;
    let figures = counter.figures(start);
    stop.notify_one();
    run.await.unwrap();
    figures
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).map_or(default, |v| v.parse().unwrap())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench -- --list`: nothing to list.
    }
    let n = env_or("KUBEGEN_BENCH_SIZES", 10_000);
    let rounds = env_or("KUBEGEN_BENCH_ROUNDS", 3);
    let concurrency = env_or("KUBEGEN_BENCH_CONCURRENCY", 4);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(async { TestServer::start().await.unwrap() });
    let target = collection(&server, ("", "v1", "configmaps"), Some("default"));
    for i in 0..n {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:06}")},
            "data": {"payload": "x".repeat(1024)}});
        server
            .engine()
            .create(&target, obj, &WriteOptions::default())
            .unwrap();
    }
    let url = server.url();
    // Warm-up (not reported): the server's first lists are slower.
    rt.block_on(kubegen_run(&url, n, concurrency, false));
    rt.block_on(kube_rs_run(&url, n, concurrency));
    let (mut kubegen, mut kube_rs, mut ryw) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            kubegen.push(rt.block_on(kubegen_run(&url, n, concurrency, false)));
            ryw.push(rt.block_on(kubegen_run(&url, n, concurrency, true)));
            kube_rs.push(rt.block_on(kube_rs_run(&url, n, concurrency)));
        } else {
            kube_rs.push(rt.block_on(kube_rs_run(&url, n, concurrency)));
            ryw.push(rt.block_on(kubegen_run(&url, n, concurrency, true)));
            kubegen.push(rt.block_on(kubegen_run(&url, n, concurrency, false)));
        }
    }
    println!(
        "| objects | controller | start → all reconciled | reconcile phase | reconciles/s (phase) | reconciles/s (end to end) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rates = Vec::new();
    for (name, runs) in [
        ("kubegen", &kubegen),
        ("kube-runtime", &kube_rs),
        ("kubegen + read-your-writes", &ryw),
    ] {
        let total = median(runs.iter().map(|r| r.0).collect());
        let phase = median(runs.iter().map(|r| r.1).collect());
        println!(
            "| {n} | {name} | {total:.3} s | {phase:.3} s | {:.0} | {:.0} |",
            n as f64 / phase,
            n as f64 / total
        );
        rates.push((n as f64 / phase, n as f64 / total));
    }
    println!(
        "\nkubegen / kube-runtime reconciles per second: {:.2}× (phase), {:.2}× (end to end); concurrency {concurrency}, medians of {rounds} rounds",
        rates[0].0 / rates[1].0,
        rates[0].1 / rates[1].1
    );
    println!(
        "read-your-writes overhead (no writes pending): {:+.1}% reconcile phase time, {:+.1}% end to end",
        (rates[0].0 / rates[2].0 - 1.0) * 100.0,
        (rates[0].1 / rates[2].1 - 1.0) * 100.0
    );
}
