//! The HTTP front: a hyper server on loopback serving the handler chain, with
//! `restart` (drop every connection, keep state) and a kubeconfig writer.

use std::{convert::Infallible, net::SocketAddr, path::Path, sync::Arc};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{
    ClusterConfig, Workload, chain,
    endpoints::reply::{self, Reply, ReplyBody},
    engine::{Engine, EngineConfig},
    shared::Shared,
};

/// Errors starting or driving the test server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding or reading the socket failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// TLS setup failed.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// A CRD file could not be loaded.
    #[error("crd {path}: {message}")]
    Crd {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A paused clock was asked for on a runtime that cannot pause its clock.
    #[error("a paused clock needs a current-thread tokio runtime (#[tokio::test])")]
    PausedClock,
    /// A request the server answered with an error (creating a ServiceAccount, minting
    /// its token).
    #[error(transparent)]
    Api(#[from] crate::ApiError),
    /// A client configuration for the server could not be built.
    #[error("client config: {0}")]
    Config(String),
    /// A cluster operation was asked of a server that runs no cluster
    /// ([`ClusterConfig::none`]).
    #[error("the server runs no cluster")]
    NoCluster,
    /// A cluster operation's request to the server failed.
    #[error("cluster: {0}")]
    Cluster(#[from] kubegen::client::Error),
    /// A kubelet fault of the cluster configuration cannot be used.
    #[error(transparent)]
    PodFault(#[from] crate::PodFaultError),
    /// Authentication cannot be set up (a client CA, the token signing key), or a
    /// ServiceAccount token could not be had.
    #[error(transparent)]
    Authn(#[from] crate::AuthnError),
    /// A client CA was configured for a server without TLS.
    #[error("client certificates (a client CA) need TLS")]
    ClientCaWithoutTls,
    /// A manifest given to the server does not parse or holds nothing usable.
    #[error("manifest: {0}")]
    Manifest(String),
    /// The audit log file cannot be opened.
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
}

/// Builder for a [`TestServer`].
#[derive(Debug, Clone)]
pub struct TestServerBuilder {
    addr: SocketAddr,
    token: Option<String>,
    auth: crate::AuthConfig,
    tls: bool,
    engine: EngineConfig,
    cluster: ClusterConfig,
    paused_clock: bool,
}

impl Default for TestServerBuilder {
    fn default() -> Self {
        TestServerBuilder {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            auth: crate::AuthConfig::default(),
            tls: false,
            engine: EngineConfig::default(),
            cluster: ClusterConfig::default(),
            paused_clock: false,
        }
    }
}

impl TestServerBuilder {
    /// Listen address (default `127.0.0.1:0`, an ephemeral loopback port).
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// Require `Authorization: Bearer <token>`: `token` is the admin's (a user `admin` in
    /// `system:masters`, what [`TestServer::config`] and the kubeconfig carry), and
    /// requests without credentials are refused (`--anonymous-auth=false`).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self.auth.anonymous = false;
        self
    }

    /// Authentication, authorization and audit settings ([`crate::AuthConfig`]).
    pub fn auth(mut self, auth: crate::AuthConfig) -> Self {
        self.auth = auth;
        self
    }

    /// Audits every request into memory ([`TestServer::audit_events`]).
    pub fn audit(mut self) -> Self {
        self.auth.audit.memory = true;
        self
    }

    /// `--audit-log-path`: appends every request's audit event to `path` as a JSON line;
    /// [`TestServerBuilder::start`] fails when the file cannot be opened.
    pub fn audit_log_path(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.auth.audit.log_path = Some(path.into());
        self
    }

    /// Authorization by RBAC (`--authorization-mode=RBAC`): roles and bindings decide
    /// what each user may do. [`TestServer::client`] stays the admin's; see
    /// [`TestServer::client_as`] and [`TestServer::client_for_service_account`].
    pub fn rbac(mut self) -> Self {
        self.auth.authorization_mode = crate::AuthorizationMode::Rbac;
        self
    }

    /// Serve HTTPS with a freshly generated self-signed CA (see [`TestServer::ca_pem`]).
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// Engine tunables (history size, bookmark interval).
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// What the cluster in a process runs (default: [`ClusterConfig::default`], three
    /// nodes and every workload controller; [`ClusterConfig::none`] for an API server
    /// alone).
    pub fn cluster(mut self, cluster: ClusterConfig) -> Self {
        self.cluster = cluster;
        self
    }

    /// Runs the server on a paused clock (`tokio::time::pause`): time moves only when the
    /// test advances it (`tokio::time::advance`) or when every task waits on a timer, so
    /// a progress deadline or a pod's run time passes in no wall time; generated names
    /// and uids are seeded (unless [`EngineConfig::seed`] says otherwise), so two runs
    /// with the same inputs write the same objects in the same order. Pauses the calling
    /// runtime's clock, which must be a current-thread runtime (`#[tokio::test]`'s);
    /// [`TestServerBuilder::start`] fails with [`ServerError::PausedClock`] otherwise.
    /// Drive such a server through the in-process front ([`TestServer::transport`]):
    /// tokio advances a paused clock while a request waits on a socket.
    pub fn paused_clock(mut self) -> Self {
        self.paused_clock = true;
        self
    }

    /// Starts serving.
    pub async fn start(self) -> Result<TestServer, ServerError> {
        for fault in &self.cluster.pod_faults {
            fault.validate()?;
        }
        let mut config = self.engine;
        if self.paused_clock {
            if tokio::runtime::Handle::current().runtime_flavor()
                != tokio::runtime::RuntimeFlavor::CurrentThread
            {
                return Err(ServerError::PausedClock);
            }
            if !clock_is_paused() {
                tokio::time::pause();
            }
            config.seed = config.seed.or(Some(0));
        }
        config.graceful_deletion = self.cluster.runs(Workload::Kubelet);
        let engine = crate::apiserver::new_engine(config);
        // The admin's token: the one asked for, else a fresh one; what `config()` and the
        // kubeconfig carry (envtest's clients are admins too).
        let token = self
            .token
            .clone()
            .unwrap_or_else(crate::authn::random_token);
        let mut auth = self.auth.clone();
        auth.tokens.push((
            token.clone(),
            crate::UserInfo::new(ADMIN, [crate::authn::SYSTEM_MASTERS]),
        ));
        let shared = Shared::try_new(engine, &auth)?;
        let listener = TcpListener::bind(self.addr).await?;
        let addr = listener.local_addr()?;
        let verifier = match &auth.client_ca_pem {
            None => None,
            Some(_) if !self.tls => return Err(ServerError::ClientCaWithoutTls),
            Some(pem) => {
                let cas = crate::authn::x509::parse_ca_bundle("client CA", pem.as_bytes())?;
                Some(crate::authn::x509::client_verifier(&cas)?)
            }
        };
        let tls = if self.tls {
            Some(crate::tls::generate(addr.ip(), verifier)?)
        } else {
            None
        };
        let acceptor = tls.as_ref().map(|t| t.acceptor.clone());
        let connections = Arc::new(Mutex::new(CancellationToken::new()));
        let stop = shared.shutdown.clone();
        tokio::spawn(accept_loop(
            listener,
            acceptor,
            shared.clone(),
            connections.clone(),
            stop,
        ));
        let cluster = crate::controllers::start_cluster(&shared, self.cluster, addr).await;
        tracing::info!(%addr, tls = self.tls, "kubegen-testserver listening");
        Ok(TestServer {
            addr,
            shared,
            connections,
            token,
            ca_pem: tls.map(|t| t.ca_pem),
            cluster,
        })
    }
}

/// The user name of the admin token (in `system:masters`).
pub const ADMIN: &str = "admin";

/// Whether tokio's clock is paused already (a second server in one test, or
/// `#[tokio::test(start_paused = true)]`): a paused clock does not move while the thread
/// sleeps, and pausing twice panics.
fn clock_is_paused() -> bool {
    let before = tokio::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(1));
    tokio::time::Instant::now() == before
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    connections: Arc<Mutex<CancellationToken>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(err) => {
                tracing::warn!(%err, "accept failed");
                continue;
            }
        };
        let conn_token = connections.lock().clone();
        let shared = shared.clone();
        let stop = stop.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            match acceptor {
                None => serve_connection(stream, peer, shared, None, conn_token, stop).await,
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(tls) => {
                        // Verified by the client CA during the handshake.
                        let certificate = tls
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|chain| chain.first())
                            .and_then(|der| crate::authn::x509::user_of_certificate(der));
                        serve_connection(tls, peer, shared, certificate, conn_token, stop).await
                    }
                    Err(err) => tracing::debug!(%err, "TLS handshake failed"),
                },
            }
        });
    }
}

/// Serves the requests of one connection; `certificate` is the user of the verified
/// client certificate its client presented.
async fn serve_connection<I>(
    io: I,
    peer: SocketAddr,
    shared: Arc<Shared>,
    certificate: Option<crate::UserInfo>,
    conn_token: CancellationToken,
    stop: CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        if shared.audit.enabled() {
            req.extensions_mut().insert(crate::audit::PeerAddr(peer));
        }
        let shared = shared.clone();
        let certificate = certificate.clone();
        async move { Ok::<_, Infallible>(serve(&shared, req, certificate).await) }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::select! {
        biased;
        _ = conn_token.cancelled() => {}
        _ = stop.cancelled() => {}
        result = conn => {
            if let Err(err) = result {
                tracing::debug!(%err, "connection ended");
            }
        }
    }
}

type HttpBody = UnsyncBoxBody<Bytes, Infallible>;

/// Adapts the handler chain to hyper.
pub(crate) async fn serve(
    shared: &Arc<Shared>,
    req: http::Request<Incoming>,
    certificate: Option<crate::UserInfo>,
) -> http::Response<HttpBody> {
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(err) => {
            let e = crate::errors::ApiError::bad_request(format!("reading body: {err}"));
            return into_hyper(reply::error(&e));
        }
    };
    into_hyper(chain::handle(shared, http::Request::from_parts(parts, bytes), certificate).await)
}

/// The most watch events one write of a watch body carries.
const COALESCED_EVENTS: usize = 256;

/// One buffer of the events that were ready together.
fn coalesce(mut chunk: Vec<Bytes>) -> Bytes {
    if chunk.len() == 1 {
        return chunk.pop().unwrap_or_default();
    }
    let mut out = Vec::with_capacity(chunk.iter().map(Bytes::len).sum());
    for part in &chunk {
        out.extend_from_slice(part);
    }
    Bytes::from(out)
}

fn into_hyper(reply: Reply) -> http::Response<HttpBody> {
    let (parts, body) = reply.into_parts();
    let body: HttpBody = match body {
        ReplyBody::Full(b) => Full::new(b).boxed_unsync(),
        // Events that are ready together go out in one write, as kube-apiserver's watch
        // server flushes only once its result channel is empty (`serveWatch`): a burst such
        // as a streaming list's initial events is not a frame per event.
        ReplyBody::Stream(s) => BodyExt::boxed_unsync(StreamBody::new(
            s.ready_chunks(COALESCED_EVENTS)
                .map(|chunk| Ok::<_, Infallible>(Frame::data(coalesce(chunk)))),
        )),
    };
    http::Response::from_parts(parts, body)
}

/// A running in-memory API server; stops when dropped.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    connections: Arc<Mutex<CancellationToken>>,
    token: String,
    ca_pem: Option<String>,
    cluster: Option<Arc<crate::controllers::Cluster>>,
}

impl TestServer {
    /// Starts a server on an ephemeral loopback port with default settings: a cluster in a
    /// process, with three nodes and the workload controllers ([`ClusterConfig`]).
    pub async fn start() -> Result<TestServer, ServerError> {
        TestServerBuilder::default().start().await
    }

    /// A builder for custom settings.
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (`https` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// A kubegen client `Config` for this server: its URL, the CA of a TLS server, the
    /// admin's bearer token (user `admin` in `system:masters`), and no client-side
    /// throttling (tests should not wait on a rate limiter).
    pub fn config(&self) -> Result<kubegen::client::Config, ServerError> {
        self.config_with_token(&self.token)
    }

    /// [`TestServer::config`] with another bearer token.
    fn config_with_token(&self, token: &str) -> Result<kubegen::client::Config, ServerError> {
        use kubegen::client::{Config, Credentials, TlsConfig, pem_certs};
        let url = self
            .url()
            .parse()
            .map_err(|e: http::uri::InvalidUri| ServerError::Config(e.to_string()))?;
        let mut config = Config::new(url).with_rate_limit(-1.0, 0);
        if let Some(ca) = &self.ca_pem {
            let roots = pem_certs(ca.as_bytes()).map_err(|e| ServerError::Config(e.to_string()))?;
            config = config.with_tls(TlsConfig {
                root_certs: Some(roots),
                ..TlsConfig::default()
            });
        }
        config = config.with_credentials(Credentials::Bearer(token.to_string().into()));
        Ok(config)
    }

    /// A kubegen `Client` for this server over HTTP, as the admin (see
    /// [`TestServer::config`]).
    pub fn client(&self) -> Result<kubegen::client::Client, ServerError> {
        kubegen::client::Client::try_from_config(self.config()?)
            .map_err(|e| ServerError::Config(e.to_string()))
    }

    /// A client over HTTP authenticated as `user` in `groups` (and
    /// `system:authenticated`): a fresh bearer token for the user joins the server's
    /// static token table. With RBAC on ([`TestServerBuilder::rbac`]) the user may do what
    /// their roles' bindings allow, and nothing else.
    pub fn client_as(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<kubegen::client::Client, ServerError> {
        let token = crate::authn::random_token();
        self.shared.auth.authenticator.add_token(
            token.clone(),
            crate::UserInfo::new(user, groups.iter().copied()),
        );
        kubegen::client::Client::try_from_config(self.config_with_token(&token)?)
            .map_err(|e| ServerError::Config(e.to_string()))
    }

    /// A client over HTTP authenticated as the ServiceAccount `namespace`/`name` with a
    /// fresh ServiceAccount token (a JWT for the server's API audiences, valid for an hour,
    /// as the TokenRequest API mints it): user `system:serviceaccount:<namespace>:<name>`
    /// in `system:serviceaccounts` and `system:serviceaccounts:<namespace>`. The
    /// ServiceAccount is created if it is missing (its namespace must exist); the token
    /// stops working when it is deleted. With RBAC on the ServiceAccount may do what its
    /// roles' bindings allow.
    pub async fn client_for_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kubegen::client::Client, ServerError> {
        let token = self.service_account_token(namespace, name, &[]).await?;
        kubegen::client::Client::try_from_config(self.config_with_token(&token)?)
            .map_err(|e| ServerError::Config(e.to_string()))
    }

    /// A fresh token of the ServiceAccount `namespace`/`name` (created if missing, as in
    /// [`TestServer::client_for_service_account`]) for `audiences` (the server's API
    /// audiences when empty), valid for an hour: what `kubectl create token` gets.
    pub async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[&str],
    ) -> Result<String, ServerError> {
        use crate::{
            engine::{Target, WriteOptions},
            registry::GroupResource,
        };
        let engine = &self.shared.engine;
        let gr = GroupResource::new("", "serviceaccounts");
        let key = (namespace.to_string(), name.to_string());
        let sa = match engine.store().get(&gr, &key) {
            Some(sa) => sa,
            None => {
                let target = Target {
                    rt: crate::engine::resolve(engine, "", "v1", "serviceaccounts")?,
                    namespace: Some(namespace.to_string()),
                    name: None,
                    subresource: None,
                };
                let sa = serde_json::json!({
                    "apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": name, "namespace": namespace},
                });
                match engine.create(&target, sa, &WriteOptions::default()) {
                    Ok(sa) => sa,
                    // Created meanwhile.
                    Err(err) if err.code == 409 => engine
                        .store()
                        .get(&gr, &key)
                        .ok_or_else(|| ServerError::Api(err))?,
                    Err(err) => return Err(err.into()),
                }
            }
        };
        let issuer = self.shared.auth.authenticator.service_accounts()?;
        let audiences: Vec<String> = if audiences.is_empty() {
            issuer.audiences().to_vec()
        } else {
            audiences.iter().map(|a| a.to_string()).collect()
        };
        Ok(issuer.mint(&sa, &audiences, crate::clock::now(), 3600)?)
    }

    /// The authorization mode the server runs (`--authorization-mode`).
    pub fn authorization_mode(&self) -> crate::AuthorizationMode {
        self.shared.auth.authorizer.mode()
    }

    /// A kubeconfig for `user` in `groups` (and `system:authenticated`): a fresh bearer
    /// token for the user joins the server's static token table, as for
    /// [`TestServer::client_as`], so kubectl can be driven as that user.
    pub fn kubeconfig_as(&self, user: &str, groups: &[&str]) -> String {
        let token = crate::authn::random_token();
        self.shared.auth.authenticator.add_token(
            token.clone(),
            crate::UserInfo::new(user, groups.iter().copied()),
        );
        crate::kubeconfig::render(&self.url(), Some(&token), self.ca_pem.as_deref())
    }

    /// The CA certificate (PEM) of a TLS server.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The engine (direct access to objects, the registry and the store).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.shared.engine
    }

    /// Shared state (faults, engine) — also what the in-process transport wraps.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Routes the Service `<name>.<namespace>.svc:<port>` (port 443 unless the manifest
    /// says otherwise) that webhook configurations and CRD conversion webhooks name to
    /// `addr`, where the test's webhook server listens: the server has no cluster network.
    pub fn register_service(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.shared.register_service(namespace, name, port, addr);
    }

    /// Forgets the address of a Service registered with [`TestServer::register_service`]:
    /// calls to its webhooks then fail as calls to a Service without endpoints do.
    pub fn unregister_service(&self, namespace: &str, name: &str, port: u16) {
        self.shared.services.unregister(namespace, name, port);
    }

    /// The audit events so far, oldest first (empty unless the server audits into
    /// memory: [`TestServerBuilder::audit`]); see [`crate::audit`].
    pub fn audit_events(&self) -> Vec<crate::AuditEvent> {
        self.shared.audit_events()
    }

    /// Stops the kubelet of `node`, as a crashed or partitioned node: it renews no Lease
    /// and syncs no pod. After the node monitor grace period (50 s on the server's clock)
    /// the node lifecycle controller marks the node `NotReady` (`Ready=Unknown`), taints it
    /// `node.kubernetes.io/unreachable` and marks its pods not ready; the taint eviction
    /// controller deletes its pods once their toleration (300 s by default) runs out, and
    /// their controllers replace them on other nodes. The deleted pods stay `Terminating`
    /// until the kubelet starts again, as on a real cluster.
    pub async fn stop_kubelet(&self, node: &str) -> Result<(), ServerError> {
        let cluster = self.cluster.as_ref().ok_or(ServerError::NoCluster)?;
        Ok(crate::controllers::set_kubelet(cluster, node, false).await?)
    }

    /// Starts the kubelet of `node` again: it posts a Ready status and renews its Lease at
    /// once, the node lifecycle controller lifts its taints, and its pods are synced
    /// (ready again, or their deletion finished).
    pub async fn start_kubelet(&self, node: &str) -> Result<(), ServerError> {
        let cluster = self.cluster.as_ref().ok_or(ServerError::NoCluster)?;
        Ok(crate::controllers::set_kubelet(cluster, node, true).await?)
    }

    /// Fault injection: the next requests `rule` matches fail (see [`crate::FailRule`]).
    pub fn fail(&self, rule: crate::FailRule) {
        self.shared.faults.fail(rule);
    }

    /// Fault injection: scripts a kubelet fault while the server runs (see
    /// [`crate::PodFault`]): the kubelets look at every pod again, so a running container
    /// it selects exits (or turns unready) at once if its run time has passed, and new
    /// containers meet it when they start. Fails if the rule's label selector does not
    /// parse.
    pub fn add_pod_fault(&self, fault: crate::PodFault) -> Result<(), crate::PodFaultError> {
        self.shared.pod_faults.add(fault)
    }

    /// Fault injection: removes every kubelet fault rule (pods annotated
    /// `kubegen.io/fault` keep theirs); a container waiting in a back-off starts when its
    /// back-off ends.
    pub fn clear_pod_faults(&self) {
        self.shared.pod_faults.clear();
    }

    /// Fault injection: delay every response.
    pub fn set_delay(&self, delay: Option<std::time::Duration>) {
        self.shared.faults.set_delay(delay);
    }

    /// Fault injection: every open watch stays open but sends nothing (no events, no
    /// bookmarks, no close at its timeout: a half-dead connection) for `duration`, or until
    /// [`TestServer::resume_watches`] when `None`; then it carries on. Watches opened
    /// later are served.
    pub fn stall_watches(&self, duration: Option<std::time::Duration>) {
        self.shared.faults.stall_watches(duration);
    }

    /// Fault injection: ends a watch stall.
    pub fn resume_watches(&self) {
        self.shared.faults.resume_watches();
    }

    /// Fault injection: every watch event arrives `delay` after it happened (`None` to
    /// stop); responses to other requests are not delayed.
    pub fn set_watch_delivery_delay(&self, delay: Option<std::time::Duration>) {
        self.shared.faults.set_watch_delivery_delay(delay);
    }

    /// Fault injection: end every open watch.
    pub fn drop_watches(&self) {
        self.shared.engine.store().drop_watchers();
    }

    /// Fault injection: forget history, so resuming from any earlier revision is 410.
    pub fn compact(&self) {
        self.shared.engine.store().compact();
    }

    /// Fault injection: drop every open connection (and watch); state is kept.
    pub fn restart(&self) {
        let mut token = self.connections.lock();
        token.cancel();
        *token = CancellationToken::new();
        drop(token);
        self.shared.engine.store().drop_watchers();
    }

    /// An in-process transport over this server's state (reactors and action log are its own).
    pub fn transport(&self) -> crate::InProcess {
        crate::InProcess::from_shared(self.shared.clone())
    }

    /// Registers CRDs from a YAML/JSON file (as `kubectl create -f` would).
    pub fn load_crd_file(&self, path: &Path) -> Result<(), ServerError> {
        crate::load_crd_file(&self.shared.engine, path)
    }

    /// Registers the CRDs in YAML/JSON `text` (e.g. an `include_str!` of a manifest).
    pub fn load_crd_yaml(&self, text: &str) -> Result<(), ServerError> {
        crate::load_crds(&self.shared.engine, "<inline>", text)
    }

    /// A kubeconfig pointing at this server, with the admin's token.
    pub fn kubeconfig(&self) -> String {
        crate::kubeconfig::render(&self.url(), Some(&self.token), self.ca_pem.as_deref())
    }

    /// The admin's bearer token (user `admin` in `system:masters`).
    pub fn admin_token(&self) -> &str {
        &self.token
    }

    /// Writes [`TestServer::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), ServerError> {
        std::fs::write(path, self.kubeconfig())?;
        Ok(())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.connections.lock().cancel();
        self.shared.shutdown.cancel();
    }
}
