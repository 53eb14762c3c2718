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
