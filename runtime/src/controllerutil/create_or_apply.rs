//! [`create_or_apply()`]: [`create_or_update()`](super::create_or_update())'s server-side
//! apply sibling. Instead of reading the whole object and replacing it, it reads back the
//! fields this field manager owns (an apply configuration extracted from
//! `managedFields`), lets the mutate function change that intent, and applies it — only
//! when it changed. Other managers' fields are never sent, so never reset, and there is no
//! read-modify-write race to retry: the server merges.

use serde::de::DeserializeOwned;

use super::create_or_update::{CreateOrUpdateError, OperationResult, api};
use crate::{
    Object,
    applyconfig::{ApplyConfiguration, ApplyParams, extract},
    client::ResourceClient,
};

/// Applies `params.field_manager`'s intent for the object `config` names, built by
/// `mutate`: on the manager's current intent (extracted from the live object's
/// `managedFields`, see [`extract()`]) when the object exists, on `config` when it does
/// not. Nothing is sent when the mutated intent equals the current one
/// ([`OperationResult::Unchanged`]); otherwise it is applied ([`OperationResult::Created`]
/// or [`OperationResult::Updated`], `Unchanged` when the server found nothing to change).
///
/// A field another manager owns is a 409 Conflict (not retried: it is a disagreement, not
/// a race) unless `params.force`. The mutate function must not change the name or
/// namespace.
pub async fn create_or_apply<K, C, E, F>(
    client: &ResourceClient<K>,
    config: C,
    params: &ApplyParams,
    mut mutate: F,
) -> Result<(K, OperationResult), CreateOrUpdateError<E>>
where
    K: Object,
    C: ApplyConfiguration<Object = K> + DeserializeOwned + Clone + PartialEq,
    F: FnMut(&mut C) -> Result<(), E>,
{
    let name = config
        .name()
        .filter(|n| !n.is_empty())
        .ok_or(CreateOrUpdateError::MissingName)?
        .to_owned();
    let (current, existing) = match client.get(&name).await {
        Ok(live) => {
            let current: C =
                extract(&live, &params.field_manager, "").map_err(CreateOrUpdateError::Extract)?;
            (current, Some(live))
        }
        Err(e) if e.is_not_found() => (config.clone(), None),
        Err(e) => return Err(api("get")(e)),
    };
    let mut desired = current.clone();
    let key = |c: &C| format!("{}/{}", c.namespace().unwrap_or(""), c.name().unwrap_or(""));
    let before = key(&desired);
    mutate(&mut desired).map_err(CreateOrUpdateError::Mutate)?;
    if key(&desired) != before {
        return Err(CreateOrUpdateError::KeyChanged {
            before,
            after: key(&desired),
        });
    }
    let result = match existing {
        Some(live) if desired == current => (live, OperationResult::Unchanged),
        Some(live) => {
            let applied = client
                .apply_configuration(&desired, params)
                .await
                .map_err(api("apply"))?;
            let same = applied.meta().resource_version == live.meta().resource_version;
            let result = if same {
                OperationResult::Unchanged
            } else {
                OperationResult::Updated
            };
            (applied, result)
        }
        None => {
            let created = client
                .apply_configuration(&desired, params)
                .await
                .map_err(api("apply"))?;
            (created, OperationResult::Created)
        }
    };
    tracing::debug!(
        kind = %K::kind(&()),
        name,
        result = result.1.as_str(),
        "create_or_apply"
    );
    Ok(result)
}
