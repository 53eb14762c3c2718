//! `kubegen-testserver`: run the in-memory Kubernetes API server standalone.
//!
//! ```text
//! kubegen-testserver --addr 127.0.0.1:8080 --kubeconfig-out kubeconfig --crd crds/foo.yaml
//! ```
//!
//! Prints its URL on the first line of stdout and serves until interrupted.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use kubegen_testserver::{AuthConfig, AuthorizationMode, ClusterConfig, EngineConfig, TestServer};

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
    /// The admin's bearer token (user `admin` in `system:masters`, what the written
    /// kubeconfig carries; a fresh one without it); given, it also turns anonymous
    /// requests off (`--anonymous-auth=false`).
    #[arg(long)]
    token: Option<String>,
    /// Static bearer tokens: a CSV file of `token,user,uid[,"group1,group2"]` rows
    /// (kube-apiserver's `--token-auth-file`).
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// Serve requests without credentials as `system:anonymous` (else 401).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    anonymous_auth: bool,
    /// Authenticate client certificates signed by a CA of this PEM bundle (CN the user,
    /// O the groups); needs --tls.
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// Authorizers, comma-separated, in order: `AlwaysAllow` or `RBAC`.
    #[arg(long, default_value = "AlwaysAllow")]
    authorization_mode: String,
    /// The `iss` of the ServiceAccount tokens the server mints.
    #[arg(long)]
    service_account_issuer: Option<String>,
    /// The audiences a token must be for (comma-separated; default the issuer).
    #[arg(long, value_delimiter = ',')]
    api_audiences: Vec<String>,
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

/// `--authorization-mode`: kube-apiserver's comma-separated list of authorizers; this
/// server runs one, `AlwaysAllow` or `RBAC` (`Node` and `Webhook` are not modelled).
fn authorization_mode(flag: &str) -> Result<AuthorizationMode, String> {
    let modes: Vec<&str> = flag
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    let mut chosen = None;
    for mode in &modes {
        let this = match *mode {
            "AlwaysAllow" => AuthorizationMode::AlwaysAllow,
            "RBAC" => AuthorizationMode::Rbac,
            other => {
                return Err(format!(
                    "--authorization-mode: authorization mode {other:?} is not supported (AlwaysAllow, RBAC)"
                ));
            }
        };
        if modes.iter().filter(|m| *m == mode).count() > 1 {
            return Err(format!(
                "--authorization-mode: {mode:?} has mode specified more than once"
            ));
        }
        // The first authorizer that allows decides: AlwaysAllow anywhere allows all.
        chosen = Some(match (chosen, this) {
            (Some(AuthorizationMode::AlwaysAllow), _) | (_, AuthorizationMode::AlwaysAllow) => {
                AuthorizationMode::AlwaysAllow
            }
            _ => this,
        });
    }
    chosen.ok_or_else(|| {
        "--authorization-mode: at least one authorization mode must be passed".into()
    })
}

/// The authentication and authorization flags.
fn auth_config(args: &Args) -> Result<AuthConfig, String> {
    let mut auth = AuthConfig::default().anonymous(args.anonymous_auth);
    auth.authorization_mode = authorization_mode(&args.authorization_mode)?;
    if let Some(path) = &args.token_auth_file {
        auth = auth.token_auth_file(path).map_err(|e| e.to_string())?;
    }
    if let Some(path) = &args.client_ca_file {
        if !args.tls {
            return Err("--client-ca-file needs --tls".into());
        }
        auth = auth.client_ca_file(path).map_err(|e| e.to_string())?;
    }
    if let Some(issuer) = &args.service_account_issuer {
        auth = auth.service_account_issuer(issuer.clone());
    }
    if !args.api_audiences.is_empty() {
        auth = auth.api_audiences(args.api_audiences.clone());
    }
    Ok(auth)
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
    let auth = match auth_config(&args) {
        Ok(auth) => auth,
        Err(err) => {
            eprintln!("kubegen-testserver: {err}");
            return ExitCode::FAILURE;
        }
    };
    builder = builder.tls(args.tls).cluster(cluster).auth(auth);
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

#[cfg(test)]
mod tests {
    //! After kube-apiserver's `pkg/kubeapiserver/options/authorization.go` (`Validate`:
    //! known modes, each once, at least one).

    use super::*;

    #[test]
    fn authorization_modes_parse_as_kube_lists_them() {
        assert_eq!(
            authorization_mode("AlwaysAllow"),
            Ok(AuthorizationMode::AlwaysAllow)
        );
        assert_eq!(authorization_mode("RBAC"), Ok(AuthorizationMode::Rbac));
        assert_eq!(
            authorization_mode("RBAC,AlwaysAllow"),
            Ok(AuthorizationMode::AlwaysAllow)
        );
        assert!(
            authorization_mode("Node,RBAC").is_err_and(|e| e.contains("\"Node\" is not supported"))
        );
        assert!(authorization_mode("RBAC,RBAC").is_err_and(|e| e.contains("more than once")));
        assert!(authorization_mode("").is_err());
    }

    #[test]
    fn auth_flags_make_the_config() {
        let args = Args::parse_from([
            "kubegen-testserver",
            "--anonymous-auth=false",
            "--authorization-mode",
            "RBAC",
            "--api-audiences",
            "a,b",
        ]);
        let auth = auth_config(&args).expect("config");
        assert!(!auth.anonymous);
        assert_eq!(auth.authorization_mode, AuthorizationMode::Rbac);
        assert_eq!(auth.api_audiences, ["a", "b"]);
        let args = Args::parse_from(["kubegen-testserver", "--client-ca-file", "ca.pem"]);
        assert_eq!(
            auth_config(&args).expect_err("no tls"),
            "--client-ca-file needs --tls"
        );
    }
}
