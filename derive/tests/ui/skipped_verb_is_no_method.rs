//! A verb the markers do not allow is a method that does not exist.
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// +genclient:readonly
#[derive(Clone, Debug, Default, Serialize, Deserialize, kubegen::Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Thing {
    pub metadata: ObjectMeta,
}

async fn delete_all(client: ThingClient) {
    let _ = client
        .delete_collection(&Default::default(), &Default::default())
        .await;
}

fn main() {
    let _ = delete_all;
}
