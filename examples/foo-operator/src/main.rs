//! `foo-operator`: the Foo operator on kubegen's controller builder.
//!
//! With `--kubeconfig` or `KUBECONFIG` it runs against that cluster (apply
//! `config/crd/` first); without, it starts the embedded test server and installs the
//! CRD itself. It runs under a [`Manager`](kubegen::manager::Manager): the controller runs
//! while this replica holds the Lease `foo-operator` (start several replicas: one leads),
//! `/healthz` and `/readyz` are served on `--probe-addr`, `/metrics` on `--metrics-addr`
//! (both printed at start). `--demo` plays a scripted walk-through and exits 0 when every
//! step happened; otherwise it runs until Ctrl-C or SIGTERM, lets reconciles in flight
//! finish, releases the Lease and exits 0.
//!
//! `--shards [RING]` (ring `foo-operator` by default) runs every replica instead of one
//! leader: each holds its own Lease `<RING>-<identity>` and reconciles only the Foos the
//! ring's sharder assigns to it (label `shard.kubegen.io/<RING>: <identity>`), and creates
//! each Foo's Deployment with the same label, so it lands in the same replica's cache.
//! A replica that loses its Lease exits 1 (restart it: it joins again); `/readyz` reports
//! the ring and `/metrics` its `kubegen_shard_ring_*` series. `--lease-duration`,
//! `--renew-deadline` and `--retry-period` set the Lease timings of either mode.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use foo_operator::{CRD_YAML, demo, operator};
use kubegen::client::{Client, Config, KubeConfigOptions};
use kubegen::leaderelection::LeaderElectionConfig;
use kubegen_testserver::TestServer;
use tokio_util::sync::CancellationToken;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "foo-operator",
    about = "The Foo operator on kubegen's controller builder"
)]
struct Args {
    /// `crd`: print the Foo CRD (`Foo::crd()`) as YAML and exit.
    #[command(subcommand)]
    command: Option<Subcommand>,
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
    /// This replica's identity in the leader election or the shard ring (default: hostname
    /// and process id).
    #[arg(long)]
    identity: Option<String>,
    /// Namespace of the Lease (or of the shard ring's Leases).
    #[arg(long, default_value = "default")]
    lease_namespace: String,
    /// Shard the Foos over every replica in the ring RING instead of electing a leader.
    #[arg(
        long,
        value_name = "RING",
        num_args = 0..=1,
        default_missing_value = operator::NAME
    )]
    shards: Option<String>,
    /// How long a Lease stays valid after its last renewal (`15s`, `1500ms`; default 15s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    lease_duration: Option<Duration>,
    /// How long the holder keeps trying to renew before it stops (default 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    renew_deadline: Option<Duration>,
    /// The pause between two attempts to acquire or renew (default 2s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    retry_period: Option<Duration>,
}

/// `1500ms`, `2s`, `1m` or a number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is no duration (as 1500ms, 2s or 1m)"))?;
    let seconds = match unit {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" => number * 60.0,
        _ => return Err(format!("{text:?}: the unit is ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// Subcommands.
#[derive(Debug, clap::Subcommand)]
enum Subcommand {
    /// Print the Foo CustomResourceDefinition (`Foo::crd()`, derived from the Rust type)
    /// as YAML; `hack/update-codegen.sh` writes it to `config/crd/`.
    Crd,
}

/// The YAML of [`foo_operator::Foo::crd()`], in the layout `kubegen-codegen crd` writes.
fn crd_yaml() -> Result<String, serde_json::Error> {
    let crd = serde_json::to_value(foo_operator::Foo::crd())?;
    Ok(format!(
        "# Code generated by `foo-operator crd` (Foo::crd()). DO NOT EDIT.\n---\n{}",
        kubegen_codegen::crd::yaml::to_yaml(&crd)
    ))
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
        shards: args.shards,
        election: {
            let defaults = LeaderElectionConfig::default();
            LeaderElectionConfig {
                lease_duration: args.lease_duration.unwrap_or(defaults.lease_duration),
                renew_deadline: args.renew_deadline.unwrap_or(defaults.renew_deadline),
                retry_period: args.retry_period.unwrap_or(defaults.retry_period),
                ..defaults
            }
        },
    };
    let manager = operator::manager(client.clone(), &options)?;
    if let (Some(probes), Some(metrics)) = (manager.probe_addr(), manager.metrics_addr()) {
        let ring = match &options.shards {
            Some(ring) => format!(" in shard ring {ring}"),
            None => String::new(),
        };
        println!(
            "probes at http://{probes}/readyz, metrics at http://{metrics}/metrics, identity {}{ring}",
            options.identity
        );
    }
    if !args.demo {
        if embedded.is_some() {
            println!(
                "operator running; kubectl --server <url> apply -f examples/sample-controller/artifacts/example-foo.yaml; Ctrl-C stops"
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
        .with_ansi(kubegen::terminal::color_enabled())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    if let Some(Subcommand::Crd) = args.command {
        return match crd_yaml() {
            Ok(yaml) => {
                print!("{yaml}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("foo-operator crd: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("foo-operator: {e}");
            ExitCode::FAILURE
        }
    }
}
