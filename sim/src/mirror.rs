//! The controller under simulation: for every ConfigMap `x` it keeps a Secret `x-owned`
//! holding the ConfigMap's `v`, owned (controller reference) by the ConfigMap, so the test
//! server's garbage collector removes it with its owner. Built on `kubegen::controller`
//! (informers, the rate-limited workqueue, `owns::<Secret>()`), like sample-controller's
//! Foo → Deployment.
//!
//! It reads the owned Secret from the informer's cache through a
//! [`CachedClient`] with read-your-own-writes (KEP-5647), as a real controller does, and
//! keeps its own record of what it wrote (an oracle independent of the runtime's
//! `ConsistencyStore`): a reconcile that reads a Secret older than its own last write of it
//! is a violation the simulation reports.

use std::{collections::BTreeMap, sync::Arc};

use parking_lot::Mutex;

use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    cache::SharedIndexInformer,
    client::{Client, Error as ClientError, ResourceClient},
    controller::{Action, CachedClient, ReadError},
};

/// The suffix of the Secrets the controller owns.
pub const OWNED_SUFFIX: &str = "-owned";

/// What the reconcile needs.
#[derive(Debug)]
pub struct Mirror {
    /// The client the oracle reads the server with (never the reconcile).
    pub client: Client,
    /// Reads owned Secrets from the cache, writes them to the server.
    pub secrets: CachedClient<Secret>,
    /// The Secret informer behind `secrets` (what a violation reports of it).
    pub informer: SharedIndexInformer<Secret>,
    oracle: Mutex<Oracle>,
}

/// The controller's own record of its writes, and the reads that broke it.
#[derive(Debug, Default)]
struct Oracle {
    /// Owned Secret key → (resourceVersion, uid) of the controller's last write.
    written: BTreeMap<String, (u64, String)>,
    violations: Vec<String>,
    reconciles: usize,
}

/// A reconcile failed; the controller requeues it.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// A write (or the read behind it) failed at the server.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The cache has not caught up with the controller's own write in time.
    #[error(transparent)]
    Read(#[from] ReadError),
}

fn version(s: &Secret) -> u64 {
    s.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl Mirror {
    /// A controller context writing through `client` and reading Secrets through `secrets`.
    pub fn new(
        client: Client,
        secrets: CachedClient<Secret>,
        informer: SharedIndexInformer<Secret>,
    ) -> Mirror {
        Mirror {
            client,
            secrets,
            informer,
            oracle: Mutex::default(),
        }
    }

    /// Reconciles that read a Secret older than the controller's own last write of it.
    pub fn violations(&self) -> Vec<String> {
        self.oracle.lock().violations.clone()
    }

    /// How many reconciles ran.
    pub fn reconciles(&self) -> usize {
        self.oracle.lock().reconciles
    }

    fn wrote(&self, key: &str, written: &Secret) {
        let uid = written.metadata.uid.clone().unwrap_or_default();
        self.oracle
            .lock()
            .written
            .insert(key.to_owned(), (version(written), uid));
    }

    /// Checks what a reconcile of `primary` read for `key` (`cached`) against the
    /// controller's last write of it: an object of the same uid at an older
    /// resourceVersion, or no object while the server still has the one it wrote.
    async fn observe(
        &self,
        primary: &str,
        key: &str,
        name: &str,
        ns: &str,
        cached: Option<&Secret>,
    ) {
        let last = {
            let mut oracle = self.oracle.lock();
            oracle.reconciles += 1;
            oracle.written.get(key).cloned()
        };
        let Some((rv, uid)) = last else {
            return;
        };
        let stale = match cached {
            Some(s) => {
                let same = s.metadata.uid.as_deref() == Some(uid.as_str());
                (same && version(s) < rv).then(|| format!("rv {}", version(s)))
            }
            None => {
                let live = ResourceClient::<Secret>::namespaced(self.client.clone(), ns);
                match live.get(name).await {
                    Ok(s) if s.metadata.uid.as_deref() == Some(uid.as_str()) => {
                        Some("no object".to_owned())
                    }
                    _ => None,
                }
            }
        };
        if let Some(what) = stale {
            self.oracle.lock().violations.push(format!(
                "controller: a reconcile of {primary} read {what} for {key} from its cache, \
                 older than its own write at rv {rv} (cache at rv {}, informer at rv {})",
                self.informer.last_store_sync_resource_version(),
                self.informer.last_sync_resource_version()
            ));
        }
    }
}

/// A ConfigMap's `v`.
pub fn configmap_value(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref().and_then(|d| d.get("v")).cloned()
}

/// A Secret's `v`.
pub fn secret_value(s: &Secret) -> Option<String> {
    s.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
}

/// The Secret `name` in `namespace` with `v` = `value`.
pub fn secret(namespace: &str, name: &str, value: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "v".to_owned(),
            ByteString(value.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    }
}

fn owner(cm: &ConfigMap) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: cm.metadata.name.clone().unwrap_or_default(),
        uid: cm.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The controller's owner uid of `s`, if any.
pub fn owner_uid(s: &Secret) -> Option<&str> {
    s.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// Makes `cm`'s owned Secret hold its value and name it as owner, reading the Secret from
/// the cache.
pub async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Mirror>) -> Result<Action, MirrorError> {
    let namespace = cm.metadata.namespace.clone().unwrap_or_default();
    let primary = format!(
        "{namespace}/{}",
        cm.metadata.name.as_deref().unwrap_or_default()
    );
    let name = format!(
        "{}{OWNED_SUFFIX}",
        cm.metadata.name.as_deref().unwrap_or_default()
    );
    let key = format!("{namespace}/{name}");
    let value = configmap_value(&cm).unwrap_or_default();
    let cached = match ctx.secrets.get(Some(&namespace), &name).await {
        Ok(s) => Some(s),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into()),
    };
    ctx.observe(&primary, &key, &name, &namespace, cached.as_deref())
        .await;
    let pp = PostParams::default();
    let written = match cached {
        Some(existing) => {
            let uid = cm.metadata.uid.as_deref().unwrap_or_default();
            if secret_value(&existing).as_deref() == Some(value.as_str())
                && owner_uid(&existing) == Some(uid)
            {
                return Ok(Action::done());
            }
            let mut changed = (*existing).clone();
            changed.data = secret(&namespace, &name, &value).data;
            changed.metadata.owner_references = Some(vec![owner(&cm)]);
            ctx.secrets.update(&pp, &changed).await?
        }
        None => {
            let mut new = secret(&namespace, &name, &value);
            new.metadata.owner_references = Some(vec![owner(&cm)]);
            ctx.secrets.create(&pp, &new).await?
        }
    };
    ctx.wrote(&key, &written);
    Ok(Action::done())
}
