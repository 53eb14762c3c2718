//! Decode CPU of the informer's list and watch path, JSON against CBOR (KEP-4222):
//! `cargo bench -p kubegen --bench cbor` (`KUBEGEN_BENCH_SIZES=10000` the object count,
//! `KUBEGEN_BENCH_ROUNDS=7` the rounds; medians are reported, and rounds alternate which
//! encoding goes first).
//!
//! The test server serves N ConfigMaps shaped as the informer bench's (1 KiB of data, a
//! label); the bench captures, once, the whole list and a watch replaying one update per
//! object, each as `application/json` and as `application/cbor` / `application/cbor-seq`.
//! It then decodes the captured bodies through the client's own path — a
//! `ResourceClient<ConfigMap>` `list` and `watch` over a transport that answers with the
//! captured bytes and their Content-Type — on one thread, timing that thread's CPU
//! (`CLOCK_THREAD_CPUTIME_ID`). The server takes no part in the figures.
//!
//! As a smoke test (`cargo test -p kubegen --bench cbor`: the binary runs without
//! `--bench`) it does one round on 200 objects and checks both encodings decode to the
//! same objects.
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    WatchEvent,
    params::{ListParams, WatchParams},
};
use kubegen::client::{
    Body, BoxFuture, Client, ContentType, ResourceClient, Transport, TransportError,
};
use kubegen_testserver::{
    EngineConfig, TestServer,
    bench::{Target, WriteOptions},
};
use serde_json::json;
use support::{env_rounds, env_sizes, median, server_runtime};

/// CPU time of the calling thread, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// Answers every request with one captured body: a list, or a watch stream.
struct Replay {
    list: (Bytes, &'static str),
    watch: (Bytes, &'static str),
}

impl Transport for Replay {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let watch = request
            .uri()
            .query()
            .is_some_and(|q| q.contains("watch=true"));
        let (body, content_type) = if watch { &self.watch } else { &self.list };
        let resp = http::Response::builder()
            .status(200)
            .header(http::header::CONTENT_TYPE, *content_type)
            .body(Body::from_bytes(body.clone()))
            .unwrap();
        Box::pin(async move { Ok(resp) })
    }
}

fn target(server: &TestServer, name: Option<&str>) -> Target {
    Target {
        rt: server
            .engine()
            .registry()
            .get("", "v1", "configmaps")
            .unwrap(),
        namespace: Some("default".into()),
        name: name.map(Into::into),
        subresource: None,
    }
}

fn object(name: &str, seq: usize, payload: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": format!("app-{}", seq % 17)}},
        "data": {"payload": payload}})
}

/// GET `path_and_query` with `accept`: the body and its Content-Type.
async fn capture(client: &Client, path_and_query: &str, accept: &str) -> (Bytes, String) {
    let request = http::Request::get(path_and_query)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .unwrap();
    let resp = client.send(request).await.unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()[http::header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    (resp.into_body().collect().await.unwrap(), ct)
}

/// One encoding's captured bodies.
struct Captured {
    name: &'static str,
    replay: Arc<Replay>,
}

/// Decodes the list and the watch once: (list CPU ns, watch CPU ns, objects, events).
fn decode_once(rt: &tokio::runtime::Runtime, c: &Captured) -> (u64, u64, usize, usize) {
    let client = Client::builder_arc(c.replay.clone())
        .content_type(ContentType::Cbor)
        .build();
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
    rt.block_on(async {
        let start = thread_cpu_ns();
        let list = api.list(&ListParams::default()).await.unwrap();
        let list_ns = thread_cpu_ns() - start;
        let start = thread_cpu_ns();
        let mut events = api.watch(&WatchParams::default(), "1").await.unwrap();
        let mut n = 0;
        while let Some(event) = events.next().await {
            match event.unwrap() {
                WatchEvent::Modified(_) => n += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
        let watch_ns = thread_cpu_ns() - start;
        (list_ns, watch_ns, list.items.len(), n)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes `--bench`; `cargo test --bench cbor` does not.
    let smoke = !args.iter().any(|a| a == "--bench");
    let n = if smoke { 200 } else { env_sizes(&[10_000])[0] };
    let rounds = if smoke { 1 } else { env_rounds(7) };

    let server_rt = server_runtime();
    let (server, json_c, cbor_c) = server_rt.block_on(async {
        let server = TestServer::builder()
            .cluster(kubegen_testserver::ClusterConfig::none())
            .engine_config(EngineConfig::default().history_limit(n * 2 + 100))
            .start()
            .await
            .unwrap();
        for seq in 0..n {
            let name = format!("cm-{seq:06}");
            let obj = object(&name, seq, &"x".repeat(1024));
            server
                .engine()
                .create(&target(&server, None), obj, &WriteOptions::default())
                .unwrap();
        }
        let client = server.client().unwrap();
        let path = "/api/v1/namespaces/default/configmaps";
        let (json_list, _) = capture(&client, path, "application/json").await;
        let (cbor_list, ct) = capture(&client, path, "application/cbor").await;
        assert_eq!(ct, "application/cbor");
        let rv = serde_json::from_slice::<serde_json::Value>(&json_list).unwrap()["metadata"]
            ["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();
        for seq in 0..n {
            let name = format!("cm-{seq:06}");
            let obj = object(&name, seq, &format!("{seq:08}{}", "y".repeat(1016)));
            server
                .engine()
                .update(&target(&server, Some(&name)), obj, &WriteOptions::default())
                .unwrap();
        }
        // The updates since the list, replayed from the server's history; the watch ends
        // at its timeout.
        let watch = format!("{path}?watch=true&resourceVersion={rv}&timeoutSeconds=1");
        let (json_watch, _) = capture(&client, &watch, "application/json").await;
        let (cbor_watch, ct) = capture(&client, &watch, "application/cbor").await;
        assert_eq!(ct, "application/cbor-seq");
        let json_c = Captured {
            name: "json",
            replay: Arc::new(Replay {
                list: (json_list, "application/json"),
                watch: (json_watch, "application/json"),
            }),
        };
        let cbor_c = Captured {
            name: "cbor",
            replay: Arc::new(Replay {
                list: (cbor_list, "application/cbor"),
                watch: (cbor_watch, "application/cbor-seq"),
            }),
        };
        (server, json_c, cbor_c)
    });
    drop(server);
    drop(server_rt);
    for c in [&json_c, &cbor_c] {
        println!(
            "{}: list {} KiB, watch {} KiB",
            c.name,
            c.replay.list.0.len() / 1024,
            c.replay.watch.0.len() / 1024
        );
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Both encodings decode to the same objects (the smoke's check).
    {
        let decode = |c: &Captured| {
            let client = Client::builder_arc(c.replay.clone())
                .content_type(ContentType::Cbor)
                .build();
            let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
            rt.block_on(async { api.list(&ListParams::default()).await.unwrap().items })
        };
        assert_eq!(decode(&json_c), decode(&cbor_c));
    }
    // A warm-up round, unreported.
    decode_once(&rt, &json_c);
    decode_once(&rt, &cbor_c);
    let mut json_runs = Vec::new();
    let mut cbor_runs = Vec::new();
    for round in 0..rounds {
        let order: [(&Captured, &mut Vec<_>); 2] = if round % 2 == 0 {
            [(&json_c, &mut json_runs), (&cbor_c, &mut cbor_runs)]
        } else {
            [(&cbor_c, &mut cbor_runs), (&json_c, &mut json_runs)]
        };
        for (c, runs) in order {
            let (list_ns, watch_ns, objects, events) = decode_once(&rt, c);
            assert_eq!((objects, events), (n, n), "{}", c.name);
            runs.push((list_ns, watch_ns));
        }
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let list = |runs: &[(u64, u64)]| median(runs.iter().map(|r| r.0));
    let watch = |runs: &[(u64, u64)]| median(runs.iter().map(|r| r.1));
    println!("{n} ConfigMaps, {rounds} rounds, median decode CPU of one thread:");
    println!(
        "  list:  json {:8.1} ms  cbor {:8.1} ms  cbor/json {:.2}",
        ms(list(&json_runs)),
        ms(list(&cbor_runs)),
        list(&cbor_runs) as f64 / list(&json_runs).max(1) as f64
    );
    println!(
        "  watch: json {:8.1} ms  cbor {:8.1} ms  cbor/json {:.2}",
        ms(watch(&json_runs)),
        ms(watch(&cbor_runs)),
        watch(&cbor_runs) as f64 / watch(&json_runs).max(1) as f64
    );
}
