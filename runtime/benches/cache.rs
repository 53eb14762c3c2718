//! Cache-layer benchmarks: `cargo bench -p kubegen --bench cache`.
//!
//! 100k ConfigMaps spread over 1k namespaces. Each kubegen figure is paired, where a
//! counterpart exists, with kube-runtime's reflector `Store` doing the same work in the same
//! run (kube-rs has no secondary index, so a namespace lookup is a filtered scan there).
#![allow(missing_docs, clippy::unwrap_used)]

use std::{collections::BTreeMap, hint::black_box, sync::Arc, time::Duration};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{reflector, watcher};
use kube_core::ObjectMeta;
use kubegen::cache::{DeltaFifo, DeltaFifoOptions, Indexer, NAMESPACE_INDEX, namespace_indexers};

const OBJECTS: usize = 100_000;
const NAMESPACES: usize = 1_000;

fn objects(version: u32) -> Vec<Arc<ConfigMap>> {
    (0..OBJECTS)
        .map(|i| {
            Arc::new(ConfigMap {
                metadata: ObjectMeta {
                    namespace: Some(format!("ns-{}", i % NAMESPACES)),
                    name: Some(format!("cm-{i}")),
                    resource_version: Some(version.to_string()),
                    labels: Some(BTreeMap::from([(
                        "app".to_owned(),
                        format!("app-{}", i % 17),
                    )])),
                    ..ObjectMeta::default()
                },
                data: Some(BTreeMap::from([("key".to_owned(), "x".repeat(64))])),
                ..ConfigMap::default()
            })
        })
        .collect()
}

fn filled_indexer(objs: &[Arc<ConfigMap>]) -> Indexer<ConfigMap> {
    let indexer = Indexer::new(namespace_indexers());
    for o in objs {
        indexer.add(o.clone()).unwrap();
    }
    indexer
}

fn kube_store(
    objs: &[Arc<ConfigMap>],
) -> (
    reflector::Store<ConfigMap>,
    reflector::store::Writer<ConfigMap>,
) {
    let mut writer = reflector::store::Writer::default();
    for o in objs {
        writer.apply_watcher_event(&watcher::Event::Apply((**o).clone()));
    }
    (writer.as_reader(), writer)
}

fn bench_indexer(c: &mut Criterion) {
    let v1 = objects(1);
    let v2 = objects(2);
    let owned_v1: Vec<ConfigMap> = v1.iter().map(|o| (**o).clone()).collect();
    let mut g = c.benchmark_group("add_100k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("kubegen_indexer", |b| {
        b.iter_batched(
            || v1.clone(),
            |objs| {
                let indexer = Indexer::new(namespace_indexers());
                for o in objs {
                    indexer.add(o).unwrap();
                }
                indexer
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("kube_rs_store", |b| {
        b.iter_batched(
            || owned_v1.clone(),
            |objs| {
                let mut writer = reflector::store::Writer::<ConfigMap>::default();
                for o in objs {
                    writer.apply_watcher_event(&watcher::Event::Apply(o));
                }
                writer
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("update_100k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let indexer = filled_indexer(&v1);
    g.bench_function("kubegen_indexer", |b| {
        b.iter_batched(
            || v2.clone(),
            |objs| {
                for o in objs {
                    indexer.update(o).unwrap();
                }
            },
            BatchSize::LargeInput,
        )
    });
    let (_, mut writer) = kube_store(&v1);
    let owned_v2: Vec<ConfigMap> = v2.iter().map(|o| (**o).clone()).collect();
    g.bench_function("kube_rs_store", |b| {
        b.iter_batched(
            || owned_v2.clone(),
            |objs| {
                for o in objs {
                    writer.apply_watcher_event(&watcher::Event::Apply(o));
                }
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("namespace_lookup_of_100_in_100k");
    let indexer = filled_indexer(&v1);
    g.bench_function("kubegen_by_index", |b| {
        b.iter(|| black_box(indexer.by_index(NAMESPACE_INDEX, "ns-42").unwrap().len()))
    });
    let (store, _writer) = kube_store(&v1);
    g.sample_size(20);
    g.bench_function("kube_rs_state_filter", |b| {
        b.iter(|| {
            black_box(
                store
                    .state()
                    .into_iter()
                    .filter(|o| o.metadata.namespace.as_deref() == Some("ns-42"))
                    .count(),
            )
        })
    });
    g.finish();

    let mut g = c.benchmark_group("relist_100k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let indexer = filled_indexer(&v1);
    g.bench_function("kubegen_indexer_replace", |b| {
        b.iter_batched(
            || v2.clone(),
            |objs| indexer.replace(objs, "2").unwrap(),
            BatchSize::LargeInput,
        )
    });
    let (_, mut writer) = kube_store(&v1);
    g.bench_function("kube_rs_store_init_cycle", |b| {
        b.iter_batched(
            || owned_v2.clone(),
            |objs| {
                writer.apply_watcher_event(&watcher::Event::Init);
                for o in objs {
                    writer.apply_watcher_event(&watcher::Event::InitApply(o));
                }
                writer.apply_watcher_event(&watcher::Event::InitDone);
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn bench_delta_fifo(c: &mut Criterion) {
    let v1 = objects(1);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("delta_fifo_100k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("add_then_pop_all", |b| {
        b.iter_batched(
            || v1.clone(),
            |objs| {
                let fifo = DeltaFifo::new(DeltaFifoOptions::default());
                for o in objs {
                    fifo.add(o).unwrap();
                }
                rt.block_on(async {
                    while !fifo.is_empty() {
                        fifo.pop::<()>(|d, _| {
                            black_box(d.len());
                            Ok(())
                        })
                        .await
                        .unwrap();
                    }
                });
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("replace_with_known_objects", |b| {
        let known = filled_indexer(&v1);
        b.iter_batched(
            || v1.clone(),
            |objs| {
                let fifo = DeltaFifo::new(
                    DeltaFifoOptions::default()
                        .known_objects(known.clone())
                        .emit_delta_type_replaced(true),
                );
                fifo.replace(objs, "1").unwrap();
                fifo
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench_indexer, bench_delta_fifo);
criterion_main!(benches);
