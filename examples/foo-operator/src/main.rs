//! `foo-operator`: the Foo operator on kubegen's controller builder.
//!
//! With `--kubeconfig` or `KUBECONFIG` it runs against that cluster (apply
//! `artifacts/crd.yaml` first); without, it starts the embedded test server and installs the
//! CRD itself. It runs under a [`Manager`](kubegen::manager::Manager): the controller runs
//! while this replica holds the Lease `foo-operator` (start several replicas: one leads),
//! `/healthz` and `/readyz` are served on `--probe-addr`, `/metrics` on `--metrics-addr`
//! (both printed at start). `--demo` plays a scripted walk-through and exits 0 when every
//! step happened; otherwise it runs until Ctrl-C or SIGTERM, lets reconciles in flight
//! finish, releases the Lease and exits 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use foo_operator::{CRD_YAML, demo, operator};
use kubegen::client::{Client, Config, KubeConfigOptions};
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

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
    /// Address of /healthz and /readyz (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    probe_addr: SocketAddr,
    /// Address of /metrics (the probe address shares the probes' server).
    #[arg(long, default_value = "127.0.0.1:0")]
    metrics_addr: SocketAddr,
    /// This replica's identity in the leader election (default: hostname and process id).
    #[arg(long)]
    identity: Option<String>,
    /// Namespace of the Lease.
    #[arg(long, default_value = "default")]
    lease_namespace: String,
}

#[derive(Debug, thiserror::Error)]
enum MainError {
    #[error("test server: {0}")]
    Server(#[from] kubegen_testserver::ServerError),
    #[error("client configuration: {0}")]
    Config(#[from] kubegen::client::ConfigError),
    #[error("manager: {0}")]
    Manager(#[from] kubegen::manager::ManagerError),
    #[error("demo: {0}")]
    Demo(#[from] demo::DemoError),
}

fn identity() -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    format!("{}-{}", host.trim(), std::process::id())
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
    let options = operator::Options {
        workers: args.workers,
        probe_addr: args.probe_addr,
        metrics_addr: args.metrics_addr,
        identity: args.identity.unwrap_or_else(identity),
        lease_namespace: args.lease_namespace,
    };
    let manager = operator::manager(client.clone(), &options)?;
    if let (Some(probes), Some(metrics)) = (manager.probe_addr(), manager.metrics_addr()) {
        println!(
            "probes at http://{probes}/readyz, metrics at http://{metrics}/metrics, identity {}",
            options.identity
        );
    }
    if !args.demo {
        if embedded.is_some() {
            println!(
                "operator running; kubectl --server <url> apply -f examples/foo-operator/artifacts/; Ctrl-C stops"
            );
        }
        return Ok(manager.run_until_signal().await?);
    }
    let stop = CancellationToken::new();
    let running = tokio::spawn(manager.run(stop.clone()));
    let outcome = demo::run(client, &args.namespace, |line| println!("{line}")).await;
    stop.cancel();
    match running.await {
        Ok(result) => result?,
        Err(error) => tracing::error!(%error, "manager task failed"),
    }
    Ok(outcome?)
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
