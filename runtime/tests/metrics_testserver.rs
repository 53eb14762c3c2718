//! client-go's metrics, recorded by a real informer and client against the test server and
//! read back in the Prometheus text format: the `informer_*` series (component-base
//! `metrics/prometheus/informer`), `reflector_*` (client-go `tools/cache/
//! reflector_metrics.go`) and `rest_client_*` (component-base `metrics/prometheus/
//! restclient`).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::{Client, ResourceClient},
    informers::SharedInformerFactory,
    metrics::PrometheusMetrics,
};
use kubegen_testserver::TestServer;
use kubegen_testserver::{FailRule, Verb};
use prometheus_client::registry::Registry;

mod informer_support;

use informer_support::{eventually, start_and_sync};

fn encode(registry: &Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).expect("encode");
    text
}

/// The value of the sample line starting with `series` (name and labels), if any.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_reflector_and_rest_client_series_carry_client_go_names() {
    let server = TestServer::start().await.expect("server");
    let mut registry = Registry::default();
    let metrics = PrometheusMetrics::new(&mut registry);
    let client: Client = Client::builder_from_config(server.config().expect("config"))
        .expect("builder")
        .metrics(Arc::new(metrics.clone()))
        .build();
    let host = server.url().trim_start_matches("http://").to_owned();
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    for name in ["a", "b", "c"] {
        api.create(&pp, &cm(name)).await.expect("create");
    }
    let factory = SharedInformerFactory::builder(client)
        .metrics(Arc::new(metrics))
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    start_and_sync(&factory).await;
    api.create(&pp, &cm("d")).await.expect("create");
    eventually("the fourth ConfigMap", Duration::from_secs(5), || {
        informer.indexer().len() == 4
    })
    .await;
    assert_eq!(informer.indexer().len(), 4);
    let store_rv: f64 = informer
        .last_store_sync_resource_version()
        .parse()
        .expect("numeric rv");

    let text = encode(&registry);
    let name = r#"{name="v1/configmaps"}"#;
    assert_eq!(
        sample(&text, &format!("informer_store_item_total{name}")),
        Some(4.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, &format!("informer_queued_item_total{name}")),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, &format!("informer_store_resource_version{name}")),
        Some(store_rv)
    );
    assert!(
        sample(
            &text,
            &format!("informer_event_processing_duration_seconds_count{name}")
        )
        .is_some_and(|n| n >= 2.0)
    );
    // The initial state came from a streaming list (the default): a watch, no list.
    assert_eq!(
        sample(&text, &format!("reflector_watchLists_total{name}")),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, &format!("reflector_lists_total{name}")),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, &format!("reflector_watches_total{name}")),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, &format!("reflector_last_resource_version{name}")),
        Some(store_rv)
    );
    let requests =
        format!(r#"rest_client_requests_total{{code="201",method="POST",host="{host}"}}"#);
    assert_eq!(sample(&text, &requests), Some(4.0), "{text}");
    let gets = format!(r#"rest_client_requests_total{{code="200",method="GET",host="{host}"}}"#);
    assert!(
        sample(&text, &gets).is_some_and(|n| n >= 1.0),
        "the watch: {text}"
    );
    let latency =
        format!(r#"rest_client_request_duration_seconds_count{{verb="POST",host="{host}"}}"#);
    assert_eq!(sample(&text, &latency), Some(4.0));
    factory.shutdown().await;
    // The watch ended: its duration and size (three initial events, one change) were
    // recorded.
    let text = encode(&registry);
    assert_eq!(
        sample(&text, &format!("reflector_items_per_watch_sum{name}")),
        Some(4.0),
        "{text}"
    );
}

/// A 429 retried by the client counts as a retry (client-go `rest_client_request_retries_total`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_are_counted_by_code() {
    let server = TestServer::start().await.expect("server");
    let mut registry = Registry::default();
    let metrics = PrometheusMetrics::new(&mut registry);
    let client = Client::builder_from_config(server.config().expect("config"))
        .expect("builder")
        .metrics(Arc::new(metrics))
        .build();
    let host = server.url().trim_start_matches("http://").to_owned();
    server.fail(
        FailRule::on(Verb::List)
            .resource("configmaps")
            .code(429)
            .retry_after(0),
    );
    ResourceClient::<ConfigMap>::namespaced(client, "default")
        .list(&Default::default())
        .await
        .expect("list after a retry");
    let text = encode(&registry);
    let retries =
        format!(r#"rest_client_request_retries_total{{code="429",verb="GET",host="{host}"}}"#);
    assert_eq!(sample(&text, &retries), Some(1.0), "{text}");
}
