//! Delete and deletecollection: preconditions, propagation policies, finalizers and the
//! strategy's deletion hold.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Change, DeleteOptions, Engine, ListOptions, ListResult, Target};
use crate::{
    errors::{ApiError, ApiResult, Cause},
    meta,
    store::Write,
};

impl Engine {
    /// Deletes an object: immediately, or by setting deletionTimestamp while finalizers
    /// remain.
    pub fn delete(&self, target: &Target, opts: &DeleteOptions) -> ApiResult<Arc<Value>> {
        let rt = target.rt.clone();
        if target.subresource.is_some() {
            return Err(ApiError::method_not_allowed(
                "delete is not supported on this subresource",
            ));
        }
        let key = target.key()?;
        let name = key.1.clone();
        let propagation = opts.propagation.clone();
        if let Some(p) = &propagation
            && !matches!(p.as_str(), "Background" | "Foreground" | "Orphan")
        {
            return Err(ApiError::invalid(
                "",
                "DeleteOptions",
                "",
                vec![Cause::invalid(
                    "propagationPolicy",
                    format!("Unsupported value: {p:?}"),
                )],
            ));
        }
        let has_dependents = self
            .store
            .get(&rt.group_resource(), &key)
            .is_some_and(|o| !self.store.dependents_of(meta::uid(&o)).is_empty());
        let out = self.store.write(&rt.group_resource(), &key, opts.dry_run, |current| {
            let Some(old) = current else {
                return Err(ApiError::not_found(&rt.group, &rt.plural, &name));
            };
            if let Some(uid) = &opts.precondition_uid
                && uid != meta::uid(old) {
                    return Err(ApiError::conflict(
                        &rt.group,
                        &rt.plural,
                        &name,
                        &format!(
                            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                            meta::uid(old)
                        ),
                    ));
                }
            if let Some(rv) = &opts.admitted_rv
                && rv != meta::resource_version(old)
            {
                return Err(ApiError::conflict(
                    &rt.group,
                    &rt.plural,
                    &name,
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
            if let Some(rv) = &opts.precondition_rv
                && rv != meta::resource_version(old) {
                    return Err(ApiError::conflict(
                        &rt.group,
                        &rt.plural,
                        &name,
                        &format!(
                            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                            meta::resource_version(old)
                        ),
                    ));
                }
            let mut finalizers = meta::finalizers(old);
            match propagation.as_deref() {
                Some("Orphan") if has_dependents => push_unique(&mut finalizers, "orphan"),
                Some("Foreground") if has_dependents => {
                    push_unique(&mut finalizers, "foregroundDeletion")
                }
                _ => {}
            }
            // A graceful deletion (a running pod's) keeps the object until the period ends
            // or its kubelet deletes it with period 0 (registry/rest/delete.go
            // `BeforeDelete`).
            let grace = if self.config.graceful_deletion {
                rt.strategy
                    .grace_period(old, opts.grace_period_seconds)
                    .filter(|g| *g > 0)
            } else {
                None
            };
            if finalizers.is_empty() && !rt.strategy.holds_deletion(old) && grace.is_none() {
                return Ok(Write::Delete);
            }
            let mut new = (**old).clone();
            let starting = !meta::is_deleting(old);
            let m = meta::meta_mut(&mut new);
            if !finalizers.is_empty() {
                m.insert(
                    "finalizers".into(),
                    Value::Array(finalizers.into_iter().map(Value::String).collect()),
                );
            }
            let current_grace = m.get("deletionGracePeriodSeconds").and_then(Value::as_i64);
            if let Some(period) = grace
                && (starting || current_grace.is_some_and(|c| period < c))
            {
                // A later DELETE may shorten the period, never lengthen it.
                let deadline = crate::clock::now()
                    .checked_add(jiff::SignedDuration::from_secs(period))
                    .unwrap_or_else(|_| crate::clock::now());
                m.insert(
                    "deletionTimestamp".into(),
                    Value::String(crate::clock::rfc3339(deadline)),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(period));
            } else if starting {
                m.insert(
                    "deletionTimestamp".into(),
                    Value::String(crate::clock::now_rfc3339()),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
            }
            if starting {
                if let Some(g) = m.get("generation").and_then(Value::as_i64) {
                    m.insert("generation".into(), json!(g + 1));
                }
                rt.strategy.begin_delete(&mut new);
            }
            if new == **old {
                Ok(Write::Unchanged)
            } else {
                Ok(Write::Put(new))
            }
        })?;
        if out.event == Some(crate::store::EventType::Modified) {
            self.notify(&rt, Change::DeletionStarted, &out.object);
        } else {
            self.after_write(&rt, &out);
        }
        if let Some(obj) = self.store.get(&rt.group_resource(), &key) {
            return Ok(self.present(&rt, obj));
        }
        Ok(self.present(&rt, out.object))
    }

    /// Deletes every object a list with `list_opts` would return.
    pub fn delete_collection(
        &self,
        target: &Target,
        list_opts: &ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<ListResult> {
        let mut all = list_opts.clone();
        all.limit = None;
        all.continue_token = None;
        let listed = self.list(target, &all)?;
        let mut deleted = Vec::new();
        for item in &listed.items {
            let t = Target {
                rt: target.rt.clone(),
                namespace: Some(meta::namespace(item).to_string()),
                name: Some(meta::name(item).to_string()),
                subresource: None,
            };
            match self.delete(&t, opts) {
                Ok(obj) => deleted.push(obj),
                Err(err) if err.code == 404 => {}
                Err(err) => return Err(err),
            }
        }
        Ok(ListResult {
            list_kind: listed.list_kind,
            api_version: listed.api_version,
            items: deleted,
            resource_version: self.store.current_rv().to_string(),
            continue_token: None,
            remaining_item_count: None,
        })
    }
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|f| f == item) {
        list.push(item.to_string());
    }
}
