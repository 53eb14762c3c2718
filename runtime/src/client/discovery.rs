//! API discovery (client-go's `discovery.DiscoveryClient`): server version, API groups and
//! their preferred versions, the resources of a group-version, and the mapping from a
//! GroupVersionKind to its resource (plural) and scope, and from a GroupVersionResource to its
//! kind and scope.

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{
        APIGroup, APIGroupList, APIResourceList, APIVersions, GroupVersionForDiscovery,
    },
    version::Info,
};
use kube_core::{
    discovery::{ApiResource, Scope},
    gvk::{GroupVersionKind, GroupVersionResource},
};

use super::{client::Client, error::Error};

/// Reads the API server's discovery documents.
#[derive(Clone, Debug)]
pub struct Discovery {
    client: Client,
}

impl Discovery {
    /// Discovery over `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let req = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| Error::Request(kube_core::request::Error::BuildRequest(e)))?;
        self.client.request(req).await
    }

    /// `GET /version`.
    pub async fn server_version(&self) -> Result<Info, Error> {
        self.get("/version").await
    }

    /// Every API group, the legacy core group (name `""`, from `/api`) first.
    pub async fn groups(&self) -> Result<Vec<APIGroup>, Error> {
        let core: APIVersions = self.get("/api").await?;
        let versions: Vec<GroupVersionForDiscovery> = core
            .versions
            .iter()
            .map(|v| GroupVersionForDiscovery {
                group_version: v.clone(),
                version: v.clone(),
            })
            .collect();
        let mut groups = vec![APIGroup {
            name: String::new(),
            preferred_version: versions.first().cloned(),
            server_address_by_client_cidrs: None,
            versions,
        }];
        let list: APIGroupList = self.get("/apis").await?;
        groups.extend(list.groups);
        Ok(groups)
    }

    /// The server's preferred version of `group` (`""` for core).
    pub async fn preferred_version(&self, group: &str) -> Result<String, Error> {
        let groups = self.groups().await?;
        let g = groups
            .iter()
            .find(|g| g.name == group)
            .ok_or_else(|| Error::Discovery(format!("group {group:?} not served")))?;
        g.preferred_version
            .as_ref()
            .or_else(|| g.versions.first())
            .map(|v| v.version.clone())
            .ok_or_else(|| Error::Discovery(format!("group {group:?} has no versions")))
    }

    /// The resources of a group-version (`"v1"` or `"apps/v1"`).
    pub async fn resources(&self, group_version: &str) -> Result<APIResourceList, Error> {
        let path = if group_version.contains('/') {
            format!("/apis/{group_version}")
        } else {
            format!("/api/{group_version}")
        };
        self.get(&path).await
    }

    /// The resource serving `gvk` and whether it is namespaced; an empty `gvk.version` means
    /// the group's preferred version.
    pub async fn resolve_gvk(&self, gvk: &GroupVersionKind) -> Result<(ApiResource, Scope), Error> {
        let version = if gvk.version.is_empty() {
            self.preferred_version(&gvk.group).await?
        } else {
            gvk.version.clone()
        };
        let gvk = GroupVersionKind::gvk(&gvk.group, &version, &gvk.kind);
        let list = match self.resources(&gvk.api_version()).await {
            Err(e) if e.is_not_found() => {
                return Err(Error::Discovery(format!(
                    "{} is not served",
                    gvk.api_version()
                )));
            }
            other => other?,
        };
        let r = list
            .resources
            .iter()
            .find(|r| r.kind == gvk.kind && !r.name.contains('/'))
            .ok_or_else(|| {
                Error::Discovery(format!(
                    "kind {} not found in {}",
                    gvk.kind,
                    gvk.api_version()
                ))
            })?;
        let scope = if r.namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        Ok((ApiResource::from_gvk_with_plural(&gvk, &r.name), scope))
    }

    /// The resource `gvr` names (its kind from discovery) and whether it is namespaced:
    /// what a group-version-resource known only at run time needs for a dynamic client or
    /// informer (client-go's RESTMapper `KindFor`).
    pub async fn resolve_gvr(
        &self,
        gvr: &GroupVersionResource,
    ) -> Result<(ApiResource, Scope), Error> {
        let api_version = if gvr.group.is_empty() {
            gvr.version.clone()
        } else {
            format!("{}/{}", gvr.group, gvr.version)
        };
        let list = match self.resources(&api_version).await {
            Err(e) if e.is_not_found() => {
                return Err(Error::Discovery(format!("{api_version} is not served")));
            }
            other => other?,
        };
        let r = list
            .resources
            .iter()
            .find(|r| r.name == gvr.resource)
            .ok_or_else(|| {
                Error::Discovery(format!(
                    "resource {} not found in {api_version}",
                    gvr.resource
                ))
            })?;
        let scope = if r.namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        let gvk = GroupVersionKind::gvk(&gvr.group, &gvr.version, &r.kind);
        Ok((ApiResource::from_gvk_with_plural(&gvk, &r.name), scope))
    }
}
