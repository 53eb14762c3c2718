//! Informer basics: a shared informer factory, an event handler printing what changes, and a
//! lister answering label queries from the cache.
//!
//! Without `--kubeconfig` / `KUBECONFIG` it starts the embedded test server. It creates two
//! ConfigMaps, starts a ConfigMap informer (the handler sees both as initial adds), queries
//! the lister by label, then creates, updates and deletes ConfigMaps, waits until the
//! handler has seen each change, queries again, and exits 0 (or 1 after `--timeout`).

use std::{collections::BTreeMap, path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{
    ObjectMeta, Selector,
    params::{DeleteParams, PostParams},
};
use kubegen::{
    cache::{DeletedObject, Lister, ResourceEventHandler, meta_namespace_key},
    client::{Client, Config, KubeConfigOptions, ResourceClient},
    informers::SharedInformerFactory,
};
use kubegen_testserver::TestServer;
use tokio::sync::mpsc;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "informer-basics",
    about = "factory, event handler and lister basics"
)]
struct Args {
    /// A kubeconfig file (default: KUBECONFIG; without either, the embedded test server).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The namespace the example works in.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Seconds the example may take before it gives up with exit code 1.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
}

/// What can stop the example.
#[derive(Debug, thiserror::Error)]
enum ExampleError {
    #[error("test server: {0}")]
    Server(#[from] kubegen_testserver::ServerError),
    #[error("client configuration: {0}")]
    Config(#[from] kubegen::client::ConfigError),
    #[error("API request failed: {0}")]
    Api(#[from] kubegen::client::Error),
    #[error("informer: {0}")]
    Informer(#[from] kubegen::cache::InformerError),
    #[error("the ConfigMap cache did not sync")]
    NotSynced,
    #[error("the handler stopped before it saw {0:?}")]
    HandlerStopped(Vec<Change>),
    #[error("the example did not finish within {0} s")]
    Timeout(u64),
}

/// A notification, as the handler reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    Added(String),
    Updated(String),
    Deleted(String),
}

/// Prints every notification and forwards it to the example's script.
struct Printer {
    tx: mpsc::UnboundedSender<Change>,
}

fn key(cm: &ConfigMap) -> String {
    meta_namespace_key(cm).unwrap_or_else(|_| "<unnamed>".into())
}

fn value(cm: &ConfigMap) -> &str {
    cm.data
        .as_ref()
        .and_then(|d| d.get("value"))
        .map_or("", String::as_str)
}

impl ResourceEventHandler<ConfigMap> for Printer {
    fn on_add(&self, obj: &Arc<ConfigMap>, is_in_initial_list: bool) {
        let initial = if is_in_initial_list {
            " (initial list)"
        } else {
            ""
        };
        println!("ADD    {}{initial}", key(obj));
        let _ = self.tx.send(Change::Added(key(obj)));
    }

    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        println!(
            "UPDATE {}: value {} -> {}",
            key(new),
            value(old),
            value(new)
        );
        let _ = self.tx.send(Change::Updated(key(new)));
    }

    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        let k = match obj {
            DeletedObject::Object(cm) => key(cm),
            DeletedObject::Tombstone(t) => t.key.clone(),
        };
        println!("DELETE {k}");
        let _ = self.tx.send(Change::Deleted(k));
    }
}

fn config_map(ns: &str, name: &str, app: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: Some(BTreeMap::from([("app".to_owned(), app.to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("value".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_ansi(kubegen::terminal::color_enabled())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = Args::parse();
    let timeout = args.timeout;
    let result = match tokio::time::timeout(Duration::from_secs(timeout), run(args)).await {
        Ok(r) => r,
        Err(_) => Err(ExampleError::Timeout(timeout)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), ExampleError> {
    let kubeconfig = args
        .kubeconfig
        .clone()
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
    let (client, _server) = match kubeconfig {
        Some(path) => {
            let config =
                Config::from_kubeconfig_files(&[path], &KubeConfigOptions::default()).await?;
            (Client::try_from_config(config)?, None)
        }
        None => {
            let server = TestServer::start().await?;
            println!("started the embedded test server at {}", server.url());
            (server.client()?, Some(server))
        }
    };
    let ns = args.namespace.as_str();
    let api: ResourceClient<ConfigMap> = ResourceClient::namespaced(client.clone(), ns);
    let pp = PostParams::default();
    api.create(&pp, &config_map(ns, "web-config", "web", "1"))
        .await?;
    api.create(&pp, &config_map(ns, "db-config", "db", "1"))
        .await?;

    // one factory per client; one shared informer per type, however often it is asked for
    let factory = SharedInformerFactory::builder(client)
        .namespace(ns)
        .default_resync(Duration::ZERO)
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    let (tx, mut rx) = mpsc::unbounded_channel();
    informer.add_event_handler(Printer { tx })?;
    let lister = factory.lister_for::<ConfigMap>();

    factory.start();
    let stop = tokio_util::sync::CancellationToken::new();
    if factory
        .wait_for_cache_sync(&stop)
        .await
        .values()
        .any(|ok| !ok)
    {
        return Err(ExampleError::NotSynced);
    }
    println!(
        "cache synced: {} ConfigMaps",
        lister.indexer().list_keys().len()
    );
    let web = Selector::from_iter([("app", "web")]);
    print_query(&lister, ns, &web);

    let mut want = vec![
        Change::Added(format!("{ns}/web-config")),
        Change::Added(format!("{ns}/db-config")),
    ];
    api.create(&pp, &config_map(ns, "web-config-2", "web", "1"))
        .await?;
    let mut current = api.get("web-config").await?;
    current.data = Some(BTreeMap::from([("value".to_owned(), "2".to_owned())]));
    api.update(&pp, &current).await?;
    api.delete("db-config", &DeleteParams::default()).await?;
    want.extend([
        Change::Added(format!("{ns}/web-config-2")),
        Change::Updated(format!("{ns}/web-config")),
        Change::Deleted(format!("{ns}/db-config")),
    ]);
    while !want.is_empty() {
        let Some(change) = rx.recv().await else {
            return Err(ExampleError::HandlerStopped(want));
        };
        want.retain(|w| *w != change);
    }

    print_query(&lister, ns, &web);
    match lister.namespaced(ns).get("db-config") {
        Ok(_) => println!("lister: {ns}/db-config is still cached"),
        Err(e) => println!("lister: get {ns}/db-config: {e}"),
    }

    // clean up what we created, so a run against a real cluster leaves nothing behind
    for name in ["web-config", "web-config-2"] {
        api.delete(name, &DeleteParams::default()).await?;
    }
    factory.shutdown().await;
    println!("done");
    Ok(())
}

fn print_query(lister: &Lister<ConfigMap>, ns: &str, selector: &Selector) {
    let mut names: Vec<String> = lister
        .namespaced(ns)
        .list(selector)
        .iter()
        .filter_map(|cm| cm.metadata.name.clone())
        .collect();
    names.sort();
    println!("lister: ConfigMaps with {selector}: [{}]", names.join(", "));
}
