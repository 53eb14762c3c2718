//! [`ListerWatcher`], what a reflector lists and watches (client-go's `ListerWatcher`);
//! [`ListWatch`], one over a typed [`ResourceClient`] or a [`DynamicClient`]; and
//! [`MetadataListWatch`], the same for metadata only.

use std::{fmt, marker::PhantomData, sync::Arc};

use futures::{FutureExt, StreamExt, future::BoxFuture};
use kube_core::{
    DynamicObject, ObjectList, PartialObjectMeta,
    params::{ListParams, WatchParams},
};

use crate::{
    Cacheable,
    client::{
        DynamicClient, Error as ClientError, ReadClient, ResourceClient, Strip, WatchStream,
        verbs::RawApi,
    },
};

/// Lists and watches one resource (client-go's `ListerWatcher`).
pub trait ListerWatcher<K: Clone>: Send + Sync + 'static {
    /// Lists one page.
    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<ObjectList<K>, ClientError>>;
    /// Watches from `resource_version`.
    fn watch(
        &self,
        params: WatchParams,
        resource_version: String,
    ) -> BoxFuture<'static, Result<WatchStream<K>, ClientError>>;
}

/// Changes the list options of every list and watch (client-go's `TweakListOptionsFunc`);
/// for watches only the selectors carry over.
pub type TweakListParams = Arc<dyn Fn(&mut ListParams) + Send + Sync>;

/// Lists and watches through a [`ResourceClient`] (or, for `DynamicObject`, a
/// [`DynamicClient`]), with optional selectors and a tweak.
pub struct ListWatch<K> {
    /// The typed and dynamic clients' shared request machinery, at the client's path.
    client: RawApi,
    label_selector: Option<String>,
    field_selector: Option<String>,
    tweak: Option<TweakListParams>,
    strip: Strip,
    object: PhantomData<fn() -> K>,
}

impl<K> Clone for ListWatch<K> {
    fn clone(&self) -> Self {
        Self {
            object: PhantomData,
            client: self.client.clone(),
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            tweak: self.tweak.clone(),
            strip: self.strip,
        }
    }
}

impl<K> fmt::Debug for ListWatch<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListWatch")
            .field("path", &self.client.request.url_path)
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("strip", &self.strip)
            .finish_non_exhaustive()
    }
}

impl<K> ListWatch<K> {
    /// Lists and watches everything `client` can see (its namespace, or all).
    pub fn new(client: ResourceClient<K>) -> Self {
        Self::over(client.raw().clone())
    }

    fn over(client: RawApi) -> Self {
        Self {
            client,
            label_selector: None,
            field_selector: None,
            tweak: None,
            strip: Strip::NONE,
            object: PhantomData,
        }
    }

    /// Only objects matching this label selector (`app=web,tier!=db`).
    #[must_use]
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Only objects matching this field selector (`metadata.name=x`).
    #[must_use]
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Applies `tweak` to the options of every list and watch.
    #[must_use]
    pub fn tweak(mut self, tweak: TweakListParams) -> Self {
        self.tweak = Some(tweak);
        self
    }

    /// Leaves out `strip`'s parts of every listed and watched object while decoding it
    /// (`Strip::MANAGED_FIELDS`: `metadata.managedFields` is never built, so it never
    /// reaches the cache). controller-runtime's `TransformStripManagedFields` does the
    /// same after a whole decode.
    #[must_use]
    pub fn strip(mut self, strip: Strip) -> Self {
        self.strip = strip;
        self
    }

    fn list_params(&self, mut params: ListParams) -> ListParams {
        if params.label_selector.is_none() {
            params.label_selector.clone_from(&self.label_selector);
        }
        if params.field_selector.is_none() {
            params.field_selector.clone_from(&self.field_selector);
        }
        if let Some(tweak) = &self.tweak {
            tweak(&mut params);
        }
        params
    }

    fn watch_params(&self, mut params: WatchParams) -> WatchParams {
        let selectors = self.list_params(ListParams {
            label_selector: params.label_selector.take(),
            field_selector: params.field_selector.take(),
            ..ListParams::default()
        });
        params.label_selector = selectors.label_selector;
        params.field_selector = selectors.field_selector;
        params
    }
}

impl<K> From<ResourceClient<K>> for ListWatch<K> {
    fn from(client: ResourceClient<K>) -> Self {
        Self::new(client)
    }
}

impl<K> From<ReadClient<K>> for ListWatch<K> {
    fn from(client: ReadClient<K>) -> Self {
        Self::new(client.resource().clone())
    }
}

impl ListWatch<DynamicObject> {
    /// Lists and watches everything a [`DynamicClient`] can see (client-go's
    /// `dynamicinformer` list-watch).
    pub fn dynamic(client: DynamicClient) -> Self {
        Self::over(client.raw().clone())
    }
}

impl<K: Cacheable> ListerWatcher<K> for ListWatch<K> {
    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<ObjectList<K>, ClientError>> {
        let (client, params, strip) = (self.client.clone(), self.list_params(params), self.strip);
        async move { client.list(&params, strip).await }.boxed()
    }

    fn watch(
        &self,
        params: WatchParams,
        resource_version: String,
    ) -> BoxFuture<'static, Result<WatchStream<K>, ClientError>> {
        let (client, params, strip) = (self.client.clone(), self.watch_params(params), self.strip);
        async move {
            Ok(client
                .watch(&params, &resource_version, strip)
                .await?
                .boxed())
        }
        .boxed()
    }
}

/// Lists and watches only the metadata of `K` (client-go's `metadatainformer`,
/// controller-runtime's `WatchesMetadata`): the server answers with
/// `PartialObjectMetadataList` and `PartialObjectMetadata` watch events
/// (`as=PartialObjectMetadata`), so neither the wire nor the cache carries specs and
/// statuses. An informer over it is a `SharedIndexInformer<PartialObjectMeta<K>>`, or,
/// with [`decoding`](Self::decoding), a `SharedIndexInformer<T>` of any type `T` decoded
/// from a `PartialObjectMetadata` item (a narrower view of the metadata: the sharder's
/// `kubegen::sharding` caches keep only names, versions, their ring's labels and owners).
pub struct MetadataListWatch<K, T = PartialObjectMeta<K>>(ListWatch<K>, PhantomData<fn() -> T>);

impl<K, T> Clone for MetadataListWatch<K, T> {
    fn clone(&self) -> Self {
        Self(self.0.clone(), PhantomData)
    }
}

impl<K, T> fmt::Debug for MetadataListWatch<K, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MetadataListWatch").field(&self.0).finish()
    }
}

impl<K> MetadataListWatch<K> {
    /// Metadata of what `list_watch` would list and watch (its selectors and tweak).
    pub fn new(list_watch: ListWatch<K>) -> Self {
        Self(list_watch, PhantomData)
    }
}

impl<K, T> MetadataListWatch<K, T> {
    /// Metadata of what `list_watch` would list and watch, each item decoded as `T`.
    pub fn decoding(list_watch: ListWatch<K>) -> Self {
        Self(list_watch, PhantomData)
    }
}

impl<K: Cacheable, T: Cacheable> ListerWatcher<T> for MetadataListWatch<K, T> {
    fn list(&self, params: ListParams) -> BoxFuture<'static, Result<ObjectList<T>, ClientError>> {
        let (client, params, strip) = (
            self.0.client.clone(),
            self.0.list_params(params),
            self.0.strip,
        );
        async move { client.list_metadata(&params, strip).await }.boxed()
    }

    fn watch(
        &self,
        params: WatchParams,
        resource_version: String,
    ) -> BoxFuture<'static, Result<WatchStream<T>, ClientError>> {
        let (client, params, strip) = (
            self.0.client.clone(),
            self.0.watch_params(params),
            self.0.strip,
        );
        async move {
            Ok(client
                .watch_metadata(&params, &resource_version, strip)
                .await?
                .boxed())
        }
        .boxed()
    }
}
