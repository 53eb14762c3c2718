//! kubeconfig files (client-go's `tools/clientcmd`): reading, merging and choosing a
//! context.
//!
//! - [`Kubeconfig::read`] loads the files listed in `KUBECONFIG` (missing ones skipped,
//!   as client-go's loader does) or `~/.kube/config`; [`Kubeconfig::read_from`] loads one
//!   file; [`Kubeconfig::from_yaml`] parses text.
//! - [`Kubeconfig::merge`] follows client-go's rules for a `KUBECONFIG` list: the first
//!   file to set `current-context` or to name a cluster, user or context wins, whole
//!   entries (a later file's entry of the same name is dropped, not merged field by field).
//! - Relative paths in a file (`certificate-authority`, `client-certificate`, `client-key`,
//!   `tokenFile`, and an exec `command` that holds a path separator) are resolved against
//!   that file's directory when it is read, as client-go's `ResolveLocalPaths` does.
//! - [`Kubeconfig::select`] picks the context, cluster and user for a
//!   [`KubeConfigOptions`] (kubectl's `--context`, `--cluster`, `--user`), with kubectl's
//!   errors when something named is missing.
//!
//! [`Config::from_custom_kubeconfig`](super::Config::from_custom_kubeconfig) turns the
//! selection into a client configuration.
//!
//! YAML is read with saphyr-parser's event parser (see `yaml.rs` for the scalar rules: the
//! YAML 1.2 core schema, and a string field takes any scalar's text as written).

mod load;
mod types;
mod yaml;

use std::{fmt, path::PathBuf};

pub use load::Selection;
pub use types::{
    AuthInfo, AuthProviderConfig, Cluster, Context, ExecConfig, ExecEnvVar, ExecInteractiveMode,
    Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext, NamedExtension, Preferences,
};

/// The environment variable listing kubeconfig files (client-go's
/// `RecommendedConfigPathEnvVar`).
pub const KUBECONFIG_ENV: &str = "KUBECONFIG";

/// The name of the cluster extension handed to exec plugins as `spec.cluster.config`
/// (client-go's `clusterExtensionKey`).
pub const EXEC_CLUSTER_EXTENSION: &str = "client.authentication.k8s.io/exec";

/// Which context, cluster and user to use (kubectl's `--context`, `--cluster`, `--user`);
/// each `None` (or empty) falls back to the kubeconfig: `current-context`, then the
/// context's cluster and user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeConfigOptions {
    /// The context to use instead of `current-context`.
    pub context: Option<String>,
    /// The cluster to use instead of the context's.
    pub cluster: Option<String>,
    /// The user to use instead of the context's.
    pub user: Option<String>,
}

/// Why a kubeconfig could not be read or used. Messages name files, entries and fields,
/// never a token, password or key, and never quote the file's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KubeconfigError {
    /// A kubeconfig file could not be read.
    #[error("reading kubeconfig {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// No kubeconfig file exists at any of the places looked at.
    #[error("no kubeconfig found (looked for {})", DisplayPaths(paths))]
    NotFound {
        /// Where it was looked for (the `KUBECONFIG` list, or `~/.kube/config`).
        paths: Vec<PathBuf>,
    },
    /// `KUBECONFIG` is unset and there is no home directory to find `~/.kube/config` in.
    #[error("KUBECONFIG is not set and there is no home directory for ~/.kube/config")]
    NoHome,
    /// No files were given to merge.
    #[error("no kubeconfig files given")]
    NoFiles,
    /// The text is not YAML, or does not have the kubeconfig's shape.
    #[error("{}line {line}, column {column}: {message}", InFile(path))]
    Parse {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// The line (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// What is wrong (never a value from the file).
        message: String,
    },
    /// The document is of another kind or version than `Config` `v1`.
    #[error(
        "{}not a kubeconfig: {field} is {value:?}, expected {expected:?}",
        InFile(path)
    )]
    WrongKind {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// `kind` or `apiVersion`.
        field: &'static str,
        /// What the document says.
        value: String,
        /// What a kubeconfig says.
        expected: &'static str,
    },
    /// One file names two clusters, users, contexts or extensions alike (client-go refuses
    /// these too; across files the first one wins).
    #[error("{}duplicate name {name:?} in {list}", InFile(path))]
    DuplicateName {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// `clusters`, `users`, `contexts` or `extensions`.
        list: &'static str,
        /// The repeated name.
        name: String,
    },
    /// The kubeconfig has no clusters, users or contexts at all.
    #[error("the kubeconfig is empty: no configuration has been provided")]
    Empty,
    /// No context was chosen and the kubeconfig has no `current-context`.
    #[error("current-context is not set and no context was chosen")]
    NoCurrentContext,
    /// The chosen context does not exist.
    #[error("context {0:?} not found")]
    ContextNotFound(String),
    /// The cluster named by `--cluster` (the options) does not exist.
    #[error("cluster {0:?} not found")]
    ClusterNotFound(String),
    /// The context names a cluster that does not exist.
    #[error("cluster {cluster:?} was not found for context {context:?}")]
    ContextClusterNotFound {
        /// The context.
        context: String,
        /// The cluster it names.
        cluster: String,
    },
    /// The context names no cluster and none was chosen.
    #[error("cluster was not specified for context {0:?}")]
    NoCluster(String),
    /// The cluster has no `server`.
    #[error("no server found for cluster {0:?}")]
    NoServer(String),
    /// The user named by `--user` (the options) does not exist.
    #[error("user {0:?} not found")]
    UserNotFound(String),
    /// A `*-data` field is not valid base64.
    #[error("{field} is not valid base64")]
    InvalidBase64 {
        /// The field, e.g. `client-key-data`.
        field: &'static str,
    },
    /// A file a field names could not be read.
    #[error("reading {field} {}: {source}", path.display())]
    ReadData {
        /// The field, e.g. `client-certificate`.
        field: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
}

/// `"<path>: "` or nothing, before a message about a file's content.
struct InFile<'a>(&'a Option<PathBuf>);

impl fmt::Display for InFile<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(p) => write!(f, "{}: ", p.display()),
            None => Ok(()),
        }
    }
}

struct DisplayPaths<'a>(&'a [PathBuf]);

impl fmt::Display for DisplayPaths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", p.display())?;
        }
        Ok(())
    }
}
