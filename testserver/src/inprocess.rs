//! The in-process front: [`kubegen::client::Transport`] over the same chain and engine,
//! with client-go fake-clientset powers — reactors (a handler for a verb and resource that
//! may answer or fall through), watch reactors (a handler for watches of a resource that
//! may answer with a [`FakeWatcher`] the test drives, or fall through to the server's
//! watch) and an action log.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use kubegen::{
    catalog::Verb,
    client::{Body, BoxFuture, Transport, TransportError},
};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::{
    chain,
    endpoints::{
        context::RequestContext,
        reply::{self, Reply, ReplyBody},
        request_info::{self, RequestInfo, Route},
    },
    engine::{Engine, EngineConfig},
    errors::ApiError,
    fake_watcher::FakeWatcher,
    faults::FailRule,
    shared::Shared,
};

/// One request as the action log records it (client-go's `testing.Action`).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// What the request addresses: verb, group, version, resource, namespace, name,
    /// subresource.
    pub request: RequestInfo,
    /// The request body parsed as JSON, if any (patch bodies as sent).
    pub body: Option<Value>,
}

impl Action {
    /// Whether the action is `verb` (as kube-apiserver spells it) on `resource` (`"*"`
    /// matches anything), as client-go's reactors match.
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        (verb == "*" || verb == self.request.verb.as_str())
            && (resource == "*" || resource == self.request.resource)
    }
}

/// What a reactor decides: answer with an object, answer with an error, or fall through
/// (`None`) to the next reactor and finally the engine.
pub type ReactorResult = Option<Result<Value, ApiError>>;

type ReactorFn = Arc<dyn Fn(&Action) -> ReactorResult + Send + Sync>;

struct Reactor {
    verb: String,
    resource: String,
    handler: ReactorFn,
}

/// What a watch reactor decides (client-go's `WatchReactionFunc`): answer the watch with
/// a [`FakeWatcher`] the test drives, fail it, or fall through (`None`) to the next watch
/// reactor and finally the server's own watch.
pub type WatchReactorResult = Option<Result<FakeWatcher, ApiError>>;

type WatchReactorFn = Arc<dyn Fn(&Action) -> WatchReactorResult + Send + Sync>;

struct WatchReactor {
    resource: String,
    handler: WatchReactorFn,
}

struct Inner {
    shared: Arc<Shared>,
    reactors: RwLock<Vec<Reactor>>,
    watch_reactors: RwLock<Vec<WatchReactor>>,
    actions: Mutex<Vec<Action>>,
}

/// An in-process API server usable as a client transport. Cheap to clone; clones share
/// state, reactors and the action log.
#[derive(Clone)]
pub struct InProcess {
    inner: Arc<Inner>,
    /// Who a request without a bearer token is.
    user: crate::UserInfo,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("actions", &self.inner.actions.lock().len())
            .finish()
    }
}

impl Default for InProcess {
    fn default() -> Self {
        InProcess::new()
    }
}

impl InProcess {
    /// A fresh in-memory server with default settings.
    pub fn new() -> Self {
        InProcess::with_config(EngineConfig::default())
    }

    /// A fresh in-memory server with custom engine settings.
    pub fn with_config(config: EngineConfig) -> Self {
        InProcess::with_auth(config, &crate::AuthConfig::default())
    }

    /// A fresh in-memory server that authenticates and authorizes as `auth` says (e.g.
    /// [`crate::AuthConfig::rbac`]).
    pub fn with_auth(config: EngineConfig, auth: &crate::AuthConfig) -> Self {
        InProcess::from_shared(Shared::new(crate::apiserver::new_engine(config), auth))
    }

    /// [`InProcess::with_auth`], failing when the audit log file cannot be opened.
    pub fn try_with_auth(
        config: EngineConfig,
        auth: &crate::AuthConfig,
    ) -> Result<Self, crate::audit::AuditError> {
        let shared = Shared::try_new(crate::apiserver::new_engine(config), auth)?;
        Ok(InProcess::from_shared(shared))
    }

    /// The audit events so far, oldest first (empty unless auditing into memory:
    /// [`crate::AuthConfig::audit`]); requests a reactor answered are not among them.
    pub fn audit_events(&self) -> Vec<crate::AuditEvent> {
        self.inner.shared.audit_events()
    }

    /// This front acting as `user` (reactors and the action log stay shared): a request
    /// without a bearer token is `user`'s, authorized as theirs. A front's user is
    /// otherwise the API server's own loopback identity, in `system:masters`
    /// ([`crate::UserInfo::loopback`]).
    pub fn as_user(&self, user: crate::UserInfo) -> Self {
        InProcess {
            inner: self.inner.clone(),
            user,
        }
    }

    /// The user a request without a bearer token is.
    pub fn user(&self) -> &crate::UserInfo {
        &self.user
    }

    /// An in-process front over existing shared state (e.g. a running [`crate::TestServer`]).
    pub fn from_shared(shared: Arc<Shared>) -> Self {
        InProcess {
            inner: Arc::new(Inner {
                shared,
                reactors: RwLock::new(Vec::new()),
                watch_reactors: RwLock::new(Vec::new()),
                actions: Mutex::new(Vec::new()),
            }),
            user: crate::UserInfo::loopback(),
        }
    }

    /// The engine behind this front.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.inner.shared.engine
    }

    /// Shared state (faults).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// Fault injection: the next requests `rule` matches fail (see [`FailRule`]); acts on
    /// every front over this state.
    pub fn fail(&self, rule: FailRule) {
        self.inner.shared.faults.fail(rule);
    }

    /// Adds a reactor consulted before all others (client-go's `PrependReactor`).
    pub fn prepend_reactor(
        &self,
        verb: &str,
        resource: &str,
        handler: impl Fn(&Action) -> ReactorResult + Send + Sync + 'static,
    ) {
        self.inner.reactors.write().insert(
            0,
            Reactor {
                verb: verb.into(),
                resource: resource.into(),
                handler: Arc::new(handler),
            },
        );
    }

    /// Adds a reactor consulted after the existing ones (client-go's `AddReactor`).
    pub fn add_reactor(
        &self,
        verb: &str,
        resource: &str,
        handler: impl Fn(&Action) -> ReactorResult + Send + Sync + 'static,
    ) {
        self.inner.reactors.write().push(Reactor {
            verb: verb.into(),
            resource: resource.into(),
            handler: Arc::new(handler),
        });
    }

    /// Adds a watch reactor for watches of `resource` (`"*"`: any) consulted before all
    /// other watch reactors (client-go's `PrependWatchReactor`).
    ///
    /// ```
    /// # #![allow(clippy::unwrap_used)]
    /// use futures::StreamExt;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube_core::{params::WatchParams, watch::WatchEvent};
    /// use kubegen::client::ResourceClient;
    /// use kubegen_testserver::fake::{Fake, FakeWatcher};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let fake = Fake::new();
    /// let watcher = FakeWatcher::new();
    /// let answer = watcher.clone();
    /// fake.prepend_watch_reactor("configmaps", move |_| Some(Ok(answer.clone())));
    /// let cms: ResourceClient<ConfigMap> = ResourceClient::namespaced(fake.client(), "default");
    /// let mut events = cms.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("settings".into());
    /// watcher.add(&cm);
    /// assert!(matches!(events.next().await, Some(Ok(WatchEvent::Added(_)))));
    /// watcher.stop();
    /// assert!(events.next().await.is_none());
    /// # }
    /// ```
    pub fn prepend_watch_reactor(
        &self,
        resource: &str,
        handler: impl Fn(&Action) -> WatchReactorResult + Send + Sync + 'static,
    ) {
        self.inner.watch_reactors.write().insert(
            0,
            WatchReactor {
                resource: resource.into(),
                handler: Arc::new(handler),
            },
        );
    }

    /// Adds a watch reactor for watches of `resource` (`"*"`: any) consulted after the
    /// existing ones (client-go's `AddWatchReactor`).
    pub fn add_watch_reactor(
        &self,
        resource: &str,
        handler: impl Fn(&Action) -> WatchReactorResult + Send + Sync + 'static,
    ) {
        self.inner.watch_reactors.write().push(WatchReactor {
            resource: resource.into(),
            handler: Arc::new(handler),
        });
    }

    /// The first watch reactor answering `action` (a watch), in order.
    fn react_to_watch(&self, action: &Action) -> Option<http::Response<Body>> {
        let handlers: Vec<WatchReactorFn> = self
            .inner
            .watch_reactors
            .read()
            .iter()
            .filter(|r| action.matches("watch", &r.resource))
            .map(|r| r.handler.clone())
            .collect();
        handlers.into_iter().find_map(|handler| {
            handler(action).map(|answer| match answer {
                Ok(watcher) => {
                    let body = watcher.open().map(Ok::<Bytes, TransportError>);
                    let mut resp = http::Response::new(Body::from_stream(body));
                    resp.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("application/json"),
                    );
                    resp
                }
                Err(err) => into_body(reply::error(&err)),
            })
        })
    }

    /// Every action so far, in order.
    pub fn actions(&self) -> Vec<Action> {
        self.inner.actions.lock().clone()
    }

    /// Forgets the recorded actions.
    pub fn clear_actions(&self) {
        self.inner.actions.lock().clear();
    }

    /// Serves one request (what [`Transport::send`] does, without the boxing).
    pub async fn serve(&self, request: http::Request<Vec<u8>>) -> http::Response<Body> {
        let (parts, body) = request.into_parts();
        let route = request_info::resolve(&self.inner.shared.engine, &parts.method, &parts.uri);
        if let Ok(Route::Resource(info)) = &route {
            let action = Action {
                request: info.clone(),
                body: if body.is_empty() {
                    None
                } else {
                    serde_json::from_slice(&body).ok()
                },
            };
            self.inner.actions.lock().push(action.clone());
            if action.request.verb == Verb::Watch
                && let Some(resp) = self.react_to_watch(&action)
            {
                return resp;
            }
            let handlers: Vec<ReactorFn> = self
                .inner
                .reactors
                .read()
                .iter()
                .filter(|r| action.matches(&r.verb, &r.resource))
                .map(|r| r.handler.clone())
                .collect();
            for handler in handlers {
                match handler(&action) {
                    None => continue,
                    Some(Ok(obj)) => {
                        let code = if action.request.verb == Verb::Create {
                            201
                        } else {
                            200
                        };
                        let mut resp = http::Response::new(Body::from_bytes(
                            serde_json::to_vec(&obj).unwrap_or_default(),
                        ));
                        *resp.status_mut() =
                            http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::OK);
                        resp.headers_mut().insert(
                            http::header::CONTENT_TYPE,
                            http::HeaderValue::from_static("application/json"),
                        );
                        return resp;
                    }
                    Some(Err(err)) => return into_body(reply::error(&err)),
                }
            }
        }
        let mut cx = RequestContext::new(parts, Bytes::from(body));
        cx.route = Some(route);
        cx.front_user = Some(self.user.clone());
        into_body(chain::serve(&self.inner.shared, cx).await)
    }
}

fn into_body(reply: Reply) -> http::Response<Body> {
    let (parts, body) = reply.into_parts();
    let body = match body {
        ReplyBody::Full(b) => Body::from_bytes(b),
        ReplyBody::Stream(s) => Body::from_stream(s.map(Ok::<Bytes, TransportError>)),
    };
    http::Response::from_parts(parts, body)
}

impl Transport for InProcess {
    fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> BoxFuture<'static, Result<http::Response<Body>, TransportError>> {
        let this = self.clone();
        Box::pin(async move { Ok(this.serve(request).await) })
    }
}
