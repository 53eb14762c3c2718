//! [`Fake`]: what every fake clientset stands on (client-go's `testing.Fake` plus its
//! `ObjectTracker`).
//!
//! A fake is an [`InProcess`] server and a `kubegen::client::Client` over it: requests
//! never leave the process, every request is recorded as an [`Action`](crate::inprocess::Action), reactors can
//! answer or fail requests before the server sees them, watch reactors can answer a watch
//! with a [`FakeWatcher`] the test drives, and objects can be seeded
//! synchronously with [`Fake::add`]. Generated `clientset/versioned/fake` modules wrap
//! it, registering their custom resources with [`Fake::register`]; built-in types are
//! always known.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubegen::client::ResourceClient;
//! use kubegen_testserver::fake::Fake;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let fake = Fake::new();
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! cm.metadata.namespace = Some("default".into());
//! fake.add(&cm).unwrap();
//! let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(fake.client(), "default");
//! assert!(cms.get("settings").await.is_ok());
//! assert!(fake.actions().iter().any(|a| a.matches("get", "configmaps")));
//! # }
//! ```

pub mod kubernetes;

pub use crate::fake_watcher::FakeWatcher;
pub use crate::inprocess::WatchReactorResult;

use std::ops::Deref;
use std::sync::Arc;

use kubegen::{Object, ResourceScope};
use serde_json::Value;

use crate::engine::{EngineConfig, Target, WriteOptions};
use crate::errors::ApiError;
use crate::inprocess::InProcess;
use crate::registry::{NameRule, ResourceType};

/// Why a fake could not seed an object.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    /// The object's type is neither built in nor registered.
    #[error("{0} is not a known resource; register it first")]
    UnknownResource(String),
    /// The object does not serialize to a JSON object.
    #[error("cannot encode the object: {0}")]
    Encode(#[from] serde_json::Error),
    /// The server refused it (already exists, invalid, ...).
    #[error("the server refused the object: {0}")]
    Api(#[from] ApiError),
}

/// An in-process API server with a client over it (cheap to clone; clones share state).
/// Dereferences to [`InProcess`] for reactors and the action log.
#[derive(Clone, Debug)]
pub struct Fake {
    server: InProcess,
    client: kubegen::client::Client,
}

impl Default for Fake {
    fn default() -> Self {
        Fake::new()
    }
}

impl Fake {
    /// An empty server that knows the built-in types.
    /// Namespaces spring into existence on first write, as with client-go's fakes.
    pub fn new() -> Self {
        Fake::from_server(InProcess::with_config(
            EngineConfig::default().auto_create_namespaces(true),
        ))
    }

    /// A fake over an existing in-process front, e.g. [`crate::TestServer::transport`]:
    /// types registered here are served over HTTP too.
    pub fn from_server(server: InProcess) -> Self {
        let client = kubegen::client::Client::new(server.clone());
        Fake { server, client }
    }

    /// An empty server like [`Fake::new`] that authenticates and authorizes as `auth`
    /// says (e.g. `AuthConfig::default().rbac()`). Its own client is still the API
    /// server's loopback identity, in `system:masters`, so seeding and setup are
    /// allowed; [`Fake::as_user`] gives clients that act as someone else.
    ///
    /// ```
    /// # #![allow(clippy::unwrap_used)]
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kubegen::client::ResourceClient;
    /// use kubegen_testserver::{AuthConfig, UserInfo, fake::Fake};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let fake = Fake::with_auth(&AuthConfig::default().rbac());
    /// let alice = fake.as_user(UserInfo::new("alice", ["devs"]));
    /// let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(alice.client(), "default");
    /// let err = cms.list(&Default::default()).await.unwrap_err();
    /// assert_eq!(err.code(), Some(403));
    /// // The fake's own client is the loopback admin.
    /// let admin: ResourceClient<ConfigMap> = ResourceClient::namespaced(fake.client(), "default");
    /// assert!(admin.list(&Default::default()).await.is_ok());
    /// # }
    /// ```
    pub fn with_auth(auth: &crate::AuthConfig) -> Self {
        Fake::from_server(InProcess::with_auth(
            EngineConfig::default().auto_create_namespaces(true),
            auth,
        ))
    }

    /// This fake acting as `user`: the same objects, reactors and action log, but its
    /// client's requests are `user`'s and, under RBAC ([`Fake::with_auth`]), authorized
    /// as theirs (in `system:authenticated` too, as every authenticated user is). See
    /// [`InProcess::as_user`].
    pub fn as_user(&self, user: crate::UserInfo) -> Self {
        Fake::from_server(self.server.as_user(user))
    }

    /// A client whose requests this fake serves.
    pub fn client(&self) -> kubegen::client::Client {
        self.client.clone()
    }

    /// The in-process server.
    pub fn server(&self) -> &InProcess {
        &self.server
    }

    /// Serves `K` (a custom resource) with all verbs, with a `/status` subresource when
    /// `status_subresource`. Registering a type that is already known changes nothing.
    pub fn register<K: Object>(&self, status_subresource: bool) {
        let registry = self.server.engine().registry();
        let (group, version, plural) = (K::group(&()), K::version(&()), K::plural(&()));
        if registry.get(&group, &version, &plural).is_some() {
            return;
        }
        let kind = K::kind(&()).into_owned();
        registry.insert(ResourceType {
            group: group.into_owned(),
            version: version.to_string(),
            list_kind: format!("{kind}List"),
            singular: kind.to_lowercase(),
            kind,
            plural: plural.into_owned(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: <K::Scope as ResourceScope>::NAMESPACED,
            status_subresource,
            scale: None,
            verbs: kubegen::catalog::Verb::ALL.to_vec(),
            generation: true,
            builtin: false,
            name_rule: NameRule::Subdomain,
            field_labels: Vec::new(),
            storage_version: version.into_owned(),
            strategy: crate::strategy::custom_resource(),
            columns: &[],
            schema: None,
            read_defaults_through: 0,
        });
    }

    /// Seeds `obj` (client-go's `tracker.Add`): stored as if created, without recording
    /// an action or consulting reactors.
    pub fn add<K: Object>(&self, obj: &K) -> Result<(), FakeError> {
        let engine = self.server.engine();
        let rt = engine
            .registry()
            .get(&K::group(&()), &K::version(&()), &K::plural(&()))
            .ok_or_else(|| FakeError::UnknownResource(K::plural(&()).into_owned()))?;
        let mut body = serde_json::to_value(obj)?;
        if let Value::Object(map) = &mut body {
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(K::api_version(&()).into_owned()));
            map.entry("kind")
                .or_insert_with(|| Value::String(K::kind(&()).into_owned()));
        }
        let namespace = rt.namespaced.then(|| {
            obj.meta()
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into())
        });
        let target = Target {
            rt: Arc::clone(&rt),
            namespace,
            name: None,
            subresource: None,
        };
        engine.create(&target, body, &WriteOptions::default())?;
        Ok(())
    }
}

impl Deref for Fake {
    type Target = InProcess;

    fn deref(&self) -> &InProcess {
        &self.server
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_unknown_to_the_server_cannot_be_seeded() {
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
        struct Thing {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        }
        impl kube_core::Resource for Thing {
            type DynamicType = ();
            type Scope = k8s_openapi::NamespaceResourceScope;
            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                "Thing".into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                "example.com".into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                "v1".into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                "things".into()
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(
                &mut self,
            ) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
        let fake = Fake::new();
        let thing = Thing {
            metadata: Default::default(),
        };
        assert!(matches!(
            fake.add(&thing),
            Err(FakeError::UnknownResource(_))
        ));
        fake.register::<Thing>(false);
        let mut named = thing.clone();
        named.metadata.name = Some("a".into());
        fake.add(&named).unwrap();
        assert!(matches!(fake.add(&named), Err(FakeError::Api(_))));
    }
}
