//! `foo-operator`: the Foo operator on kubegen's controller builder.
//!
//! With `--kubeconfig` or `KUBECONFIG` it runs against that cluster (apply
//! `artifacts/crd.yaml` first); without, it starts the embedded test server and installs the
//! CRD itself. `--demo` plays a scripted walk-through and exits 0 when every step happened;
//! otherwise it runs until Ctrl-C or SIGTERM, then lets reconciles in flight finish.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use foo_operator::{CRD_YAML, demo, operator};
use kubegen::client::{Client, Config, KubeConfigOptions};
use kubegen_testserver::TestServer;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "foo-operator",
    about = "The Foo operator on kubegen's controller builder"
)]
struct Args {
    /// A kubeconfig (default: KUBECONFIG; without either, the embedded test server).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Play the scripted walk-through, then exit.
    #[arg(long)]
    demo: bool,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Namespace the demo works in.
    #[arg(long, default_value = "default")]
    namespace: String,
}

#[derive(Debug, thiserror::Error)]
enum MainError {
    #[error("test server: {0}")]
    Server(#[from] kubegen_testserver::ServerError),
    #[error("client configuration: {0}")]
    Config(#[from] kubegen::client::ConfigError),
    #[error("controller: {0}")]
    Controller(#[from] kubegen::controller::ControllerError),
    #[error("demo: {0}")]
    Demo(#[from] demo::DemoError),
    #[error("signals: {0}")]
    Signal(#[from] std::io::Error),
}

async fn run(args: Args) -> Result<(), MainError> {
    let kubeconfig = args
        .kubeconfig
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
    let mut embedded = None;
    let client = if let Some(path) = kubeconfig {
        let config = Config::from_kubeconfig_files(&[path], &KubeConfigOptions::default()).await?;
        Client::try_from_config(config)?
    } else {
        let server = TestServer::start().await?;
        server.load_crd_yaml(CRD_YAML)?;
        println!(
            "embedded API server at {} (Foo CRD installed)",
            server.url()
        );
        let client = server.client()?;
        embedded = Some(server);
        client
    };
    let running = operator::start(client.clone(), args.workers);
    let outcome = if args.demo {
        demo::run(client, &args.namespace, |line| println!("{line}"))
            .await
            .map_err(MainError::from)
    } else {
        if embedded.is_some() {
            println!(
                "operator running; kubectl --server <url> apply -f examples/foo-operator/artifacts/; Ctrl-C stops"
            );
        }
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r?,
            _ = term.recv() => {}
        }
        Ok(())
    };
    let report = running.shutdown().await?;
    tracing::info!(?report, "operator stopped");
    outcome
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("foo-operator: {e}");
            ExitCode::FAILURE
        }
    }
}
