use serde_json::json;

use crate::common::*;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn lists_carry_the_current_global_resource_version() {
    let (_s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    let (_, pod) = api
        .post(
            "/api/v1/namespaces/default/pods",
            &json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}),
        )
        .await;
    assert_eq!(rv(&pod), rv(&a) + 1, "one counter across resources");
    let (_, list) = api.get(CMS).await;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(
        list["metadata"]["resourceVersion"],
        pod["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn label_selectors_support_the_full_syntax() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({"app": "web", "tier": "fe"})))
        .await;
    api.post(CMS, &cm("b", json!({"app": "web", "tier": "be"})))
        .await;
    api.post(CMS, &cm("c", json!({"app": "db"}))).await;
    let names = |list: serde_json::Value| -> Vec<String> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let q = |sel: &str| {
        format!(
            "{CMS}?labelSelector={}",
            sel.replace(' ', "%20")
                .replace('!', "%21")
                .replace(',', "%2C")
        )
    };
    assert_eq!(names(api.get(&q("app=web")).await.1), ["a", "b"]);
    assert_eq!(names(api.get(&q("app=web,tier!=fe")).await.1), ["b"]);
    assert_eq!(names(api.get(&q("tier in (fe,be)")).await.1), ["a", "b"]);
    assert_eq!(names(api.get(&q("tier notin (fe)")).await.1), ["b", "c"]);
    assert_eq!(names(api.get(&q("!tier")).await.1), ["c"]);
    assert_eq!(names(api.get(&q("tier")).await.1), ["a", "b"]);
    let (code, status) = api.get(&q("tier in fe")).await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
}

#[tokio::test]
async fn field_selectors_cover_metadata_and_pod_fields() {
    let (_s, api) = server().await;
    let pods = "/api/v1/namespaces/default/pods";
    for (name, node) in [("p1", "n1"), ("p2", "n2")] {
        api.post(
            pods,
            &json!({"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}}),
        )
        .await;
    }
    let (_, l) = api
        .get(&format!("{pods}?fieldSelector=spec.nodeName%3Dn2"))
        .await;
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    assert_eq!(l["items"][0]["metadata"]["name"], "p2");
    let (_, l) = api
        .get(&format!(
            "{pods}?fieldSelector=status.phase%3DPending,metadata.name%21%3Dp2"
        ))
        .await;
    assert_eq!(l["items"][0]["metadata"]["name"], "p1");
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    let (_, l) = api
        .get("/api/v1/pods?fieldSelector=metadata.namespace%3Ddefault")
        .await;
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    let (code, status) = api
        .get(&format!("{CMS}?fieldSelector=spec.nodeName%3Dx"))
        .await;
    assert_eq!(code, 400);
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("field label not supported")
    );
}

#[tokio::test]
async fn paging_with_limit_and_continue_returns_every_item_once() {
    let (s, api) = server().await;
    for i in 0..7 {
        api.post(CMS, &cm(&format!("cm-{i}"), json!({}))).await;
    }
    let mut seen = Vec::new();
    let (_, mut page) = api.get(&format!("{CMS}?limit=3")).await;
    let first_rv = page["metadata"]["resourceVersion"].clone();
    // a write between pages does not show up: pages are a consistent snapshot
    api.post(CMS, &cm("cm-9", json!({}))).await;
    loop {
        for i in page["items"].as_array().unwrap() {
            seen.push(i["metadata"]["name"].as_str().unwrap().to_string());
        }
        assert_eq!(page["metadata"]["resourceVersion"], first_rv);
        match page["metadata"]["continue"].as_str() {
            Some(c) => page = api.get(&format!("{CMS}?limit=3&continue={c}")).await.1,
            None => break,
        }
    }
    assert_eq!(seen.len(), 7);
    // a token whose revision was compacted is 410 Expired
    let (_, p) = api.get(&format!("{CMS}?limit=2")).await;
    let token = p["metadata"]["continue"].as_str().unwrap().to_string();
    api.post(CMS, &cm("late", json!({}))).await;
    s.compact();
    let (code, status) = api.get(&format!("{CMS}?limit=2&continue={token}")).await;
    assert_eq!((code, status["reason"].as_str()), (410, Some("Expired")));
    let (code, _) = api.get(&format!("{CMS}?limit=2&continue=garbage")).await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn exact_resource_version_lists_a_past_state() {
    let (_s, api) = server().await;
    let (_, a) = api.post(CMS, &cm("a", json!({}))).await;
    api.post(CMS, &cm("b", json!({}))).await;
    let (_, l) = api
        .get(&format!(
            "{CMS}?resourceVersion={}&resourceVersionMatch=Exact",
            rv(&a)
        ))
        .await;
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    let (_, l) = api.get(&format!("{CMS}?resourceVersion=0")).await;
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    let (code, _) = api.get(&format!("{CMS}?resourceVersion=999999")).await;
    assert_eq!(code, 504);
}

#[tokio::test]
async fn all_namespaces_list_spans_namespaces() {
    let (_s, api) = server().await;
    api.post(CMS, &cm("a", json!({}))).await;
    api.post(
        "/api/v1/namespaces/kube-system/configmaps",
        &cm("b", json!({})),
    )
    .await;
    let (_, l) = api.get("/api/v1/configmaps").await;
    let keys: Vec<String> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["metadata"]["namespace"].as_str().unwrap(),
                i["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(keys, ["default/a", "kube-system/b"]);
}
