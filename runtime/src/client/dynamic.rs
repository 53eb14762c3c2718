//! [`DynamicClient`]: the same verbs as the typed client, for any resource described at
//! runtime by an [`ApiResource`], with objects as [`DynamicObject`] (client-go's `dynamic`).

use futures::stream::BoxStream;
use kube_core::{
    DynamicObject, ObjectList, Resource, WatchEvent,
    discovery::{ApiResource, Scope},
    gvk::GroupVersionKind,
    metadata::PartialObjectMeta,
    params::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
    request::Request,
};
use serde::Serialize;

use super::{
    client::Client,
    discovery::Discovery,
    error::Error,
    resource::apply_params,
    strip::Strip,
    verbs::{DeleteResponse, RawApi, required_name},
};

/// A client for one resource described at runtime.
#[derive(Clone, Debug)]
pub struct DynamicClient {
    raw: RawApi,
    resource: ApiResource,
}

impl DynamicClient {
    /// Objects of `resource` in `namespace` (the caller knows it is namespaced).
    pub fn namespaced(client: Client, resource: &ApiResource, namespace: &str) -> Self {
        Self::at(client, resource, Some(namespace))
    }

    /// Objects of `resource` across all namespaces, or of a cluster-scoped resource.
    pub fn all(client: Client, resource: &ApiResource) -> Self {
        Self::at(client, resource, None)
    }

    /// Resolves `gvk` through discovery; `namespace` is used only if the resource is
    /// namespaced (then `None` means all namespaces).
    pub async fn for_gvk(
        client: Client,
        gvk: &GroupVersionKind,
        namespace: Option<&str>,
    ) -> Result<(Self, Scope), Error> {
        let (ar, scope) = Discovery::new(client.clone()).resolve_gvk(gvk).await?;
        let ns = match scope {
            Scope::Namespaced => namespace,
            Scope::Cluster => None,
        };
        Ok((Self::at(client, &ar, ns), scope))
    }

    pub(crate) fn raw(&self) -> &RawApi {
        &self.raw
    }

    fn at(client: Client, resource: &ApiResource, namespace: Option<&str>) -> Self {
        Self {
            raw: RawApi {
                client,
                request: Request::new(DynamicObject::url_path(resource, namespace)),
                api_version: resource.api_version.clone(),
                kind: resource.kind.clone(),
                namespace: namespace.map(str::to_string),
            },
            resource: resource.clone(),
        }
    }

    /// The resource this client serves.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// Creates `obj`.
    pub async fn create(
        &self,
        pp: &PostParams,
        obj: &DynamicObject,
    ) -> Result<DynamicObject, Error> {
        self.raw.create(pp, obj).await
    }

    /// Gets `name`.
    pub async fn get(&self, name: &str, gp: &GetParams) -> Result<DynamicObject, Error> {
        self.raw.get(name, gp).await
    }

    /// One page.
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<DynamicObject>, Error> {
        self.raw.list(lp, Strip::NONE).await
    }

    /// Every page, restarting when a continue token expires.
    pub async fn list_all(&self, lp: &ListParams) -> Result<ObjectList<DynamicObject>, Error> {
        self.raw.list_all(lp).await
    }

    /// Replaces the object named in `obj`.
    pub async fn update(
        &self,
        pp: &PostParams,
        obj: &DynamicObject,
    ) -> Result<DynamicObject, Error> {
        let name = required_name(obj.metadata.name.as_deref())?;
        self.raw.replace(name, pp, obj).await
    }

    /// Replaces the status subresource of the object named in `obj`.
    pub async fn update_status(
        &self,
        pp: &PostParams,
        obj: &DynamicObject,
    ) -> Result<DynamicObject, Error> {
        let name = required_name(obj.metadata.name.as_deref())?;
        self.raw.replace_subresource("status", name, pp, obj).await
    }

    /// Patches `name`.
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<DynamicObject, Error> {
        self.raw.patch(name, pp, patch).await
    }

    /// Patches the status subresource of `name`.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<DynamicObject, Error> {
        self.raw.patch_subresource("status", name, pp, patch).await
    }

    /// Server-side apply of `obj`.
    pub async fn apply(
        &self,
        obj: &DynamicObject,
        field_manager: &str,
        force: bool,
    ) -> Result<DynamicObject, Error> {
        let name = required_name(obj.metadata.name.as_deref())?;
        let pp = apply_params(field_manager, force);
        self.raw.patch(name, &pp, &Patch::Apply(obj)).await
    }

    /// Server-side apply of `obj`'s status.
    pub async fn apply_status(
        &self,
        obj: &DynamicObject,
        field_manager: &str,
        force: bool,
    ) -> Result<DynamicObject, Error> {
        let name = required_name(obj.metadata.name.as_deref())?;
        let pp = apply_params(field_manager, force);
        self.raw
            .patch_subresource("status", name, &pp, &Patch::Apply(obj))
            .await
    }

    /// One page of metadata-only objects.
    pub async fn list_metadata(
        &self,
        lp: &ListParams,
    ) -> Result<ObjectList<PartialObjectMeta<DynamicObject>>, Error> {
        self.raw.list_metadata(lp, Strip::NONE).await
    }

    /// Watches metadata only.
    pub async fn watch_metadata(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<
        BoxStream<'static, Result<WatchEvent<PartialObjectMeta<DynamicObject>>, Error>>,
        Error,
    > {
        self.raw
            .watch_metadata(wp, resource_version, Strip::NONE)
            .await
    }

    /// Deletes `name`.
    pub async fn delete(
        &self,
        name: &str,
        dp: &DeleteParams,
    ) -> Result<DeleteResponse<DynamicObject>, Error> {
        self.raw.delete(name, dp).await
    }

    /// Deletes every object matching `lp`'s selectors.
    pub async fn delete_collection(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<DeleteResponse<ObjectList<DynamicObject>>, Error> {
        self.raw.delete_collection(dp, lp).await
    }

    /// Watches from `resource_version`.
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<BoxStream<'static, Result<WatchEvent<DynamicObject>, Error>>, Error> {
        self.raw.watch(wp, resource_version, Strip::NONE).await
    }
}
