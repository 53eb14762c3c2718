//! client-go's `examples/workqueue`, in Rust: a pod controller built from a shared informer,
//! a rate-limited workqueue and worker tasks.
//!
//! With `--kubeconfig` or `KUBECONFIG` it watches pods of a real cluster until Ctrl-C or
//! SIGTERM. Without, it starts the embedded test server and runs a scripted demo: a pod the
//! cache remembers from a previous run but the server no longer has, three new pods (one
//! that always fails its sync), an update, a delete — and exits 0 once the controller has
//! processed all of them, or 1 after `--timeout` seconds. Unlike client-go's example, a pod
//! whose key is dropped after its retries also gets a Warning event (`kubegen::record`).

mod controller;
mod demo;

use std::{path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use k8s_openapi::api::core::v1::EventSource;
use kubegen::{
    client::{Client, Config, KubeConfigOptions},
    informers::SharedInformerFactory,
    record::{ClientEventSink, EventBroadcaster},
};
use kubegen_testserver::TestServer;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use controller::Controller;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "workqueue-example",
    about = "client-go's workqueue example in Rust"
)]
struct Args {
    /// A kubeconfig file (default: KUBECONFIG; without either, the embedded test server).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The namespace whose pods are watched.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Worker tasks.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Run the scripted demo and exit (the default with the embedded test server).
    #[arg(long)]
    demo: bool,
    /// Seconds the demo may take before it gives up with exit code 1.
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
    #[error("informer: {0}")]
    Informer(#[from] kubegen::cache::InformerError),
    #[error("cache: {0}")]
    Cache(#[from] kubegen::cache::CacheError),
    #[error("demo: {0}")]
    Demo(#[from] demo::DemoError),
    #[error("caches did not sync")]
    NotSynced,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_ansi(kubegen::terminal::color_enabled())
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    match run(args).await {
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
    // keep the embedded server alive as long as the controller runs
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
    let demo = args.demo || _server.is_some();

    let factory = SharedInformerFactory::builder(client.clone())
        .namespace(args.namespace.clone())
        .build();
    let informer = factory.informer_for::<controller::PodSummary>();
    let (tx, rx) = mpsc::unbounded_channel();
    let broadcaster = EventBroadcaster::new();
    broadcaster.start_recording_to_sink(ClientEventSink::new(client.clone()));
    let recorder = broadcaster.new_recorder(EventSource {
        component: Some("workqueue-example".into()),
        host: None,
    });
    let controller = Controller::new(&informer, recorder, demo.then_some(tx))?;

    let stop = CancellationToken::new();
    factory.start();
    let synced = factory.wait_for_cache_sync(&stop).await;
    if synced.values().any(|ok| !ok) {
        return Err(ExampleError::NotSynced);
    }
    tracing::info!("Starting Pod controller");
    let workers: Vec<_> = (0..args.workers.max(1))
        .map(|_| tokio::spawn(controller.clone().run_worker()))
        .collect();

    let result = if demo {
        let script = demo::Demo::new(client, &args.namespace);
        tokio::time::timeout(Duration::from_secs(args.timeout), script.run(rx))
            .await
            .map_err(|_| demo::DemoError::Timeout(args.timeout))
            .and_then(|r| r)
            .map_err(ExampleError::from)
    } else {
        wait_for_signal().await;
        Ok(())
    };

    // clean shutdown: no new keys, finish the ones in flight, stop the informers
    tracing::info!("Stopping Pod controller");
    controller.queue().shut_down_with_drain().await;
    for w in workers {
        let _ = w.await;
    }
    stop.cancel();
    factory.shutdown().await;
    broadcaster.shutdown().await;
    result
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
