//! List semantics of API Concepts, "Resource versions" and "Retrieving large results sets in
//! chunks" (https://kubernetes.io/docs/reference/using-api/api-concepts/).

use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// ListMeta.remainingItemCount (apimachinery/pkg/apis/meta/v1/types.go): the number of
/// subsequent items, on every page that has `continue`; left unset with a selector.
#[tokio::test]
async fn every_page_with_continue_carries_remaining_item_count() {
    let (_s, api) = server().await;
    for i in 0..5 {
        api.post(CMS, &cm(&format!("cm-{i}"), json!({"n": i.to_string()})))
            .await;
    }
    let (_, page) = api.get(&format!("{CMS}?limit=2")).await;
    assert_eq!(page["metadata"]["remainingItemCount"], 3, "{page}");
    let c = page["metadata"]["continue"].as_str().unwrap();
    let (_, page) = api.get(&format!("{CMS}?limit=2&continue={c}")).await;
    assert_eq!(page["metadata"]["remainingItemCount"], 1, "{page}");
    let c = page["metadata"]["continue"].as_str().unwrap();
    let (_, last) = api.get(&format!("{CMS}?limit=2&continue={c}")).await;
    assert!(last["metadata"].get("continue").is_none(), "{last}");
    assert!(
        last["metadata"].get("remainingItemCount").is_none(),
        "{last}"
    );
    let (_, selected) = api.get(&format!("{CMS}?limit=1&labelSelector=n")).await;
    assert!(selected["metadata"]["continue"].is_string(), "{selected}");
    assert!(
        selected["metadata"].get("remainingItemCount").is_none(),
        "{selected}"
    );
}

/// apimachinery/pkg/apis/meta/internalversion/validation/validation.go
/// (ValidateListOptions): `resourceVersionMatch "exact" is forbidden for resourceVersion
/// "0"`, a Forbidden field error the list handler answers as Invalid (422).
#[tokio::test]
async fn exact_match_at_resource_version_zero_is_invalid() {
    let (_s, api) = server().await;
    let (code, status) = api
        .get(&format!(
            "{CMS}?resourceVersion=0&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "ListOptions");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "resourceVersionMatch"
    );
}

/// API Concepts, "Resource versions", the `resourceVersionMatch` unset row with
/// `limit=<n>, continue unset`: a non-zero resourceVersion is Exact (the legacy rule; the
/// cacher's `delegator.go` `shouldDelegateList` "Legacy exact match", served from etcd at
/// that revision). Without `limit` the same resourceVersion is NotOlderThan, and an Exact
/// revision that was compacted is 410 Expired.
#[tokio::test]
async fn limit_with_a_non_zero_resource_version_and_no_match_is_exact() {
    let (s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    api.post(CMS, &cm("b", json!({}))).await;
    api.post(CMS, &cm("c", json!({}))).await;
    let at = rv(&a);

    let (code, page) = api
        .get(&format!("{CMS}?limit=5&resourceVersion={at}"))
        .await;
    assert_eq!(code, 200, "{page}");
    let names: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"], "the snapshot at exactly {at}");
    assert_eq!(page["metadata"]["resourceVersion"], at.to_string());

    // Paged: the first page is at `at`, and the continue token keeps that snapshot.
    api.post(CMS, &cm("d", json!({}))).await;
    let (_, b) = api.get(&format!("{CMS}/b")).await;
    let (_, first) = api
        .get(&format!("{CMS}?limit=1&resourceVersion={}", rv(&b)))
        .await;
    assert_eq!(first["items"][0]["metadata"]["name"], "a", "{first}");
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let (_, second) = api.get(&format!("{CMS}?limit=1&continue={token}")).await;
    assert_eq!(second["items"][0]["metadata"]["name"], "b", "{second}");
    assert!(second["metadata"].get("continue").is_none(), "{second}");

    // No limit: NotOlderThan, so the current state.
    let (_, all) = api.get(&format!("{CMS}?resourceVersion={at}")).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 4, "{all}");
    // limit=0 is no limit.
    let (_, all) = api
        .get(&format!("{CMS}?limit=0&resourceVersion={at}"))
        .await;
    assert_eq!(all["items"].as_array().unwrap().len(), 4, "{all}");
    // An explicit NotOlderThan with a limit is not Exact.
    let (_, newer) = api
        .get(&format!(
            "{CMS}?limit=10&resourceVersion={at}&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(newer["items"].as_array().unwrap().len(), 4, "{newer}");

    // Compacted: the Exact revision is gone (410 Expired), NotOlderThan still answers.
    s.compact();
    let (code, status) = api
        .get(&format!("{CMS}?limit=5&resourceVersion={at}"))
        .await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (410, Some("Expired")),
        "{status}"
    );
    assert_eq!(api.get(&format!("{CMS}?resourceVersion={at}")).await.0, 200);
    // A revision from the future is "Too large resource version" either way.
    let (code, _) = api
        .get(&format!("{CMS}?limit=5&resourceVersion=999999"))
        .await;
    assert_eq!(code, 504);
}
