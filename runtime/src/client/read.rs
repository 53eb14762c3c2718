//! [`ReadClient<K>`]: a typed client with the read verbs only (get, list, watch), for
//! types that must never be written back, such as [projections](crate::projection).
//!
//! client-gen spells the same restriction with `+genclient:onlyVerbs=get,list,watch`
//! (kubegen's generator too); here it is one generic type over [`ResourceClient`], whose
//! write methods it does not expose, so a write does not compile.

use kube_core::{
    NamespaceResourceScope, ObjectList, Resource,
    params::{GetParams, ListParams, WatchParams},
};

use super::{Client, Error, ResourceClient, WatchStream};
use crate::Object;

/// The read verbs of [`ResourceClient<K>`]: `get`, `list`, `list_all` and `watch`.
///
/// ```
/// # use k8s_openapi::api::core::v1::Pod;
/// # use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
/// #[derive(Clone, Debug, kubegen::Projection)]
/// #[projection(of = Pod)]
/// struct PodPhase {
///     metadata: ObjectMeta,
///     #[projection(path = "status.phase")]
///     phase: Option<String>,
/// }
///
/// # fn demo(client: kubegen::client::Client) {
/// let pods = kubegen::client::ReadClient::<PodPhase>::namespaced(client, "prod");
/// // pods.get("web-0"), pods.list(..), pods.watch(..): there is no create, update or patch.
/// # }
/// ```
pub struct ReadClient<K> {
    inner: ResourceClient<K>,
}

impl<K> ReadClient<K> {
    /// The typed client underneath (for list-watches, which only read).
    pub(crate) fn resource(&self) -> &ResourceClient<K> {
        &self.inner
    }
}

impl<K> Clone for ReadClient<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K> std::fmt::Debug for ReadClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ReadClient").field(&self.inner).finish()
    }
}

impl<K: Object + Resource<Scope = NamespaceResourceScope>> ReadClient<K> {
    /// Reads `K` objects in `namespace`.
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self {
            inner: ResourceClient::namespaced(client, namespace),
        }
    }
}

impl<K: Object> ReadClient<K> {
    /// Reads `K` objects in every namespace (or cluster-wide, for a cluster-scoped `K`).
    pub fn all(client: Client) -> Self {
        Self {
            inner: ResourceClient::all(client),
        }
    }

    /// Reads `K` objects in `namespace` when `K` is namespaced and a namespace is given;
    /// otherwise in every namespace (or cluster-wide).
    pub fn scoped(client: Client, namespace: Option<&str>) -> Self {
        Self {
            inner: ResourceClient::scoped(client, namespace),
        }
    }

    /// Gets the object called `name`.
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        self.inner.get(name).await
    }

    /// Gets the object called `name` with explicit parameters.
    pub async fn get_with(&self, name: &str, gp: &GetParams) -> Result<K, Error> {
        self.inner.get_with(name, gp).await
    }

    /// One page of objects.
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<K>, Error> {
        self.inner.list(lp).await
    }

    /// Every object, page by page.
    pub async fn list_all(&self, lp: &ListParams) -> Result<ObjectList<K>, Error> {
        self.inner.list_all(lp).await
    }

    /// Watches from `resource_version`.
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error> {
        self.inner.watch(wp, resource_version).await
    }
}
