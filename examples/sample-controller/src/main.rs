//! `sample-controller`: kubernetes/sample-controller with kubegen.
//!
//! With `--kubeconfig` or `KUBECONFIG` it runs against that cluster (install
//! `config/crd/` first). Without, it starts the embedded test server and installs
//! the CRD itself. `--demo` plays a scripted walk-through and exits 0 when every step
//! happened (1 otherwise); without `--demo` it runs until Ctrl-C or SIGTERM, then drains
//! its queue and exits.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kubegen::client::{Client, Config, KubeConfigOptions};
use kubegen_testserver::TestServer;
use sample_controller::{CRD_YAML, demo, runner};

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "sample-controller",
    about = "kubernetes/sample-controller in Rust"
)]
struct Args {
    /// A kubeconfig (default: KUBECONFIG; without either, the embedded test server).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Play the scripted walk-through, then exit.
    #[arg(long)]
    demo: bool,
    /// Worker tasks.
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
    #[error("informers: {0}")]
    Informer(#[from] kubegen::cache::InformerError),
    #[error("controller: {0}")]
    Controller(#[from] sample_controller::controller::ControllerError),
    #[error("demo: {0}")]
    Demo(#[from] demo::DemoError),
    #[error("signals: {0}")]
    Signal(#[from] std::io::Error),
}

async fn client(args: &Args) -> Result<(Client, Option<TestServer>), MainError> {
    let kubeconfig = args
        .kubeconfig
        .clone()
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
    match kubeconfig {
        Some(path) => {
            let config =
                Config::from_kubeconfig_files(&[path], &KubeConfigOptions::default()).await?;
            Ok((Client::try_from_config(config)?, None))
        }
        None => {
            let server = TestServer::start().await?;
            server.load_crd_yaml(CRD_YAML)?;
            println!(
                "embedded API server at {} (Foo CRD installed)",
                server.url()
            );
            Ok((server.client()?, Some(server)))
        }
    }
}

async fn shutdown_signal() -> Result<(), std::io::Error> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
    }
}

async fn run(args: Args) -> Result<(), MainError> {
    let (client, _server) = client(&args).await?;
    let running = runner::start(client.clone(), args.workers)?;
    if args.demo {
        let result = demo::run(client, &args.namespace, |line| println!("{line}")).await;
        running.shutdown().await?;
        result?;
    } else {
        if _server.is_some() {
            println!(
                "controller running; try kubectl --server <url> apply -f examples/sample-controller/artifacts/example-foo.yaml; Ctrl-C stops"
            );
        }
        shutdown_signal().await?;
        println!("shutting down: draining the workqueue");
        running.shutdown().await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_ansi(kubegen::terminal::color_enabled())
        .with_writer(std::io::stderr)
        .init();
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sample-controller: {e}");
            ExitCode::FAILURE
        }
    }
}
