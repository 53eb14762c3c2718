//! Get and list: one object or a subresource view, and lists with selectors, paging and
//! resourceVersion semantics (API Concepts, "Resource versions" and "Retrieving large
//! results sets in chunks").

use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use super::{Engine, ListOptions, ListResult, Target, parse_rv};
use crate::{
    errors::{ApiError, ApiResult, Cause},
    registry::ResourceType,
    selectors::{FieldSelector, LabelSelector},
    store::ObjKey,
};

impl Engine {
    /// Reads one object (or its status / scale subresource).
    pub fn get(&self, target: &Target) -> ApiResult<Arc<Value>> {
        let key = target.key()?;
        let obj = self
            .store
            .get(&target.gr(), &key)
            .ok_or_else(|| target.not_found())?;
        match target.subresource.as_deref() {
            None | Some("status") => Ok(self.present(&target.rt, obj)),
            Some("scale") => crate::scale::to_scale(&target.rt, &obj),
            Some(other) => Err(ApiError::not_found(
                &target.rt.group,
                &format!("{}/{other}", target.rt.plural),
                target.name_or_empty(),
            )),
        }
    }

    fn selectors(
        &self,
        rt: &ResourceType,
        label: Option<&str>,
        field: Option<&str>,
    ) -> ApiResult<(LabelSelector, FieldSelector)> {
        let labels = LabelSelector::parse(label.unwrap_or_default())
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(field.unwrap_or_default(), &rt.field_labels)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok((labels, fields))
    }

    /// Lists objects with selectors, paging and resourceVersion semantics.
    pub fn list(&self, target: &Target, opts: &ListOptions) -> ApiResult<ListResult> {
        let rt = &target.rt;
        let (labels, fields) = self.selectors(
            rt,
            opts.label_selector.as_deref(),
            opts.field_selector.as_deref(),
        )?;
        let namespace = if rt.namespaced {
            target.namespace.clone().filter(|n| !n.is_empty())
        } else {
            None
        };
        let current = self.store.current_rv();
        let rv_param = opts.resource_version.as_deref().filter(|s| !s.is_empty());
        let (at_rv, start_after) = match &opts.continue_token {
            Some(token) if !token.is_empty() => {
                if rv_param.is_some_and(|r| r != "0") {
                    return Err(ApiError::bad_request(
                        "specifying resource version is not allowed when using continue",
                    ));
                }
                let (rv, key) = decode_continue(token)?;
                (Some(rv), Some(key))
            }
            _ => {
                let at = match (rv_param, opts.resource_version_match.as_deref()) {
                    (None, Some(m)) if !m.is_empty() => {
                        return Err(ApiError::bad_request(
                            "resourceVersionMatch is forbidden unless resourceVersion is provided",
                        ));
                    }
                    (Some("0"), Some("Exact")) => {
                        // apimachinery's ValidateListOptions: a Forbidden field error,
                        // answered as 422 Invalid on ListOptions.meta.k8s.io.
                        return Err(ApiError::invalid(
                            "meta.k8s.io",
                            "ListOptions",
                            "",
                            vec![Cause {
                                reason: "FieldValueForbidden".into(),
                                message: "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".into(),
                                field: "resourceVersionMatch".into(),
                            }],
                        ));
                    }
                    (None, _) | (Some("0"), _) => None,
                    (Some(r), m) => {
                        let n = parse_rv(r)?;
                        // The legacy rule (API Concepts, "Resource versions": with `limit`
                        // set, no `continue` and no match, a non-zero resourceVersion means
                        // Exact; the cacher's delegator.go `shouldDelegateList` calls it the
                        // "legacy exact match").
                        let legacy_exact = opts.limit.is_some_and(|l| l > 0);
                        let default_match = if legacy_exact {
                            "Exact"
                        } else {
                            "NotOlderThan"
                        };
                        match m.filter(|m| !m.is_empty()).unwrap_or(default_match) {
                            "Exact" => Some(n),
                            "NotOlderThan" => {
                                if n > current {
                                    return Err(too_large_rv(n));
                                }
                                None
                            }
                            other => {
                                return Err(ApiError::bad_request(format!(
                                    "unsupported resourceVersionMatch {other:?}"
                                )));
                            }
                        }
                    }
                };
                if at.is_some_and(|n| n > current) {
                    return Err(too_large_rv(at.unwrap_or_default()));
                }
                (at, None)
            }
        };
        let filter = |obj: &Value| labels.matches_object(obj) && fields.matches_object(obj);
        let page = self.store.list(
            &rt.group_resource(),
            namespace.as_deref(),
            at_rv,
            start_after.as_ref(),
            opts.limit.filter(|l| *l > 0),
            &filter,
        )?;
        let items = page
            .items
            .into_iter()
            .map(|o| self.present(rt, o))
            .collect();
        Ok(ListResult {
            list_kind: rt.list_kind.clone(),
            api_version: rt.api_version(),
            items,
            resource_version: page.rv.to_string(),
            // ListMeta.remainingItemCount: set on a page with `continue`, unless a selector
            // makes the number unknown (it is "left unset" then, types.go says).
            remaining_item_count: (page.next.is_some() && labels.is_empty() && fields.is_empty())
                .then_some(page.remaining as u64),
            continue_token: page.next.map(|k| encode_continue(page.rv, &k)),
        })
    }
}

fn too_large_rv(n: u64) -> ApiError {
    let mut err = ApiError::new(
        504,
        crate::errors::Reason::Timeout,
        format!("Too large resource version: {n}, current: unavailable"),
    );
    err.details.causes = vec![Cause {
        reason: "ResourceVersionTooLarge".into(),
        message: "Too large resource version".into(),
        field: String::new(),
    }];
    err.details.retry_after_seconds = Some(1);
    err
}

fn encode_continue(rv: u64, key: &ObjKey) -> String {
    let raw = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": [key.0, key.1]}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> ApiResult<(u64, ObjKey)> {
    let bad = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let ns = v
        .pointer("/start/0")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    let name = v
        .pointer("/start/1")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    Ok((rv, (ns.to_string(), name.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let key = ("ns".to_string(), "a".to_string());
        let t = encode_continue(42, &key);
        assert_eq!(decode_continue(&t).unwrap(), (42, key));
        assert_eq!(decode_continue("!!").unwrap_err().code, 400);
    }
}
