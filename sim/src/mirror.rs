//! The controller under simulation: for every ConfigMap `x` it keeps a Secret `x-owned`
//! holding the ConfigMap's `v`, owned (controller reference) by the ConfigMap, so the test
//! server's garbage collector removes it with its owner. Built on `kubegen::controller`
//! (informers, the rate-limited workqueue, `owns::<Secret>()`), like sample-controller's
//! Foo → Deployment.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube_core::{ObjectMeta, params::PostParams};
use kubegen::{
    client::{Client, Error as ClientError, ResourceClient},
    controller::Action,
};

/// The suffix of the Secrets the controller owns.
pub const OWNED_SUFFIX: &str = "-owned";

/// What the reconcile needs.
#[derive(Debug)]
pub struct Mirror {
    /// The client it writes with.
    pub client: Client,
}

/// A ConfigMap's `v`.
pub fn configmap_value(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref().and_then(|d| d.get("v")).cloned()
}

/// A Secret's `v`.
pub fn secret_value(s: &Secret) -> Option<String> {
    s.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
}

/// The Secret `name` in `namespace` with `v` = `value`.
pub fn secret(namespace: &str, name: &str, value: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "v".to_owned(),
            ByteString(value.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    }
}

fn owner(cm: &ConfigMap) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: cm.metadata.name.clone().unwrap_or_default(),
        uid: cm.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The controller's owner uid of `s`, if any.
pub fn owner_uid(s: &Secret) -> Option<&str> {
    s.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// Makes `cm`'s owned Secret hold its value and name it as owner.
pub async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Mirror>) -> Result<Action, ClientError> {
    let namespace = cm.metadata.namespace.clone().unwrap_or_default();
    let name = format!(
        "{}{OWNED_SUFFIX}",
        cm.metadata.name.as_deref().unwrap_or_default()
    );
    let value = configmap_value(&cm).unwrap_or_default();
    let api = ResourceClient::<Secret>::namespaced(ctx.client.clone(), &namespace);
    match api.get(&name).await {
        Ok(mut existing) => {
            let uid = cm.metadata.uid.as_deref().unwrap_or_default();
            if secret_value(&existing).as_deref() == Some(value.as_str())
                && owner_uid(&existing) == Some(uid)
            {
                return Ok(Action::done());
            }
            existing.data = secret(&namespace, &name, &value).data;
            existing.metadata.owner_references = Some(vec![owner(&cm)]);
            api.update(&PostParams::default(), &existing).await?;
        }
        Err(e) if e.is_not_found() => {
            let mut new = secret(&namespace, &name, &value);
            new.metadata.owner_references = Some(vec![owner(&cm)]);
            api.create(&PostParams::default(), &new).await?;
        }
        Err(e) => return Err(e),
    }
    Ok(Action::done())
}
