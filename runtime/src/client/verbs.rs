//! The verbs shared by [`ResourceClient`](super::ResourceClient) and
//! [`DynamicClient`](super::DynamicClient): kube-core builds each request, the [`Client`]
//! sends it, and the answer is decoded into the caller's type.

use futures::stream::BoxStream;
use kube_core::{
    ObjectList, Status, WatchEvent,
    params::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchParams},
    request::{Error as RequestError, Request},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{
    client::{Client, Wire},
    error::Error,
    strip::Strip,
};

/// How often `list_all` restarts a paginated list whose continue token expired before it
/// falls back to one unpaginated list.
pub const LIST_ALL_RESTARTS: u32 = 3;

/// The page size `list_all` asks for when the caller set none (client-go's pager default).
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// What a delete returns: the object (still present with a `deletionTimestamp` while
/// finalizers run, or its last state), or a `Status` when the server reports the deletion
/// itself.
#[derive(Debug, Clone)]
pub enum DeleteResponse<T> {
    /// The object as the server returned it.
    Object(T),
    /// A `Status` (for example `Success` after an immediate delete).
    Status(Box<Status>),
}

impl<T> DeleteResponse<T> {
    /// The object, if the server returned one.
    pub fn object(self) -> Option<T> {
        match self {
            DeleteResponse::Object(o) => Some(o),
            DeleteResponse::Status(_) => None,
        }
    }

    /// The status, if the server returned one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            DeleteResponse::Object(_) => None,
            DeleteResponse::Status(s) => Some(s),
        }
    }
}

/// A resource's URL path plus the client: every verb, generic over the decoded type.
#[derive(Clone, Debug)]
pub(crate) struct RawApi {
    pub(crate) client: Client,
    pub(crate) request: Request,
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: Option<String>,
}

impl RawApi {
    /// Serializes `obj`, adding `apiVersion` and `kind` when it lacks them.
    pub(crate) fn encode<T: Serialize>(&self, obj: &T) -> Result<Vec<u8>, Error> {
        let v = self.with_type_meta(obj)?;
        serde_json::to_vec(&v).map_err(Error::Encode)
    }

    fn with_type_meta<T: Serialize>(&self, obj: &T) -> Result<Value, Error> {
        let mut v = serde_json::to_value(obj).map_err(Error::Encode)?;
        if let Value::Object(m) = &mut v {
            let missing = |m: &serde_json::Map<String, Value>, k: &str| {
                m.get(k).and_then(Value::as_str).is_none_or(str::is_empty)
            };
            if missing(m, "apiVersion") {
                m.insert("apiVersion".into(), Value::String(self.api_version.clone()));
            }
            if missing(m, "kind") {
                m.insert("kind".into(), Value::String(self.kind.clone()));
            }
        }
        Ok(v)
    }

    fn with_type_meta_patch<P: Serialize>(&self, patch: &Patch<P>) -> Result<Patch<Value>, Error> {
        Ok(match patch {
            Patch::Apply(p) => Patch::Apply(self.with_type_meta(p)?),
            Patch::Merge(p) => Patch::Merge(serde_json::to_value(p).map_err(Error::Encode)?),
            Patch::Strategic(p) => {
                Patch::Strategic(serde_json::to_value(p).map_err(Error::Encode)?)
            }
            Patch::Json(p) => Patch::Json(p.clone()),
            _ => {
                return Err(Error::Request(RequestError::Validation(
                    "unsupported patch type".into(),
                )));
            }
        })
    }

    pub(crate) async fn create<T: Serialize + DeserializeOwned>(
        &self,
        pp: &PostParams,
        obj: &T,
    ) -> Result<T, Error> {
        let req = self.request.create(pp, self.encode(obj)?)?;
        self.client.request(req).await
    }

    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        name: &str,
        gp: &GetParams,
    ) -> Result<T, Error> {
        self.client.request(self.request.get(name, gp)?).await
    }

    pub(crate) async fn get_metadata<T: DeserializeOwned>(
        &self,
        name: &str,
        gp: &GetParams,
    ) -> Result<T, Error> {
        self.client
            .request(self.request.get_metadata(name, gp)?)
            .await
    }

    /// A list page, every item decoded as `T` with `strip`'s parts left out.
    pub(crate) async fn list<T: DeserializeOwned + Clone>(
        &self,
        lp: &ListParams,
        strip: Strip,
    ) -> Result<ObjectList<T>, Error> {
        self.list_request(self.request.list(lp)?, strip).await
    }

    /// A metadata-only list page, every item decoded as `T` (`PartialObjectMeta<K>`) with
    /// `strip`'s parts left out.
    pub(crate) async fn list_metadata<T: DeserializeOwned + Clone>(
        &self,
        lp: &ListParams,
        strip: Strip,
    ) -> Result<ObjectList<T>, Error> {
        self.list_request(self.request.list_metadata(lp)?, strip)
            .await
    }

    async fn list_request<T: DeserializeOwned + Clone>(
        &self,
        request: http::Request<Vec<u8>>,
        strip: Strip,
    ) -> Result<ObjectList<T>, Error> {
        let (body, wire) = self.client.request_body(request).await?;
        match wire {
            Wire::Json => strip.list_from_slice(&body).map_err(Error::Decode),
            Wire::Cbor => strip.list_from_cbor(&body).map_err(Error::DecodeCbor),
        }
    }

    /// Lists every page, following continue tokens; restarts when a token expires (410).
    pub(crate) async fn list_all<T: DeserializeOwned + Clone>(
        &self,
        lp: &ListParams,
    ) -> Result<ObjectList<T>, Error> {
        let mut base = lp.clone();
        base.continue_token = None;
        if base.limit.is_none() {
            base.limit = Some(DEFAULT_PAGE_SIZE);
        }
        let mut restarts = 0;
        'restart: loop {
            if restarts > LIST_ALL_RESTARTS {
                tracing::debug!("continue tokens keep expiring; listing without pagination");
                let mut full = base.clone();
                full.limit = None;
                return self.list(&full, Strip::NONE).await;
            }
            let mut page_lp = base.clone();
            let mut items = Vec::new();
            loop {
                let page: ObjectList<T> = match self.list(&page_lp, Strip::NONE).await {
                    Ok(p) => p,
                    Err(e) if e.is_gone_or_expired() && page_lp.continue_token.is_some() => {
                        tracing::debug!(error = %e, "continue token expired; restarting list");
                        restarts += 1;
                        continue 'restart;
                    }
                    Err(e) => return Err(e),
                };
                let ObjectList {
                    types,
                    mut metadata,
                    items: page_items,
                } = page;
                items.extend(page_items);
                match metadata.continue_.take().filter(|c| !c.is_empty()) {
                    Some(token) => page_lp.continue_token = Some(token),
                    None => {
                        metadata.remaining_item_count = None;
                        return Ok(ObjectList {
                            types,
                            metadata,
                            items,
                        });
                    }
                }
            }
        }
    }

    pub(crate) async fn replace<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        pp: &PostParams,
        obj: &T,
    ) -> Result<T, Error> {
        let req = self.request.replace(name, pp, self.encode(obj)?)?;
        self.client.request(req).await
    }

    pub(crate) async fn replace_subresource<T: Serialize, R: DeserializeOwned>(
        &self,
        sub: &str,
        name: &str,
        pp: &PostParams,
        obj: &T,
    ) -> Result<R, Error> {
        let req = self
            .request
            .replace_subresource(sub, name, pp, self.encode(obj)?)?;
        self.client.request(req).await
    }

    pub(crate) async fn patch<P: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, Error> {
        let patch = self.with_type_meta_patch(patch)?;
        self.client
            .request(self.request.patch(name, pp, &patch)?)
            .await
    }

    pub(crate) async fn patch_subresource<P: Serialize, R: DeserializeOwned>(
        &self,
        sub: &str,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, Error> {
        let patch = self.with_type_meta_patch(patch)?;
        self.client
            .request(self.request.patch_subresource(sub, name, pp, &patch)?)
            .await
    }

    pub(crate) async fn delete<T: DeserializeOwned>(
        &self,
        name: &str,
        dp: &DeleteParams,
    ) -> Result<DeleteResponse<T>, Error> {
        let v: Value = self.client.request(self.request.delete(name, dp)?).await?;
        object_or_status(v)
    }

    pub(crate) async fn delete_collection<T: DeserializeOwned + Clone>(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<DeleteResponse<ObjectList<T>>, Error> {
        let v: Value = self
            .client
            .request(self.request.delete_collection(dp, lp)?)
            .await?;
        object_or_status(v)
    }

    /// A watch from `version`, every object decoded as `T` with `strip`'s parts left out.
    pub(crate) async fn watch<T: DeserializeOwned + Send + 'static>(
        &self,
        wp: &WatchParams,
        version: &str,
        strip: Strip,
    ) -> Result<BoxStream<'static, Result<WatchEvent<T>, Error>>, Error> {
        self.client
            .request_events(self.watch_request(wp, version)?, strip)
            .await
    }

    /// Builds a watch request. kube-core refuses `timeoutSeconds` of 295 or more (a limit of
    /// kube-rs's HTTP stack); client-go's reflectors ask for 5 to 10 minutes and our
    /// transport puts no deadline on streaming bodies, so a longer timeout is added to the
    /// query here.
    fn watch_request(
        &self,
        wp: &WatchParams,
        version: &str,
    ) -> Result<http::Request<Vec<u8>>, Error> {
        match wp.timeout {
            Some(timeout) if timeout >= 295 => {
                let short = WatchParams {
                    timeout: None,
                    ..wp.clone()
                };
                let mut request = self.request.watch(&short, version)?;
                // kube-core puts its default timeout on the query even when none is asked
                // for: drop it, then add ours.
                let current = request.uri().to_string();
                let (path, query) = current.split_once('?').unwrap_or((current.as_str(), ""));
                let mut params: Vec<&str> = query
                    .split('&')
                    .filter(|p| !p.is_empty() && !p.starts_with("timeoutSeconds="))
                    .collect();
                let ours = format!("timeoutSeconds={timeout}");
                params.push(&ours);
                let uri = format!("{path}?{}", params.join("&"));
                *request.uri_mut() = uri.parse().map_err(|e: http::uri::InvalidUri| {
                    Error::Request(RequestError::Validation(e.to_string()))
                })?;
                Ok(request)
            }
            _ => Ok(self.request.watch(wp, version)?),
        }
    }

    /// A metadata-only watch, every object decoded as `T` (`PartialObjectMeta<K>`) with
    /// `strip`'s parts left out.
    pub(crate) async fn watch_metadata<T: DeserializeOwned + Send + 'static>(
        &self,
        wp: &WatchParams,
        version: &str,
        strip: Strip,
    ) -> Result<BoxStream<'static, Result<WatchEvent<T>, Error>>, Error> {
        self.client
            .request_events(self.request.watch_metadata(wp, version)?, strip)
            .await
    }
}

fn object_or_status<T: DeserializeOwned>(v: Value) -> Result<DeleteResponse<T>, Error> {
    if v.get("kind").and_then(Value::as_str) == Some("Status") {
        serde_json::from_value(v)
            .map(|s| DeleteResponse::Status(Box::new(s)))
            .map_err(Error::Decode)
    } else {
        serde_json::from_value(v)
            .map(DeleteResponse::Object)
            .map_err(Error::Decode)
    }
}

/// The name in an object's metadata, required by update and apply.
pub(crate) fn required_name(name: Option<&str>) -> Result<&str, Error> {
    name.filter(|n| !n.is_empty()).ok_or_else(|| {
        Error::Request(RequestError::Validation(
            "object has no metadata.name".into(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Body, BoxFuture, Transport, TransportError};

    struct Unused;

    impl Transport for Unused {
        fn send(
            &self,
            _request: http::Request<Vec<u8>>,
        ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
            Box::pin(async { Err(TransportError::Other("unused".into())) })
        }
    }

    fn raw() -> RawApi {
        RawApi {
            client: Client::new(Unused),
            request: Request::new("/api/v1/namespaces/ns/configmaps"),
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
        }
    }

    #[test]
    fn long_watch_timeouts_appear_once_in_the_query() {
        let wp = WatchParams::default().timeout(463);
        let req = raw().watch_request(&wp, "10").unwrap();
        let query = req.uri().query().unwrap().to_owned();
        assert_eq!(query.matches("timeoutSeconds=").count(), 1, "{query}");
        assert!(query.contains("timeoutSeconds=463"), "{query}");
        assert!(query.contains("resourceVersion=10"), "{query}");
    }

    #[test]
    fn short_watch_timeouts_go_through_kube_core() {
        let wp = WatchParams::default().timeout(30);
        let req = raw().watch_request(&wp, "0").unwrap();
        let query = req.uri().query().unwrap().to_owned();
        assert_eq!(query.matches("timeoutSeconds=").count(), 1, "{query}");
        assert!(query.contains("timeoutSeconds=30"), "{query}");
    }
}
