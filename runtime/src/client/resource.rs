//! [`ResourceClient<K>`]: the typed client for one resource type, in one namespace, across
//! all namespaces, or cluster-wide — chosen at compile time from `K::Scope`.

use std::marker::PhantomData;

use futures::stream::BoxStream;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube_core::{
    ObjectList, Resource, WatchEvent,
    metadata::PartialObjectMeta,
    params::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
    request::Request,
};
use serde::{Serialize, de::DeserializeOwned};

use super::{
    client::Client,
    error::Error,
    strip::Strip,
    verbs::{DeleteResponse, RawApi, required_name},
};
use crate::{
    Object,
    applyconfig::{ApplyConfiguration, ApplyParams, WholeObject},
};

/// The stream [`ResourceClient::watch`] returns: events decoded as they arrive.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// A typed client for `K` (client-go's typed `PodInterface` and friends).
///
/// ```no_run
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_core::params::{ListParams, PostParams};
/// use kubegen::client::{Client, Config, ResourceClient};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = Client::try_from_config(Config::infer().await?)?;
/// // ConfigMaps are namespaced, so `namespaced` compiles; `cluster` would not.
/// let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(client, "default");
///
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// cms.create(&PostParams::default(), &cm).await?;
///
/// for cm in cms.list_all(&ListParams::default()).await?.items {
///     println!("{:?}", cm.metadata.name);
/// }
/// match cms.get("missing").await {
///     Err(e) if e.is_not_found() => println!("not there"),
///     other => println!("{:?}", other.map(|cm| cm.metadata.name)),
/// }
/// # Ok(())
/// # }
/// ```
pub struct ResourceClient<K> {
    raw: RawApi,
    _k: PhantomData<fn() -> K>,
}

impl<K> ResourceClient<K> {
    pub(crate) fn raw(&self) -> &RawApi {
        &self.raw
    }
}

impl<K> Clone for ResourceClient<K> {
    fn clone(&self) -> Self {
        Self {
            raw: self.raw.clone(),
            _k: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for ResourceClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("url_path", &self.raw.request.url_path)
            .field("kind", &self.raw.kind)
            .finish()
    }
}

impl<K: Object + Resource<Scope = NamespaceResourceScope>> ResourceClient<K> {
    /// A client for `K` objects in `namespace`.
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self::at(client, Some(namespace))
    }

    /// A client for `K` objects in the client's default namespace.
    pub fn default_namespaced(client: Client) -> Self {
        let ns = client.default_namespace().to_string();
        Self::at(client, Some(&ns))
    }
}

impl<K: Object + Resource<Scope = ClusterResourceScope>> ResourceClient<K> {
    /// A client for cluster-scoped `K` objects.
    pub fn cluster(client: Client) -> Self {
        Self::at(client, None)
    }
}

impl<K: Object> ResourceClient<K> {
    /// A client for `K` across all namespaces (list, watch, delete_collection; for a
    /// cluster-scoped `K` the same as `cluster`).
    pub fn all(client: Client) -> Self {
        Self::at(client, None)
    }

    /// A client for `K` in `namespace` when `K` is namespaced and a namespace is given;
    /// otherwise across all namespaces (or cluster-wide). For generic code such as informer
    /// factories, where the scope is only known through `K`.
    pub fn scoped(client: Client, namespace: Option<&str>) -> Self {
        use crate::ResourceScope;
        Self::at(
            client,
            namespace.filter(|_| <K::Scope as ResourceScope>::NAMESPACED),
        )
    }

    fn at(client: Client, namespace: Option<&str>) -> Self {
        Self {
            raw: RawApi {
                client,
                request: Request::new(K::url_path(&(), namespace)),
                api_version: K::api_version(&()).into_owned(),
                kind: K::kind(&()).into_owned(),
                namespace: namespace.map(str::to_string),
            },
            _k: PhantomData,
        }
    }

    /// The namespace, if the client is bound to one.
    pub fn namespace(&self) -> Option<&str> {
        self.raw.namespace.as_deref()
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.raw.client
    }

    /// Creates `obj`.
    pub async fn create(&self, pp: &PostParams, obj: &K) -> Result<K, Error> {
        self.raw.create(pp, obj).await
    }

    /// Gets the object called `name` (the latest version).
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        self.raw.get(name, &GetParams::default()).await
    }

    /// Gets the object called `name` with explicit parameters (e.g. from the watch cache).
    pub async fn get_with(&self, name: &str, gp: &GetParams) -> Result<K, Error> {
        self.raw.get(name, gp).await
    }

    /// Gets only the metadata of `name`.
    pub async fn get_metadata(
        &self,
        name: &str,
        gp: &GetParams,
    ) -> Result<PartialObjectMeta<K>, Error> {
        self.raw.get_metadata(name, gp).await
    }

    /// One page of objects (honouring `limit` and `continue_token`).
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<K>, Error> {
        self.raw.list(lp, Strip::NONE).await
    }

    /// Every object, following continue tokens page by page (`lp.limit`, or 500 per page);
    /// when a continue token expires (410) the list starts over.
    pub async fn list_all(&self, lp: &ListParams) -> Result<ObjectList<K>, Error> {
        self.raw.list_all(lp).await
    }

    /// One page of metadata-only objects.
    pub async fn list_metadata(
        &self,
        lp: &ListParams,
    ) -> Result<ObjectList<PartialObjectMeta<K>>, Error> {
        self.raw.list_metadata(lp, Strip::NONE).await
    }

    /// Replaces the object named in `obj.metadata.name` (a stale resourceVersion is a 409
    /// conflict).
    pub async fn update(&self, pp: &PostParams, obj: &K) -> Result<K, Error> {
        let name = required_name(obj.meta().name.as_deref())?;
        self.raw.replace(name, pp, obj).await
    }

    /// Replaces the status subresource of the object named in `obj`.
    pub async fn update_status(&self, pp: &PostParams, obj: &K) -> Result<K, Error> {
        let name = required_name(obj.meta().name.as_deref())?;
        self.raw.replace_subresource("status", name, pp, obj).await
    }

    /// Patches `name` (merge, JSON, strategic or apply).
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.raw.patch(name, pp, patch).await
    }

    /// Patches the status subresource of `name`.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.raw.patch_subresource("status", name, pp, patch).await
    }

    /// Server-side apply of `obj` as `field_manager` (`force` takes over conflicting fields).
    pub async fn apply(&self, obj: &K, field_manager: &str, force: bool) -> Result<K, Error> {
        let params = whole_object_params(field_manager, force);
        self.apply_configuration(&WholeObject(obj), &params).await
    }

    /// Server-side apply of `obj`'s status as `field_manager`.
    pub async fn apply_status(
        &self,
        obj: &K,
        field_manager: &str,
        force: bool,
    ) -> Result<K, Error> {
        let params = whole_object_params(field_manager, force);
        self.apply_configuration_status(&WholeObject(obj), &params)
            .await
    }

    /// Server-side apply of an apply configuration: only the fields it sets are sent, so
    /// only those become `params.field_manager`'s (client-go's typed `Apply`). Its name is
    /// the request's; `apiVersion` and `kind` are filled in when it lacks them.
    pub async fn apply_configuration<C>(&self, config: &C, params: &ApplyParams) -> Result<K, Error>
    where
        C: ApplyConfiguration<Object = K>,
    {
        let name = required_name(config.name())?;
        self.raw
            .patch(name, &params.patch_params(), &Patch::Apply(config))
            .await
    }

    /// Server-side apply of an apply configuration to the status subresource (client-go's
    /// typed `ApplyStatus`): only its `status` fields are taken by the server.
    pub async fn apply_configuration_status<C>(
        &self,
        config: &C,
        params: &ApplyParams,
    ) -> Result<K, Error>
    where
        C: ApplyConfiguration<Object = K>,
    {
        let name = required_name(config.name())?;
        self.raw
            .patch_subresource(
                "status",
                name,
                &params.patch_params(),
                &Patch::Apply(config),
            )
            .await
    }

    /// Deletes `name`: the object (with a deletionTimestamp while finalizers run) or a Status.
    pub async fn delete(&self, name: &str, dp: &DeleteParams) -> Result<DeleteResponse<K>, Error> {
        self.raw.delete(name, dp).await
    }

    /// Deletes every object matching `lp`'s selectors.
    pub async fn delete_collection(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<DeleteResponse<ObjectList<K>>, Error> {
        self.raw.delete_collection(dp, lp).await
    }

    /// Watches from `resource_version`: a stream of events decoded as they arrive; a
    /// malformed line is one `Err` item and the stream goes on, an `ERROR` event carries the
    /// server's `Status`.
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error> {
        self.raw.watch(wp, resource_version, Strip::NONE).await
    }

    /// Watches metadata only.
    pub async fn watch_metadata(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<BoxStream<'static, Result<WatchEvent<PartialObjectMeta<K>>, Error>>, Error> {
        self.raw
            .watch_metadata(wp, resource_version, Strip::NONE)
            .await
    }

    /// Gets a subresource (e.g. `scale`) decoded as `R`.
    pub async fn get_subresource<R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
    ) -> Result<R, Error> {
        let req = self.raw.request.get_subresource(subresource, name)?;
        self.raw.client.request(req).await
    }
}

pub(crate) fn apply_params(field_manager: &str, force: bool) -> PatchParams {
    whole_object_params(field_manager, force).patch_params()
}

/// The [`ApplyParams`] of the whole-object apply methods' `field_manager, force` pair.
fn whole_object_params(field_manager: &str, force: bool) -> ApplyParams {
    ApplyParams {
        force,
        ..ApplyParams::new(field_manager)
    }
}
