//! Custom resource conversion between a CRD's versions (apiextensions-apiserver
//! `pkg/apiserver/conversion`): strategy `None` changes only `apiVersion` (what
//! [`crate::engine::Engine::present`] does); strategy `Webhook` sends the objects to the
//! CRD's conversion webhook in one `apiextensions.k8s.io/v1` ConversionReview per call
//! (all the objects of a list at once) and checks what comes back as
//! `webhook_converter.go` and `converter.go` do: the response's uid, `result.status`,
//! the number of objects, their `apiVersion` and `kind`, their name, namespace and uid;
//! of the metadata only labels and annotations may change (`restoreObjectMeta`).
//!
//! A CRD with a conversion webhook keeps its objects in the storage version: the
//! endpoint layer (`crate::endpoints::handlers::converted`) serves a request in another
//! version through a [`Plan`] — engine calls on the
//! storage version's resource type ([`Plan::storage`]), the request's body converted
//! with [`Plan::to_storage`] before, the answers with [`Plan::to_request`] after:
//!
//! | handler | before the engine call | after it |
//! |---|---|---|
//! | get | `target.rt = plan.storage` | `plan.one_to_request(obj)` |
//! | list | `target.rt = plan.storage` | `plan.to_request(items)` (one review), list `apiVersion` = request's |
//! | watch | `target.rt = plan.storage` | `plan.to_request_via(services, [event.object])` per event (`crate::endpoints::watch::convert_events`); bookmarks get the request's `apiVersion`; a failed conversion ends the watch with an ERROR event |
//! | create | `body = plan.to_storage(body)`, `target.rt = plan.storage` | `plan.one_to_request(created)` |
//! | update (main, status) | same as create | same as create |
//! | patch (json, merge) | get in storage, `one_to_request`, apply the patch in the request version, `to_storage`, update with the read resourceVersion as precondition (retry on 409) | `plan.one_to_request(updated)` |
//! | apply | the configuration `to_storage`, applied on the storage version | `plan.one_to_request(applied)` |
//! | delete, deletecollection | `target.rt = plan.storage` | `plan.one_to_request(obj)` / `to_request(items)` |
//!
//! `Plan::for_request` answers `None` for everything else (other built-ins, strategy
//! `None`, the storage version itself), which is served as today. The one built-in with
//! a plan is `events.k8s.io/v1` Event, stored as the core/v1 Event and converted locally
//! ([`Converter::Events`], `events.rs`), as kube-apiserver serves both groups from one
//! storage.
//!
//! The CRD strategy checks `spec.conversion` when a CRD is written
//! (`crate::strategy` `apiextensions/conversion.rs`).

mod events;
mod review;
#[cfg(test)]
mod tests;

use std::{sync::Arc, time::Duration};

use serde_json::Value;

use crate::{
    engine::Engine,
    errors::{ApiError, ApiResult},
    registry::{GroupResource, ResourceType},
    shared::Shared,
    webhook::{ClientConfig, ConfigError, Services},
};

/// kube-apiserver's conversion webhook timeout (`?timeout=30s` in its errors).
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// A CRD's `spec.conversion` with strategy `Webhook`, read from the CRD.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// Where the webhook is and the CA bundle its certificate must chain to.
    pub(crate) client: ClientConfig,
    /// `conversionReviewVersions`, in the CRD's order of preference.
    pub review_versions: Vec<String>,
}

impl Webhook {
    /// The webhook of a CRD (its JSON), if its strategy is `Webhook`. A CRD the strategy
    /// admitted always has a usable `clientConfig`; one that does not reads as an error.
    pub fn of_crd(crd: &Value) -> Result<Option<Webhook>, ConfigError> {
        if crd
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
            != Some("Webhook")
        {
            return Ok(None);
        }
        let config = crd
            .pointer("/spec/conversion/webhook/clientConfig")
            .ok_or(ConfigError::NoEndpoint)?;
        let client = ClientConfig::from_json(config)?;
        let review_versions = crd
            .pointer("/spec/conversion/webhook/conversionReviewVersions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(Webhook {
            client,
            review_versions,
        }))
    }
}

/// The stored CRD that serves `rt`, if `rt` is a custom resource's type.
fn crd_of(engine: &Engine, rt: &ResourceType) -> Option<Arc<Value>> {
    if rt.builtin {
        return None;
    }
    engine.store().get(
        &GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
        &(String::new(), format!("{}.{}", rt.plural, rt.group)),
    )
}

/// The webhook converting `rt`'s objects, if its CRD has strategy `Webhook`.
pub fn webhook_for(engine: &Engine, rt: &ResourceType) -> ApiResult<Option<Webhook>> {
    match crd_of(engine, rt) {
        None => Ok(None),
        Some(crd) => Webhook::of_crd(&crd).map_err(|err| {
            ApiError::internal(format!(
                "conversion webhook for {}: invalid clientConfig: {err}",
                crd_name(rt)
            ))
        }),
    }
}

fn crd_name(rt: &ResourceType) -> String {
    format!("{}.{}", rt.plural, rt.group)
}

/// Converts `objects` (custom resources of `rt`'s kind, in any of its versions) to
/// `desired_api_version` through `webhook`: one ConversionReview holding every object not
/// already in that version; the others are returned as they are, in place.
/// Errors are kube-apiserver's (`conversion webhook for example.com/v1, Kind=Foo failed:
/// ...`), answered as 500.
pub async fn convert(
    shared: &Shared,
    webhook: &Webhook,
    objects: Vec<Value>,
    desired_api_version: &str,
) -> ApiResult<Vec<Value>> {
    convert_via(&shared.services, webhook, objects, desired_api_version).await
}

/// [`convert`] with the Service addresses only (what a watch stream's task holds).
async fn convert_via(
    services: &Services,
    webhook: &Webhook,
    objects: Vec<Value>,
    desired_api_version: &str,
) -> ApiResult<Vec<Value>> {
    review::convert(
        &webhook.client,
        &webhook.review_versions,
        services,
        objects,
        desired_api_version,
        WEBHOOK_TIMEOUT,
    )
    .await
    .map_err(|err| {
        tracing::debug!(%err, desired = desired_api_version, "conversion failed");
        ApiError::internal(err.to_string())
    })
}

/// What converts a [`Plan`]'s objects between the request's and the storage version.
#[derive(Debug, Clone)]
pub enum Converter {
    /// A custom resource's conversion webhook.
    Webhook(Webhook),
    /// `events.k8s.io/v1` Event ⇄ core/v1 Event, renamed field by field in process.
    Events,
}

/// How a request is served when its version is not the one its objects are stored in:
/// a custom resource whose CRD converts through a webhook, requested in a version other
/// than the storage version, or an `events.k8s.io/v1` Event (stored as a core Event).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The resource type in the request's version (what the client sees).
    pub request: Arc<ResourceType>,
    /// The resource type in the storage version: the engine is called with this one, so
    /// it stores and returns objects in the storage version.
    pub storage: Arc<ResourceType>,
    /// What converts between the two.
    pub converter: Converter,
}

impl Plan {
    /// The plan for a request to `rt`, or `None` when the request is served as today:
    /// not a custom resource, strategy `None` (only `apiVersion` differs between
    /// versions, which the engine's `present` handles), or already the storage version.
    pub fn for_request(engine: &Engine, rt: &Arc<ResourceType>) -> ApiResult<Option<Plan>> {
        if rt.builtin && rt.group == "events.k8s.io" && rt.plural == "events" {
            return Ok(engine
                .registry()
                .get("", "v1", "events")
                .map(|storage| Plan {
                    request: rt.clone(),
                    storage,
                    converter: Converter::Events,
                }));
        }
        if rt.builtin || rt.version == rt.storage_version {
            return Ok(None);
        }
        let Some(webhook) = webhook_for(engine, rt)? else {
            return Ok(None);
        };
        let storage = engine
            .registry()
            .get(&rt.group, &rt.storage_version, &rt.plural)
            .ok_or_else(|| {
                ApiError::internal(format!(
                    "the storage version {} of {} is not served",
                    rt.storage_version,
                    crd_name(rt)
                ))
            })?;
        Ok(Some(Plan {
            request: rt.clone(),
            storage,
            converter: Converter::Webhook(webhook),
        }))
    }

    /// A request body (create, update, the result of a patch) in the request's version,
    /// converted to the storage version before it is written.
    pub async fn to_storage(&self, shared: &Shared, obj: Value) -> ApiResult<Value> {
        let desired = self.storage.api_version();
        let mut out = match &self.converter {
            Converter::Webhook(webhook) => convert(shared, webhook, vec![obj], &desired).await?,
            Converter::Events => vec![events::convert(obj, &desired)],
        };
        out.pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))
    }

    /// Stored objects (a get, a list's items, a watch event's object, a delete's answer)
    /// converted to the request's version: one webhook call for all of them.
    pub async fn to_request(
        &self,
        shared: &Shared,
        objects: Vec<Arc<Value>>,
    ) -> ApiResult<Vec<Arc<Value>>> {
        self.to_request_via(&shared.services, objects).await
    }

    /// [`Plan::to_request`] with the Service addresses only: a watch stream's task holds
    /// them, not the whole [`Shared`].
    pub async fn to_request_via(
        &self,
        services: &Services,
        objects: Vec<Arc<Value>>,
    ) -> ApiResult<Vec<Arc<Value>>> {
        let desired = self.request.api_version();
        if objects
            .iter()
            .all(|o| o.get("apiVersion").and_then(Value::as_str) == Some(desired.as_str()))
        {
            return Ok(objects);
        }
        let owned = objects
            .into_iter()
            .map(|o| Arc::try_unwrap(o).unwrap_or_else(|shared| (*shared).clone()))
            .collect();
        let converted = match &self.converter {
            Converter::Webhook(webhook) => convert_via(services, webhook, owned, &desired).await?,
            Converter::Events => owned
                .into_iter()
                .map(|o| events::convert(o, &desired))
                .collect(),
        };
        Ok(converted.into_iter().map(Arc::new).collect())
    }

    /// [`Plan::to_request`] for one object.
    pub async fn one_to_request(&self, shared: &Shared, obj: Arc<Value>) -> ApiResult<Arc<Value>> {
        let mut out = self.to_request(shared, vec![obj]).await?;
        out.pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))
    }
}
