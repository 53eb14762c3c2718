//! kubegen's own client against the server, configured by `TestServer::config()`.

use k8s_openapi::api::core::v1::Namespace;
use kube_core::params::ListParams;
use kubegen::client::ResourceClient;
use kubegen_testserver::TestServer;

#[tokio::test]
async fn config_carries_url_ca_and_token_of_a_tls_server() {
    let server = TestServer::builder()
        .tls(true)
        .token("s3cret")
        .start()
        .await
        .unwrap();
    let namespaces: ResourceClient<Namespace> = ResourceClient::cluster(server.client().unwrap());
    let list = namespaces.list(&ListParams::default()).await.unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    assert!(names.contains(&"default".to_owned()), "{names:?}");
    assert!(
        !format!("{:?}", server.config().unwrap()).contains("s3cret"),
        "token must not show in Debug"
    );
}

#[tokio::test]
async fn a_client_without_the_token_is_unauthorized() {
    let server = TestServer::builder().token("s3cret").start().await.unwrap();
    let url = server.url().parse().unwrap();
    let anonymous =
        kubegen::client::Client::try_from_config(kubegen::client::Config::new(url)).unwrap();
    let err = ResourceClient::<Namespace>::cluster(anonymous)
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(err.is_unauthorized(), "{err:?}");
}
