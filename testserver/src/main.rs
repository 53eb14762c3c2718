//! `kubegen-testserver`: run the in-memory Kubernetes API server standalone.
//!
//! ```text
//! kubegen-testserver --addr 127.0.0.1:8080 --kubeconfig-out kubeconfig --crd crds/foo.yaml
//! ```
//!
//! Prints its URL on the first line of stdout and serves until interrupted.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use kubegen_testserver::{ClusterConfig, EngineConfig, TestServer};

/// An in-memory Kubernetes API server for tests (loopback only unless --addr says otherwise).
#[derive(Debug, Parser)]
#[command(name = "kubegen-testserver", version)]
struct Args {
    /// Listen address.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Write a kubeconfig pointing at the server to this file.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Require this bearer token.
    #[arg(long)]
    token: Option<String>,
    /// Serve HTTPS with a self-signed CA (written into the kubeconfig).
    #[arg(long)]
    tls: bool,
    /// Register the CustomResourceDefinitions in this file (repeatable).
    #[arg(long = "crd")]
    crds: Vec<PathBuf>,
    /// Number of change events kept for watch resume.
    #[arg(long, default_value_t = 100_000)]
    history: usize,
    /// Seconds between watch bookmarks.
    #[arg(long, default_value_t = 5)]
    bookmark_seconds: u64,
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Run no workload controllers, scheduler or kubelets (an API server alone, with
    /// `--nodes` nodes registered).
    #[arg(long)]
    no_controllers: bool,
    /// Milliseconds a scheduled pod takes to start its containers.
    #[arg(long, default_value_t = 100)]
    pod_start_latency_ms: u64,
    /// Milliseconds the containers of a run-to-completion pod (a Job's) run.
    #[arg(long, default_value_t = 1000)]
    pod_run_time_ms: u64,
    /// Append an audit.k8s.io/v1 Event per request to this file as JSON lines (`-`:
    /// stdout); read it back with `kubegen-codegen rbac --from-audit`.
    #[arg(long)]
    audit_log_path: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_ansi(kubegen::terminal::color_enabled())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let mut builder = TestServer::builder().addr(args.addr).engine_config(
        EngineConfig::default()
            .history_limit(args.history)
            .bookmark_interval(Duration::from_secs(args.bookmark_seconds.max(1))),
    );
    let mut cluster = ClusterConfig::default()
        .nodes(args.nodes)
        .pod_start_latency(Duration::from_millis(args.pod_start_latency_ms))
        .pod_run_time(Duration::from_millis(args.pod_run_time_ms));
    if args.no_controllers {
        cluster.controllers.clear();
    }
    builder = builder.tls(args.tls).cluster(cluster);
    if let Some(path) = &args.audit_log_path {
        builder = builder.audit_log_path(path);
    }
    if let Some(t) = &args.token {
        builder = builder.token(t.clone());
    }
    let server = match builder.start().await {
        Ok(s) => s,
        Err(err) => {
            eprintln!("kubegen-testserver: {err}");
            return ExitCode::FAILURE;
        }
    };
    for crd in &args.crds {
        if let Err(err) = server.load_crd_file(crd) {
            eprintln!("kubegen-testserver: {err}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(path) = &args.kubeconfig_out
        && let Err(err) = server.write_kubeconfig(path)
    {
        eprintln!("kubegen-testserver: writing kubeconfig: {err}");
        return ExitCode::FAILURE;
    }
    println!("{}", server.url());
    if let Err(err) = tokio::signal::ctrl_c().await {
        eprintln!("kubegen-testserver: waiting for ctrl-c: {err}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
