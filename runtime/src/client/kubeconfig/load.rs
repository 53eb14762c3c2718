//! Reading, merging and path resolution (client-go's `tools/clientcmd/loader.go`), and the
//! choice of context, cluster and user (`tools/clientcmd/client_config.go`).

use std::{
    collections::HashSet,
    ffi::OsString,
    path::{Component, MAIN_SEPARATOR, Path, PathBuf},
};

use base64::Engine as _;
use secrecy::SecretString;

use super::{
    AuthInfo, Cluster, Context, KUBECONFIG_ENV, KubeConfigOptions, Kubeconfig, KubeconfigError,
    NamedExtension, yaml,
};

/// What a [`KubeConfigOptions`] picks in a [`Kubeconfig`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Selection<'a> {
    /// The context's name (`None` when no context was needed: only a cluster was chosen).
    pub context_name: Option<&'a str>,
    /// The context.
    pub context: Option<&'a Context>,
    /// The cluster's name.
    pub cluster_name: &'a str,
    /// The cluster (its `server` is set).
    pub cluster: &'a Cluster,
    /// The user's name, if the context or the options name one.
    pub user_name: Option<&'a str>,
    /// The user; `None` when none is named, or when the context names one that does not
    /// exist (client-go then connects without credentials too).
    pub user: Option<&'a AuthInfo>,
}

impl<'a> Selection<'a> {
    /// The context's namespace, if it sets one.
    pub fn namespace(&self) -> Option<&'a str> {
        self.context.and_then(|c| nonempty(c.namespace.as_deref()))
    }

    /// The cluster's `server`.
    pub fn server(&self) -> &'a str {
        self.cluster.server.as_deref().unwrap_or_default()
    }
}

/// `Some(s)` unless `s` is absent or empty (Go's empty string means unset).
pub(crate) fn nonempty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

impl Kubeconfig {
    /// Parses kubeconfig YAML. Several documents (`---`) merge as several files do; an
    /// empty text is an empty kubeconfig. Relative paths stay relative (see
    /// [`Kubeconfig::resolve_paths`]).
    pub fn from_yaml(text: &str) -> Result<Self, KubeconfigError> {
        parse(text, None)
    }

    /// Reads one kubeconfig file (UTF-8, or UTF-16 with a byte-order mark) and resolves its
    /// relative paths against its directory.
    pub fn read_from(path: impl AsRef<Path>) -> Result<Self, KubeconfigError> {
        let path = path.as_ref();
        let read_err = |source| KubeconfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        let bytes = std::fs::read(path).map_err(read_err)?;
        let text = decode_text(bytes).map_err(read_err)?;
        let mut config = parse(&text, Some(path))?;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(dir) = absolute.parent() {
            config.resolve_paths(dir);
        }
        tracing::debug!(path = %path.display(), "read kubeconfig");
        Ok(config)
    }

    /// Reads and merges `paths` as client-go does a `KUBECONFIG` list: empty and repeated
    /// entries are skipped, missing files too (it is an error only when none exists), and
    /// the first file to set a value wins ([`Kubeconfig::merge`]).
    pub fn read_files(paths: &[impl AsRef<Path>]) -> Result<Self, KubeconfigError> {
        let mut seen = HashSet::new();
        let paths: Vec<&Path> = paths
            .iter()
            .map(AsRef::as_ref)
            .filter(|p| !p.as_os_str().is_empty() && seen.insert(p.to_path_buf()))
            .collect();
        if paths.is_empty() {
            return Err(KubeconfigError::NoFiles);
        }
        let mut merged: Option<Kubeconfig> = None;
        for path in &paths {
            match Self::read_from(path) {
                Ok(next) => {
                    merged = Some(match merged {
                        None => next,
                        Some(m) => m.merge(next),
                    })
                }
                Err(KubeconfigError::Read { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    tracing::debug!(path = %path.display(), "kubeconfig file does not exist, skipped");
                }
                Err(e) => return Err(e),
            }
        }
        merged.ok_or_else(|| KubeconfigError::NotFound {
            paths: paths.iter().map(|p| p.to_path_buf()).collect(),
        })
    }

    /// The kubeconfig kubectl would use: the files listed in `KUBECONFIG` (separated like
    /// `PATH`), merged; without it, `~/.kube/config`.
    pub fn read() -> Result<Self, KubeconfigError> {
        if let Some(list) = std::env::var_os(KUBECONFIG_ENV) {
            let paths = kubeconfig_list(&list);
            if !paths.is_empty() {
                return Self::read_files(&paths);
            }
        }
        let home = std::env::home_dir()
            .filter(|h| !h.as_os_str().is_empty())
            .ok_or(KubeconfigError::NoHome)?;
        Self::read_files(&[home.join(".kube").join("config")])
    }

    /// Merges `next` into `self` with client-go's rules for a `KUBECONFIG` list: the first
    /// to set `current-context` (or `kind`, `apiVersion`, `preferences`) wins, and a
    /// cluster, user, context or extension of `next` is added only if `self` has none of
    /// that name — whole entries, never field by field.
    pub fn merge(mut self, next: Kubeconfig) -> Kubeconfig {
        fn first(a: Option<String>, b: Option<String>) -> Option<String> {
            a.filter(|s| !s.is_empty()).or(b)
        }
        fn add<T>(base: &mut Vec<T>, next: Vec<T>, name: fn(&T) -> &str) {
            let known: HashSet<String> = base.iter().map(|x| name(x).to_string()).collect();
            base.extend(next.into_iter().filter(|x| !known.contains(name(x))));
        }
        self.kind = first(self.kind, next.kind);
        self.api_version = first(self.api_version, next.api_version);
        self.current_context = first(self.current_context, next.current_context);
        self.preferences = self.preferences.or(next.preferences);
        add(&mut self.clusters, next.clusters, |c| &c.name);
        add(&mut self.auth_infos, next.auth_infos, |u| &u.name);
        add(&mut self.contexts, next.contexts, |c| &c.name);
        add(&mut self.extensions, next.extensions, |e| &e.name);
        self
    }

    /// Makes relative file references absolute against `dir` (client-go's
    /// `ResolveLocalPaths`): `certificate-authority`, `client-certificate`, `client-key`,
    /// `tokenFile`, and an exec `command` only when it holds a path separator (a bare
    /// name is looked up in `PATH`). Paths are cleaned lexically (`a/../b` is `b`), as Go's
    /// `filepath.Join` does. [`Kubeconfig::read_from`] does this with the file's directory.
    pub fn resolve_paths(&mut self, dir: &Path) {
        for c in &mut self.clusters {
            resolve(dir, &mut c.cluster.certificate_authority);
        }
        for u in &mut self.auth_infos {
            let a = &mut u.auth_info;
            resolve(dir, &mut a.client_certificate);
            resolve(dir, &mut a.client_key);
            resolve(dir, &mut a.token_file);
            if let Some(exec) = &mut a.exec
                && exec.command.contains(MAIN_SEPARATOR)
                && Path::new(&exec.command).is_relative()
                && let Ok(abs) = clean(&dir.join(&exec.command))
                    .into_os_string()
                    .into_string()
            {
                exec.command = abs;
            }
        }
    }

    /// The cluster named `name`.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.cluster)
    }

    /// The user named `name`.
    pub fn auth_info(&self, name: &str) -> Option<&AuthInfo> {
        self.auth_infos
            .iter()
            .find(|u| u.name == name)
            .map(|u| &u.auth_info)
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&Context> {
        self.contexts
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.context)
    }

    /// The context, cluster and user `options` choose, as client-go's `DirectClientConfig`
    /// does: the options' context or else `current-context`; the options' cluster and user
    /// or else the context's. A context, cluster or user the options name must exist, and
    /// so must the context's cluster, with a `server`; a user the context names but the
    /// kubeconfig lacks means no credentials (client-go tolerates it too), with a warning.
    pub fn select(&self, options: &KubeConfigOptions) -> Result<Selection<'_>, KubeconfigError> {
        let chosen = |o: &Option<String>| nonempty(o.as_deref()).map(str::to_string);
        let context_name = chosen(&options.context)
            .or_else(|| nonempty(self.current_context.as_deref()).map(str::to_string));
        let (context_name, context) = match context_name {
            Some(name) => {
                let (name, context) = self
                    .contexts
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| (c.name.as_str(), &c.context))
                    .ok_or(KubeconfigError::ContextNotFound(name))?;
                (Some(name), Some(context))
            }
            // `--cluster` alone is enough, as with kubectl
            None if nonempty(options.cluster.as_deref()).is_some() => (None, None),
            None if self.clusters.is_empty()
                && self.contexts.is_empty()
                && self.auth_infos.is_empty() =>
            {
                return Err(KubeconfigError::Empty);
            }
            None => return Err(KubeconfigError::NoCurrentContext),
        };

        let named = match nonempty(options.cluster.as_deref()) {
            Some(name) => self
                .clusters
                .iter()
                .find(|c| c.name == name)
                .ok_or_else(|| KubeconfigError::ClusterNotFound(name.to_string()))?,
            None => {
                let ctx_name = context_name.unwrap_or_default();
                let name = context
                    .map(|c| c.cluster.as_str())
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| KubeconfigError::NoCluster(ctx_name.to_string()))?;
                self.clusters
                    .iter()
                    .find(|c| c.name == name)
                    .ok_or_else(|| KubeconfigError::ContextClusterNotFound {
                        context: ctx_name.to_string(),
                        cluster: name.to_string(),
                    })?
            }
        };
        let (cluster_name, cluster) = (named.name.as_str(), &named.cluster);
        if nonempty(cluster.server.as_deref()).is_none() {
            return Err(KubeconfigError::NoServer(cluster_name.to_string()));
        }

        let (user_name, user) = match nonempty(options.user.as_deref()) {
            Some(name) => {
                let u = self
                    .auth_infos
                    .iter()
                    .find(|u| u.name == name)
                    .ok_or_else(|| KubeconfigError::UserNotFound(name.to_string()))?;
                (Some(u.name.as_str()), Some(&u.auth_info))
            }
            None => match context.map(|c| c.user.as_str()).filter(|n| !n.is_empty()) {
                None => (None, None),
                Some(name) => {
                    let user = self.auth_info(name);
                    if user.is_none() {
                        tracing::warn!(
                            user = name,
                            context = context_name.unwrap_or_default(),
                            "the context's user is not in the kubeconfig; connecting without credentials"
                        );
                    }
                    (Some(name), user)
                }
            },
        };
        Ok(Selection {
            context_name,
            context,
            cluster_name,
            cluster,
            user_name,
            user,
        })
    }
}

impl Cluster {
    /// The CA certificates (PEM): `certificate-authority-data` decoded, else the
    /// `certificate-authority` file; `None` when neither is set.
    pub fn certificate_authority_pem(&self) -> Result<Option<Vec<u8>>, KubeconfigError> {
        load_data(
            "certificate-authority-data",
            self.certificate_authority_data.as_deref(),
            "certificate-authority",
            self.certificate_authority.as_deref(),
        )
    }

    /// The value of extension `name`.
    pub fn extension(&self, name: &str) -> Option<&serde_json::Value> {
        find_extension(&self.extensions, name)
    }
}

impl AuthInfo {
    /// The client certificate (PEM): `client-certificate-data` decoded, else the
    /// `client-certificate` file.
    pub fn client_certificate_pem(&self) -> Result<Option<Vec<u8>>, KubeconfigError> {
        load_data(
            "client-certificate-data",
            self.client_certificate_data.as_deref(),
            "client-certificate",
            self.client_certificate.as_deref(),
        )
    }

    /// The client key (PEM): `client-key-data` decoded, else the `client-key` file.
    pub fn client_key_pem(&self) -> Result<Option<SecretString>, KubeconfigError> {
        use secrecy::ExposeSecret as _;
        let bytes = load_data(
            "client-key-data",
            self.client_key_data.as_ref().map(|s| s.expose_secret()),
            "client-key",
            self.client_key.as_deref(),
        )?;
        Ok(bytes.map(|b| SecretString::from(String::from_utf8_lossy(&b).into_owned())))
    }
}

fn find_extension<'a>(list: &'a [NamedExtension], name: &str) -> Option<&'a serde_json::Value> {
    list.iter().find(|e| e.name == name).map(|e| &e.extension)
}

/// A `*-data` field (base64; whitespace and line breaks anywhere are ignored, as a folded
/// YAML scalar or a wrapped `base64` output has them) or else a file.
fn load_data(
    data_field: &'static str,
    data: Option<&str>,
    file_field: &'static str,
    file: Option<&Path>,
) -> Result<Option<Vec<u8>>, KubeconfigError> {
    if let Some(d) = nonempty(data) {
        let compact: String = d.chars().filter(|c| !c.is_whitespace()).collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map(Some)
            .map_err(|_| KubeconfigError::InvalidBase64 { field: data_field });
    }
    match file.filter(|f| !f.as_os_str().is_empty()) {
        Some(f) => std::fs::read(f)
            .map(Some)
            .map_err(|source| KubeconfigError::ReadData {
                field: file_field,
                path: f.to_path_buf(),
                source,
            }),
        None => Ok(None),
    }
}

/// The `KUBECONFIG` list: split like `PATH`, empty entries dropped (client-go's loader
/// also drops repeats, which [`Kubeconfig::read_files`] does).
fn kubeconfig_list(value: &OsString) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// Text from a file's bytes: UTF-8 (a byte-order mark dropped) or UTF-16 with one.
fn decode_text(bytes: Vec<u8>) -> std::io::Result<String> {
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let utf16 = |rest: &[u8], from: fn([u8; 2]) -> u16| {
        if !rest.len().is_multiple_of(2) {
            return Err(invalid("odd length for UTF-16"));
        }
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| from([c[0], c[1]])).collect();
        String::from_utf16(&units).map_err(|_| invalid("invalid UTF-16"))
    };
    match bytes.as_slice() {
        [0xEF, 0xBB, 0xBF, rest @ ..] => {
            String::from_utf8(rest.to_vec()).map_err(|_| invalid("invalid UTF-8"))
        }
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => String::from_utf8(bytes).map_err(|_| invalid("invalid UTF-8")),
    }
}

/// `p` made absolute against `dir` if it is relative and not empty.
fn resolve(dir: &Path, p: &mut Option<PathBuf>) {
    if let Some(path) = p
        && !path.as_os_str().is_empty()
        && path.is_relative()
    {
        *path = clean(&dir.join(&*path));
    }
}

/// Lexical clean-up (Go's `filepath.Clean`): `.` dropped, `x/..` removed, `..` above the
/// root dropped.
fn clean(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}

/// Parses every document of `text` and merges them, first wins.
fn parse(text: &str, path: Option<&Path>) -> Result<Kubeconfig, KubeconfigError> {
    let owned_path = || path.map(Path::to_path_buf);
    let documents = yaml::parse(text).map_err(|e| KubeconfigError::Parse {
        path: owned_path(),
        line: e.pos.line,
        column: e.pos.column,
        message: e.message,
    })?;
    let mut merged = Kubeconfig::default();
    for doc in &documents {
        if doc.is_null() {
            continue;
        }
        let config: Kubeconfig = yaml::from_node(doc).map_err(|e| {
            let pos = e.pos.unwrap_or_default();
            KubeconfigError::Parse {
                path: owned_path(),
                line: pos.line,
                column: pos.column,
                message: e.message,
            }
        })?;
        check(&config, path)?;
        merged = merged.merge(config);
    }
    Ok(merged)
}

/// What client-go's decoder refuses: another kind or version, and a name used twice in
/// one list.
fn check(config: &Kubeconfig, path: Option<&Path>) -> Result<(), KubeconfigError> {
    for (field, value, expected) in [
        ("kind", &config.kind, "Config"),
        ("apiVersion", &config.api_version, "v1"),
    ] {
        if let Some(v) = nonempty(value.as_deref())
            && v != expected
        {
            return Err(KubeconfigError::WrongKind {
                path: path.map(Path::to_path_buf),
                field,
                value: v.to_string(),
                expected,
            });
        }
    }
    let lists: [(&'static str, Vec<&str>); 4] = [
        (
            "clusters",
            config.clusters.iter().map(|c| c.name.as_str()).collect(),
        ),
        (
            "users",
            config.auth_infos.iter().map(|u| u.name.as_str()).collect(),
        ),
        (
            "contexts",
            config.contexts.iter().map(|c| c.name.as_str()).collect(),
        ),
        (
            "extensions",
            config.extensions.iter().map(|e| e.name.as_str()).collect(),
        ),
    ];
    for (list, names) in lists {
        let mut seen = HashSet::new();
        if let Some(dup) = names.into_iter().find(|n| !seen.insert(*n)) {
            return Err(KubeconfigError::DuplicateName {
                path: path.map(Path::to_path_buf),
                list,
                name: dup.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_is_lexical_like_go_filepath_clean() {
        assert_eq!(clean(Path::new("/a/b/../c/./d")), Path::new("/a/c/d"));
        assert_eq!(clean(Path::new("/../x")), Path::new("/x"));
        assert_eq!(clean(Path::new("a/../../b")), Path::new("../b"));
    }

    #[test]
    fn text_encodings() {
        assert_eq!(decode_text(b"\xEF\xBB\xBFa: 1".to_vec()).unwrap(), "a: 1");
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("a: 1".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode_text(le).unwrap(), "a: 1");
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("a: 1".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode_text(be).unwrap(), "a: 1");
        assert!(decode_text(vec![0xC3, 0x28]).is_err());
    }
}
