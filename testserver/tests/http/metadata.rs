//! "Retrieving metadata only" (API Concepts; issue 16 item 4): `as=PartialObjectMetadata`
//! on get and watch, `as=PartialObjectMetadataList` on list — what client-go's metadata
//! client (`metadata/metadata.go`) and controller-runtime's `WatchesMetadata` send.

use serde_json::{Value, json};

use crate::common::server;

const ONE: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn get_as(api: &crate::common::Api, path: &str, accept: &str) -> (u16, Value) {
    let resp = api
        .http
        .get(format!("{}{path}", api.base))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn get_list_and_watch_return_metadata_only() {
    let (_s, api) = server().await;
    api.post(
        CMS,
        &json!({"metadata": {"name": "cfg", "labels": {"a": "b"}}, "data": {"big": "x"}}),
    )
    .await;

    let (code, one) = get_as(&api, &format!("{CMS}/cfg"), ONE).await;
    assert_eq!(code, 200, "{one}");
    assert_eq!(
        (one["kind"].as_str(), one["apiVersion"].as_str()),
        (Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(one["metadata"]["labels"]["a"], "b");
    assert!(one.get("data").is_none(), "{one}");

    let (code, list) = get_as(&api, CMS, LIST).await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert!(list["metadata"]["resourceVersion"].is_string());
    assert_eq!(list["items"][0]["metadata"]["name"], "cfg");
    assert!(list["items"][0].get("data").is_none());

    // The singular form on a list, and the list form on one object: 406.
    assert_eq!(get_as(&api, CMS, ONE).await.0, 406);
    assert_eq!(get_as(&api, &format!("{CMS}/cfg"), LIST).await.0, 406);

    // A watch's events carry PartialObjectMetadata objects.
    let resp = api
        .http
        .get(format!("{}{CMS}?watch=1&resourceVersion=0", api.base))
        .header("accept", ONE)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream();
    use futures::StreamExt;
    let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), body.next())
        .await
        .expect("an event")
        .expect("a chunk")
        .unwrap();
    let line = String::from_utf8_lossy(&chunk);
    let event: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
    assert!(event["object"].get("data").is_none());
}
