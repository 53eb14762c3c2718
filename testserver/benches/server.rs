//! Scale benchmark of the test server, printing figures:
//!
//! * a paginated HTTP list (limit=500) over 100k ConfigMaps, and one unpaginated list;
//! * watch fan-out: writes as fast as the engine takes them, delivered over HTTP to
//!   several watchers, reported as events per second per watcher and in total;
//! * resident memory before and after loading the objects;
//! * creates of a custom resource (cert-manager's Certificate, CRD from `testdata/crds`),
//!   which go through the whole schema admission (prune, default, validate, CEL).
//!
//! `cargo bench -p kubegen-testserver --bench server` (add `-- --quick` for a small run,
//! `-- --no-validation` for the permissive mode without schema enforcement, to compare).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use kubegen_testserver::{
    ClusterConfig, EngineConfig, TestServer,
    bench::{Target, WriteOptions, collection},
};
use serde_json::{Value, json};

fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn config_maps(server: &TestServer, ns: &str) -> Target {
    collection(server, ("", "v1", "configmaps"), Some(ns))
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "true", "shard": (name.len() % 7).to_string()}},
        "data": {"key": "value-0123456789", "other": "abcdefghijklmnopqrstuvwxyz"}})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let validation = !std::env::args().any(|a| a == "--no-validation");
    let (objects, events, watchers) = if quick {
        (10_000, 5_000, 3)
    } else {
        (100_000, 50_000, 4)
    };
    // The API server alone: the cluster's controllers are measured by `benches/cluster.rs`.
    let server = TestServer::builder()
        .cluster(ClusterConfig::none())
        .engine_config(
            EngineConfig::default()
                .history_limit(200_000)
                .schema_validation(validation),
        )
        .start()
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let base = server.url();

    let rss0 = rss_mib();
    let t = config_maps(&server, "default");
    let start = Instant::now();
    for i in 0..objects {
        server
            .engine()
            .create(
                &t,
                configmap(&format!("cm-{i:06}")),
                &WriteOptions::default(),
            )
            .unwrap();
    }
    let load = start.elapsed();
    let rss1 = rss_mib();
    println!(
        "load: {objects} ConfigMaps in {:.2}s ({:.0} creates/s); RSS {:.0} MiB -> {:.0} MiB ({:.2} KiB/object incl. history)",
        load.as_secs_f64(),
        objects as f64 / load.as_secs_f64(),
        rss0,
        rss1,
        (rss1 - rss0) * 1024.0 / objects as f64
    );

    // Custom resource creates (schema admission: prune, default, validate, CEL).
    server
        .load_crd_file(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/crds/cert-manager.io_certificates.yaml"),
        )
        .unwrap();
    let certs = collection(
        &server,
        ("cert-manager.io", "v1", "certificates"),
        Some("kube-system"),
    );
    let n = objects / 10;
    let start = Instant::now();
    for i in 0..n {
        server
            .engine()
            .create(
                &certs,
                json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                    "metadata": {"name": format!("c-{i:06}")},
                    "spec": {"secretName": "s", "dnsNames": ["a.example.com", "b.example.com"],
                        "issuerRef": {"name": "ca", "kind": "Issuer"}, "duration": "2160h"}}),
                &WriteOptions::default(),
            )
            .unwrap();
    }
    let took = start.elapsed();
    println!(
        "CR creates (schema validation {}): {n} Certificates in {:.2}s ({:.0} creates/s, {:.1} µs/create)",
        if validation { "on" } else { "off" },
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64(),
        took.as_secs_f64() * 1e6 / n as f64
    );

    // A CR kind with defaults (Prometheus ServiceMonitor): bodies are defaulted here, so
    // both modes store the same objects; with validation on, reads only check for missing
    // defaults (`read_back`, no copy). Listed over HTTP.
    let sm_crd = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/crds/monitoring.coreos.com_servicemonitors.yaml");
    server.load_crd_file(&sm_crd).unwrap();
    let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(&sm_crd).unwrap()).unwrap();
    let sm_schema = kubegen_testserver::bench::CrdSchema::compile(
        "monitoring.coreos.com",
        "ServiceMonitor",
        &crd["spec"]["versions"][0],
        0,
    )
    .unwrap();
    let monitors = collection(
        &server,
        ("monitoring.coreos.com", "v1", "servicemonitors"),
        Some("kube-node-lease"),
    );
    for i in 0..n {
        let mut body = json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": format!("m-{i:06}")},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "endpoints": [{"port": "web",
                "interval": "30s", "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_name"], "targetLabel": "pod"}],
                "basicAuth": {"username": {"key": "u"}, "password": {"key": "p"}}}]}});
        sm_schema.apply_defaults(&mut body);
        server
            .engine()
            .create(&monitors, body, &WriteOptions::default())
            .unwrap();
    }
    let start = Instant::now();
    let mut listed = 0usize;
    let mut bytes = 0usize;
    let mut token: Option<String> = None;
    loop {
        let mut url = format!(
            "{base}/apis/monitoring.coreos.com/v1/namespaces/kube-node-lease/servicemonitors?limit=500"
        );
        if let Some(t) = &token {
            url.push_str(&format!("&continue={t}"));
        }
        let body = http.get(url).send().await.unwrap().bytes().await.unwrap();
        bytes += body.len();
        let page: Value = serde_json::from_slice(&body).unwrap();
        listed += page["items"].as_array().unwrap().len();
        match page["metadata"]["continue"].as_str() {
            Some(c) => token = Some(c.to_string()),
            None => break,
        }
    }
    let took = start.elapsed();
    assert_eq!(listed, n);
    println!(
        "CR list (schema with defaults, validation {}): {n} ServiceMonitors, {bytes} bytes in {:.3}s ({:.0} items/s)",
        if validation { "on" } else { "off" },
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );

    // Paginated list.
    let start = Instant::now();
    let mut seen = 0usize;
    let mut pages = 0usize;
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("{base}/api/v1/namespaces/default/configmaps?limit=500");
        if let Some(t) = &token {
            url.push_str(&format!("&continue={t}"));
        }
        let page: Value = http.get(url).send().await.unwrap().json().await.unwrap();
        seen += page["items"].as_array().unwrap().len();
        pages += 1;
        match page["metadata"]["continue"].as_str() {
            Some(c) => token = Some(c.to_string()),
            None => break,
        }
    }
    let paged = start.elapsed();
    assert_eq!(seen, objects);
    println!(
        "paginated list: {seen} items in {pages} pages of 500 in {:.2}s ({:.0} items/s, {:.1} ms/page)",
        paged.as_secs_f64(),
        seen as f64 / paged.as_secs_f64(),
        paged.as_secs_f64() * 1000.0 / pages as f64
    );
    let start = Instant::now();
    let body = http
        .get(format!("{base}/api/v1/namespaces/default/configmaps"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let full = start.elapsed();
    println!(
        "full list: {objects} items, {:.1} MiB in {:.2}s",
        body.len() as f64 / 1048576.0,
        full.as_secs_f64()
    );

    // Watch fan-out.
    let mut handles = Vec::new();
    for _ in 0..watchers {
        let resp = http
            .get(format!(
                "{base}/api/v1/namespaces/kube-public/configmaps?watch=true"
            ))
            .send()
            .await
            .unwrap();
        handles.push(tokio::spawn(async move {
            let mut stream = resp.bytes_stream();
            let mut lines = 0usize;
            let mut first: Option<Instant> = None;
            while lines < events {
                match tokio::time::timeout(Duration::from_secs(30), stream.next()).await {
                    Ok(Some(Ok(chunk))) => {
                        first.get_or_insert_with(Instant::now);
                        lines += chunk.iter().filter(|b| **b == b'\n').count();
                    }
                    _ => break,
                }
            }
            (lines, Instant::now())
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = config_maps(&server, "kube-public");
    let start = Instant::now();
    let engine = server.engine().clone();
    tokio::task::spawn_blocking(move || {
        for i in 0..events {
            engine
                .create(
                    &t,
                    configmap(&format!("w-{i:06}")),
                    &WriteOptions::default(),
                )
                .unwrap();
        }
    })
    .await
    .unwrap();
    let written = start.elapsed();
    let mut total = 0usize;
    let mut last = start;
    for h in handles {
        let (lines, done) = h.await.unwrap();
        assert_eq!(lines, events, "every watcher got every event");
        total += lines;
        last = last.max(done);
    }
    let delivered = last.duration_since(start);
    println!(
        "watch: {events} events written in {:.2}s ({:.0}/s); delivered to {watchers} watchers in {:.2}s: {:.0} events/s per watcher, {:.0} events/s total",
        written.as_secs_f64(),
        events as f64 / written.as_secs_f64(),
        delivered.as_secs_f64(),
        events as f64 / delivered.as_secs_f64(),
        total as f64 / delivered.as_secs_f64()
    );
}
