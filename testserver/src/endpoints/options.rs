//! A request's query and headers as typed options (kube-apiserver's `metav1.ListOptions`,
//! `DeleteOptions`, `CreateOptions` / `UpdateOptions` / `PatchOptions`, decoded by its
//! parameter codec): list, watch, delete and write options.

use std::time::Duration;

use http::header;
use serde_json::Value;

use super::{
    decode,
    negotiate::{self, Encoding},
    query::Query,
};
use crate::{
    engine::{DeleteOptions, Engine, FieldCheck, ListOptions, WatchOptions, WriteOptions},
    errors::{ApiError, ApiResult},
    schema::FieldValidation,
};

/// `dryRun`: absent or `All` (apimachinery's `ValidateDryRun`).
fn dry_run(q: &Query) -> ApiResult<bool> {
    match q.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dry run value: {other:?} (only \"All\" is supported)"
        ))),
    }
}

/// The write options of a request. Without a `fieldManager` parameter the manager is
/// derived from the User-Agent (`managerOrUserAgent` in staging
/// `apiserver/pkg/endpoints/handlers/rest.go`: the part before the first `/`, printable
/// characters only, at most 128 of them), except for apply, which requires one.
/// `options_kind` names the options in errors (`CreateOptions`).
pub(crate) fn write(
    engine: &Engine,
    q: &Query,
    options_kind: &str,
    headers: &http::HeaderMap,
    apply: bool,
) -> ApiResult<WriteOptions> {
    // apimachinery ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions:
    // an unknown directive is a 422 on `CreateOptions.meta.k8s.io ""` (and so on).
    let mode = if engine.config().schema_validation {
        FieldValidation::parse(q.get("fieldValidation").map(String::as_str))
            .map_err(|e| e.to_api_error("meta.k8s.io", options_kind, ""))?
    } else {
        FieldValidation::default()
    };
    let from_user_agent = || {
        let agent = headers.get(header::USER_AGENT)?.to_str().ok()?;
        let manager: String = agent
            .split('/')
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(128)
            .collect();
        (!manager.is_empty()).then_some(manager)
    };
    let explicit = q.non_empty("fieldManager").cloned();
    Ok(WriteOptions {
        dry_run: dry_run(q)?,
        field_manager: if apply {
            explicit
        } else {
            explicit.or_else(from_user_agent)
        },
        force: q.flag("force"),
        fields: FieldCheck {
            mode,
            ..FieldCheck::default()
        },
        guard: None,
        preset: None,
        admitted_rv: None,
    })
}

/// The list options of a request (`limit`, `continue`, selectors, resourceVersion).
pub(crate) fn list(q: &Query) -> ApiResult<ListOptions> {
    let limit = match q.non_empty("limit") {
        Some(l) => Some(
            l.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
        ),
        None => None,
    };
    Ok(ListOptions {
        label_selector: q.get("labelSelector").cloned(),
        field_selector: q.get("fieldSelector").cloned(),
        limit,
        continue_token: q.non_empty("continue").cloned(),
        resource_version: q.get("resourceVersion").cloned(),
        resource_version_match: q.get("resourceVersionMatch").cloned(),
    })
}

/// The watch options of a request (selectors, resourceVersion, bookmarks, streaming
/// list, `timeoutSeconds`).
pub(crate) fn watch(q: &Query) -> ApiResult<WatchOptions> {
    let timeout = match q.non_empty("timeoutSeconds") {
        Some(t) => Some(Duration::from_secs(t.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid timeoutSeconds {t:?}"))
        })?)),
        None => None,
    };
    let send_initial_events = match q.get("sendInitialEvents").map(String::as_str) {
        Some("true") | Some("1") => Some(true),
        Some("false") | Some("0") => Some(false),
        _ => None,
    };
    Ok(WatchOptions {
        label_selector: q.get("labelSelector").cloned(),
        field_selector: q.get("fieldSelector").cloned(),
        resource_version: q.get("resourceVersion").cloned(),
        resource_version_match: q.get("resourceVersionMatch").cloned(),
        allow_bookmarks: q.flag("allowWatchBookmarks"),
        send_initial_events,
        timeout,
    })
}

/// The delete options of a request: the query's, then a `DeleteOptions` body's
/// (client-go's typed clients send one in their own content type).
pub(crate) fn delete(
    q: &Query,
    headers: &http::HeaderMap,
    body: &[u8],
) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions {
        propagation: q.non_empty("propagationPolicy").cloned(),
        grace_period_seconds: q
            .non_empty("gracePeriodSeconds")
            .map(|g| {
                g.parse::<i64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds {g:?}")))
            })
            .transpose()?,
        dry_run: dry_run(q)?,
        ..DeleteOptions::default()
    };
    if !body.iter().all(u8::is_ascii_whitespace) {
        let v: Value = if crate::protobuf::is_protobuf(body) {
            crate::protobuf::decode_object(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions body: {e}")))?
        } else if matches!(
            negotiate::body_encoding(decode::content_type(headers))?,
            Encoding::Yaml | Encoding::Cbor
        ) {
            decode::body(headers, body, true)?
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions body: {e}")))?
        };
        if let Some(p) = v.get("propagationPolicy").and_then(Value::as_str) {
            opts.propagation = Some(p.to_string());
        }
        if v.get("orphanDependents").and_then(Value::as_bool) == Some(true) {
            opts.propagation = Some("Orphan".into());
        }
        if let Some(g) = v.get("gracePeriodSeconds").and_then(Value::as_i64) {
            opts.grace_period_seconds = Some(g);
        }
        if let Some(uid) = v.pointer("/preconditions/uid").and_then(Value::as_str) {
            opts.precondition_uid = Some(uid.to_string());
        }
        if let Some(rv) = v
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
        {
            opts.precondition_rv = Some(rv.to_string());
        }
        if let Some(list) = v.get("dryRun").and_then(Value::as_array)
            && list.iter().any(|d| d.as_str() == Some("All"))
        {
            opts.dry_run = true;
        }
    }
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;

    #[test]
    fn list_and_watch_options_read_the_query() {
        let q = Query::parse(Some(
            "limit=5&continue=&labelSelector=a%3Db&timeoutSeconds=7&sendInitialEvents=true&allowWatchBookmarks=1",
        ));
        let l = list(&q).expect("list options");
        assert_eq!((l.limit, l.continue_token), (Some(5), None));
        assert_eq!(l.label_selector.as_deref(), Some("a=b"));
        let w = watch(&q).expect("watch options");
        assert_eq!(w.timeout, Some(Duration::from_secs(7)));
        assert_eq!(w.send_initial_events, Some(true));
        assert!(w.allow_bookmarks);
        assert_eq!(
            list(&Query::parse(Some("limit=x")))
                .map_err(|e| e.code)
                .err(),
            Some(400)
        );
    }

    #[test]
    fn delete_options_merge_query_and_body() {
        let q = Query::parse(Some("propagationPolicy=Background"));
        let body = br#"{"orphanDependents":true,"preconditions":{"uid":"u"},"dryRun":["All"]}"#;
        let d = delete(&q, &http::HeaderMap::new(), body).expect("delete options");
        assert_eq!(d.propagation.as_deref(), Some("Orphan"));
        assert_eq!(d.precondition_uid.as_deref(), Some("u"));
        assert!(d.dry_run);
        let bad = delete(
            &Query::parse(Some("dryRun=Some")),
            &http::HeaderMap::new(),
            b"",
        );
        assert_eq!(bad.map_err(|e| e.code).err(), Some(400));
    }

    #[test]
    fn the_field_manager_falls_back_to_the_user_agent_except_for_apply() {
        let engine = Engine::with_controllers(EngineConfig::default(), Vec::new());
        let mut headers = http::HeaderMap::new();
        headers.insert(
            header::USER_AGENT,
            http::HeaderValue::from_static("kubectl/v1.33"),
        );
        let q = Query::default();
        let w = write(&engine, &q, "CreateOptions", &headers, false).expect("write options");
        assert_eq!(w.field_manager.as_deref(), Some("kubectl"));
        let a = write(&engine, &q, "PatchOptions", &headers, true).expect("apply options");
        assert_eq!(a.field_manager, None);
        let bad = Query::parse(Some("fieldValidation=Sometimes"));
        let err = write(&engine, &bad, "CreateOptions", &headers, false).map_err(|e| e.code);
        assert_eq!(err.err(), Some(422));
    }
}
