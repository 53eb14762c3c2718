//! Model-based tests of the cache layer: random operation sequences checked against
//! plain-`HashMap` models, and concurrent readers during writes.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::ObjectMeta;
use kubegen::cache::{
    CacheError, DeletedObject, Delta, DeltaFifo, DeltaFifoOptions, IndexFunc, Indexer, Indexers,
    NAMESPACE_INDEX, meta_namespace_key, namespace_indexers,
};
use proptest::prelude::*;

const NAMESPACES: [&str; 3] = ["ns-a", "ns-b", ""];
const NAMES: [&str; 5] = ["n0", "n1", "n2", "n3", "n4"];
const TEAMS: [&str; 4] = ["red", "blue", "green", "bad"];

/// An object description small enough for proptest to shrink well.
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    ns: usize,
    name: usize,
    teams: Vec<usize>,
    version: u32,
}

impl Spec {
    fn build(&self) -> ConfigMap {
        let labels: BTreeMap<String, String> = self
            .teams
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("team{i}"), TEAMS[*t].to_owned()))
            .collect();
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(NAMESPACES[self.ns].to_owned()).filter(|n| !n.is_empty()),
                name: Some(NAMES[self.name].to_owned()),
                resource_version: Some(self.version.to_string()),
                labels: Some(labels),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..NAMESPACES.len(),
        0..NAMES.len(),
        prop::collection::vec(0..TEAMS.len(), 0..3),
        0u32..1000,
    )
        .prop_map(|(ns, name, teams, version)| Spec {
            ns,
            name,
            teams,
            version,
        })
}

/// The team index: one value per `team*` label; fails on the value "bad".
fn team_values(obj: &ConfigMap) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (k, v) in obj.metadata.labels.iter().flatten() {
        if k.starts_with("team") {
            if v == "bad" {
                return Err("bad team".into());
            }
            out.push(v.clone());
        }
    }
    Ok(out)
}

fn team_index() -> IndexFunc<ConfigMap> {
    Arc::new(|obj: &ConfigMap| team_values(obj).map_err(Into::into))
}

#[derive(Debug, Clone)]
enum Op {
    Add(Spec),
    Update(Spec),
    Delete(Spec),
    Replace(Vec<Spec>),
    AddTeamIndex,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => spec().prop_map(Op::Add),
        3 => spec().prop_map(Op::Update),
        3 => spec().prop_map(Op::Delete),
        1 => prop::collection::vec(spec(), 0..6).prop_map(Op::Replace),
        1 => Just(Op::AddTeamIndex),
    ]
}

/// Recomputes an index from scratch: value -> keys.
fn model_index(
    model: &HashMap<String, ConfigMap>,
    f: impl Fn(&ConfigMap) -> Vec<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut index: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (key, obj) in model {
        for v in f(obj) {
            index.entry(v).or_default().insert(key.clone());
        }
    }
    index
}

fn check_agrees(indexer: &Indexer<ConfigMap>, model: &HashMap<String, ConfigMap>, team: bool) {
    let keys: BTreeSet<String> = indexer.list_keys().into_iter().collect();
    assert_eq!(keys, model.keys().cloned().collect::<BTreeSet<_>>());
    for (key, obj) in model {
        assert_eq!(indexer.get_by_key(key).as_deref(), Some(obj));
    }
    let mut indices: Vec<(&str, BTreeMap<String, BTreeSet<String>>)> = vec![(
        NAMESPACE_INDEX,
        model_index(model, |o| {
            vec![o.metadata.namespace.clone().unwrap_or_default()]
        }),
    )];
    if team {
        indices.push((
            "team",
            model_index(model, |o| team_values(o).unwrap_or_default()),
        ));
    } else {
        assert!(indexer.by_index("team", "red").is_err());
    }
    for (name, expected) in indices {
        let values: BTreeSet<String> = indexer.list_index_func_values(name).into_iter().collect();
        assert_eq!(
            values,
            expected.keys().cloned().collect::<BTreeSet<_>>(),
            "values of {name}"
        );
        for (value, keys) in &expected {
            let got: BTreeSet<String> = indexer
                .index_keys(name, value)
                .unwrap()
                .into_iter()
                .collect();
            assert_eq!(&got, keys, "index {name} value {value}");
            let objs = indexer.by_index(name, value).unwrap();
            assert_eq!(objs.len(), keys.len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// After every step the Indexer equals a HashMap model with indices recomputed from
    /// scratch; an index function error leaves both unchanged.
    #[test]
    fn indexer_agrees_with_a_hashmap_model(ops in prop::collection::vec(op(), 1..40)) {
        let indexer: Indexer<ConfigMap> = Indexer::new(namespace_indexers());
        let mut model: HashMap<String, ConfigMap> = HashMap::new();
        let mut team = false;
        let fails = |team: bool, o: &ConfigMap| team && team_values(o).is_err();
        for op in ops {
            match op {
                Op::Add(s) | Op::Update(s) => {
                    let obj = s.build();
                    let res = indexer.add(Arc::new(obj.clone()));
                    if fails(team, &obj) {
                        prop_assert!(matches!(res, Err(CacheError::IndexFunc { .. })), "expected an index function error");
                    } else {
                        res.unwrap();
                        model.insert(meta_namespace_key(&obj).unwrap(), obj);
                    }
                }
                Op::Delete(s) => {
                    let obj = s.build();
                    let key = meta_namespace_key(&obj).unwrap();
                    indexer.delete(&obj).unwrap();
                    model.remove(&key);
                }
                Op::Replace(specs) => {
                    let objs: Vec<ConfigMap> = specs.iter().map(Spec::build).collect();
                    let res = indexer.replace(objs.iter().cloned().map(Arc::new).collect(), "1");
                    // A key listed twice keeps its last object; only survivors are indexed.
                    let next: HashMap<String, ConfigMap> =
                        objs.into_iter().map(|o| (meta_namespace_key(&o).unwrap(), o)).collect();
                    if next.values().any(|o| fails(team, o)) {
                        prop_assert!(res.is_err());
                    } else {
                        res.unwrap();
                        model = next;
                    }
                }
                Op::AddTeamIndex => {
                    let res = indexer.add_indexers(Indexers::from([("team".to_owned(), team_index())]));
                    if team {
                        prop_assert!(matches!(res, Err(CacheError::IndexerConflict(_))));
                    } else if model.values().any(|o| team_values(o).is_err()) {
                        prop_assert!(res.is_err());
                    } else {
                        res.unwrap();
                        team = true;
                    }
                }
            }
            check_agrees(&indexer, &model, team);
        }
    }
}

/// What a producer (a reflector) does to the server-side state it mirrors.
#[derive(Debug, Clone)]
enum Produce {
    Upsert(usize, u32),
    Delete(usize),
    Relist(Vec<(usize, u32)>),
    /// A relist delivered in pages of two, with a pop after each page.
    PagedRelist(Vec<(usize, u32)>),
    Resync,
    Pop,
}

fn produce() -> impl Strategy<Value = Produce> {
    prop_oneof![
        4 => (0..NAMES.len(), 0u32..1000).prop_map(|(n, v)| Produce::Upsert(n, v)),
        2 => (0..NAMES.len()).prop_map(Produce::Delete),
        1 => prop::collection::vec((0..NAMES.len(), 0u32..1000), 0..5).prop_map(Produce::Relist),
        1 => prop::collection::vec((0..NAMES.len(), 0u32..1000), 0..5).prop_map(Produce::PagedRelist),
        1 => Just(Produce::Resync),
        4 => Just(Produce::Pop),
    ]
}

fn obj(name: usize, version: u32) -> Arc<ConfigMap> {
    Arc::new(
        Spec {
            ns: 0,
            name,
            teams: vec![],
            version,
        }
        .build(),
    )
}

/// Applies popped deltas the way an informer does: Added/Updated/Replaced/Sync upsert,
/// Deleted removes (a tombstone by its key).
fn apply(cache: &Indexer<ConfigMap>, deltas: &kubegen::cache::Deltas<ConfigMap>) {
    for delta in deltas {
        match delta {
            Delta::Deleted(d) => cache.delete_object(d).unwrap(),
            other => cache.update(other.object().unwrap().clone()).unwrap(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever interleaving of watch events, relists, resyncs and pops, the consumer's
    /// cache ends equal to the producer's final state once the queue is drained, and every
    /// tombstone names a key the consumer knew.
    #[test]
    fn delta_fifo_replays_to_the_producers_final_state(ops in prop::collection::vec(produce(), 1..60)) {
        let cache: Indexer<ConfigMap> = Indexer::default();
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::default().known_objects(cache.clone()).emit_delta_type_replaced(true),
        );
        let mut server: BTreeMap<usize, u32> = BTreeMap::new();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let pop_one = |fifo: &DeltaFifo<ConfigMap>| {
            rt.block_on(fifo.pop::<()>(|deltas, _| {
                for d in deltas {
                    if let Delta::Deleted(DeletedObject::Tombstone(t)) = d {
                        assert!(
                            cache.get_by_key(&t.key).is_some() || deltas.len() > 1,
                            "tombstone for a key the consumer never had: {}", t.key
                        );
                    }
                }
                apply(&cache, deltas);
                Ok(())
            }))
        };
        for op in ops {
            match op {
                Produce::Upsert(n, v) => {
                    if server.insert(n, v).is_some() {
                        fifo.update(obj(n, v)).unwrap();
                    } else {
                        fifo.add(obj(n, v)).unwrap();
                    }
                }
                Produce::Delete(n) => {
                    if let Some(v) = server.remove(&n) {
                        fifo.delete(obj(n, v)).unwrap();
                    }
                }
                Produce::Relist(items) => {
                    server = items.into_iter().collect();
                    let list = server.iter().map(|(n, v)| obj(*n, *v)).collect();
                    fifo.replace(list, "1").unwrap();
                }
                Produce::PagedRelist(items) => {
                    server = items.into_iter().collect();
                    let list: Vec<_> = server.iter().map(|(n, v)| obj(*n, *v)).collect();
                    fifo.replace_begin();
                    for page in list.chunks(2) {
                        fifo.replace_page(page.to_vec()).unwrap();
                        if !fifo.is_empty() {
                            pop_one(&fifo).unwrap();
                        }
                    }
                    fifo.replace_finish("1").unwrap();
                }
                Produce::Resync => fifo.resync().unwrap(),
                Produce::Pop => {
                    if !fifo.is_empty() {
                        pop_one(&fifo).unwrap();
                    }
                }
            }
        }
        while !fifo.is_empty() {
            pop_one(&fifo).unwrap();
        }
        let expected: BTreeMap<String, String> = server
            .iter()
            .map(|(n, v)| (format!("{}/{}", NAMESPACES[0], NAMES[*n]), v.to_string()))
            .collect();
        let got: BTreeMap<String, String> = cache
            .list()
            .iter()
            .map(|o| (meta_namespace_key(o.as_ref()).unwrap(), o.metadata.resource_version.clone().unwrap()))
            .collect();
        prop_assert_eq!(got, expected);
    }
}

/// Readers running while writers move objects between index values never see an object
/// under a value it does not have, nor a key without its object.
#[test]
fn concurrent_readers_never_see_a_half_updated_index() {
    let mut indexers = namespace_indexers();
    indexers.insert("team".into(), team_index());
    let indexer: Indexer<ConfigMap> = Indexer::new(indexers);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let indexer = indexer.clone();
            std::thread::spawn(move || {
                for round in 0..3000u32 {
                    let name = (round as usize + w) % NAMES.len();
                    let team = (round as usize) % 3;
                    let spec = Spec {
                        ns: w,
                        name,
                        teams: vec![team, (team + 1) % 3],
                        version: round,
                    };
                    match round % 7 {
                        0 => indexer.delete(&spec.build()).unwrap(),
                        6 => {
                            let objs = (0..3)
                                .map(|n| {
                                    Arc::new(
                                        Spec {
                                            ns: w,
                                            name: n,
                                            teams: vec![team],
                                            version: round,
                                        }
                                        .build(),
                                    )
                                })
                                .collect();
                            indexer.replace(objs, "1").unwrap();
                        }
                        _ => indexer.update(Arc::new(spec.build())).unwrap(),
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (indexer, stop) = (indexer.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for team in &TEAMS[..3] {
                        for obj in indexer.by_index("team", team).unwrap() {
                            assert!(team_values(&obj).unwrap().contains(&(*team).to_owned()));
                            checks += 1;
                        }
                    }
                    for ns in NAMESPACES {
                        for obj in indexer.by_index(NAMESPACE_INDEX, ns).unwrap() {
                            assert_eq!(obj.metadata.namespace.as_deref().unwrap_or(""), ns);
                        }
                    }
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let checks: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(checks > 0, "readers ran");
}
