//! kubegen's kubeconfig reader (`kubegen::client::kubeconfig`) against client-go's rules:
//! merging a `KUBECONFIG` list, relative paths, choosing a context, every kind of
//! credential, `*-data` fields, exec plugins, YAML edge cases, and a file written by
//! `kubectl config` itself.
//!
//! The rules come from client-go's `tools/clientcmd`: `loader.go` (`Load`,
//! `ResolveLocalPaths`, `GetAuthInfoFileReferences`), `client_config.go`
//! (`DirectClientConfig.getContext` / `getCluster` / `getAuthInfo`), `validation.go` (the
//! error messages) and `api/v1/types.go` (the file format), with their tests in
//! `loader_test.go`.
#![allow(clippy::unwrap_used)] // test helpers may unwrap, like the tests

use std::path::{Path, PathBuf};

use base64::Engine as _;
use kubegen::client::{
    Authenticator, Config, ConfigError, Credentials, ExecPlugin, KubeConfigOptions, Kubeconfig,
    KubeconfigError,
    kubeconfig::{ExecInteractiveMode, Selection},
};
use secrecy::ExposeSecret as _;
use serde_json::json;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn ctx(name: &str) -> KubeConfigOptions {
    KubeConfigOptions {
        context: Some(name.into()),
        ..Default::default()
    }
}

fn b64(data: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// A self-signed certificate, PEM.
fn cert_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    rcgen::CertificateParams::new(vec!["kubegen.test".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap()
        .pem()
}

fn config(kc: &Kubeconfig, options: &KubeConfigOptions) -> Result<Config, ConfigError> {
    Config::from_selection(&kc.select(options)?)
}

fn token(c: &Credentials) -> &str {
    match c {
        Credentials::Bearer(t) => t.expose_secret(),
        other => panic!("not a bearer token: {other:?}"),
    }
}

// ---------- merging (loader.go `Load`) ----------

const FIRST: &str = r#"
apiVersion: v1
kind: Config
current-context: first-ctx
clusters:
  - name: shared
    cluster:
      server: https://first.example.test
  - name: only-first
    cluster: {server: https://only-first.example.test}
users:
  - name: shared-user
    user:
      token: first-token
contexts:
  - name: first-ctx
    context: {cluster: shared, user: shared-user, namespace: first-ns}
  - name: shared-ctx
    context: {cluster: only-first, user: shared-user}
"#;

const SECOND: &str = r#"
apiVersion: v1
kind: Config
current-context: second-ctx
clusters:
  - name: shared
    cluster:
      server: https://second.example.test
      insecure-skip-tls-verify: true
  - name: only-second
    cluster: {server: https://only-second.example.test}
users:
  - name: shared-user
    user:
      token: second-token
      username: not-merged
  - name: second-user
    user: {token: second-user-token}
contexts:
  - name: second-ctx
    context: {cluster: only-second, user: second-user, namespace: second-ns}
  - name: shared-ctx
    context: {cluster: only-second, user: second-user}
"#;

/// loader.go `Load`: "the first file to set a particular value or map key wins", for
/// `current-context` (loader_test.go `TestConflictingCurrentContext`) and for whole
/// entries: a later file's entry of the same name is dropped, not merged field by field.
#[test]
fn merged_files_first_file_wins_for_current_context_and_whole_entries() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), "first", FIRST);
    let second = write(dir.path(), "second", SECOND);

    let kc = Kubeconfig::read_files(&[&first, &second]).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("first-ctx"));
    let shared = kc.cluster("shared").unwrap();
    assert_eq!(shared.server.as_deref(), Some("https://first.example.test"));
    assert!(
        !shared.insecure_skip_tls_verify,
        "the second file's fields are not merged into the first's entry"
    );
    let user = kc.auth_info("shared-user").unwrap();
    assert_eq!(user.token.as_ref().unwrap().expose_secret(), "first-token");
    assert!(user.username.is_none(), "whole entries, not fields");
    assert_eq!(kc.context("shared-ctx").unwrap().cluster, "only-first");
    assert!(kc.cluster("only-second").is_some(), "new names are added");
    assert_eq!(kc.clusters.len(), 3);
    assert_eq!(kc.auth_infos.len(), 2);
    assert_eq!(kc.contexts.len(), 3);

    let c = config(&kc, &Default::default()).unwrap();
    assert_eq!(c.cluster_url.host(), Some("first.example.test"));
    assert_eq!(c.default_namespace, "first-ns");
    assert_eq!(token(&c.credentials), "first-token");
    let c = config(&kc, &ctx("second-ctx")).unwrap();
    assert_eq!(c.cluster_url.host(), Some("only-second.example.test"));
    assert_eq!(token(&c.credentials), "second-user-token");

    // the other order: the other winner
    let kc = Kubeconfig::read_files(&[&second, &first]).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("second-ctx"));
    assert!(kc.cluster("shared").unwrap().insecure_skip_tls_verify);
    assert_eq!(kc.context("shared-ctx").unwrap().cluster, "only-second");

    // `merge` itself, on parsed text
    let merged = Kubeconfig::from_yaml(FIRST)
        .unwrap()
        .merge(Kubeconfig::from_yaml(SECOND).unwrap());
    assert_eq!(merged.current_context.as_deref(), Some("first-ctx"));
    assert_eq!(merged.clusters.len(), 3);

    // an empty current-context does not count as set
    let unset = Kubeconfig::from_yaml("current-context: \"\"\n").unwrap();
    let merged = unset.merge(Kubeconfig::from_yaml(SECOND).unwrap());
    assert_eq!(merged.current_context.as_deref(), Some("second-ctx"));
}

/// loader.go `Load` skips missing files of the list (loader_test.go
/// `TestToleratingMissingFiles`) and drops repeated ones; kubegen adds an error when none
/// exists, naming where it looked. Reading one named file that is missing is an error
/// (`TestNonExistentCommandLineFile`).
#[test]
fn missing_files_in_a_list_are_skipped_and_none_at_all_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), "first", FIRST);
    let missing = dir.path().join("missing");
    let kc = Kubeconfig::read_files(&[&missing, &first, &first]).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("first-ctx"));
    assert_eq!(kc.clusters.len(), 2);

    let err = Kubeconfig::read_files(&[&missing]).unwrap_err();
    assert!(
        matches!(&err, KubeconfigError::NotFound { paths } if paths == std::slice::from_ref(&missing))
    );
    assert!(err.to_string().contains("missing"), "{err}");
    let err = Kubeconfig::read_from(&missing).unwrap_err();
    assert!(matches!(err, KubeconfigError::Read { .. }), "{err}");
    let none: [&Path; 0] = [];
    assert!(matches!(
        Kubeconfig::read_files(&none),
        Err(KubeconfigError::NoFiles)
    ));
    // a directory is not a kubeconfig (loader_test.go `TestErrorReadingNonFile`)
    let err = Kubeconfig::read_files(&[dir.path()]).unwrap_err();
    assert!(matches!(err, KubeconfigError::Read { .. }), "{err}");
}

// ---------- relative paths (loader.go `ResolveLocalPaths`) ----------

/// loader.go `ResolveLocalPaths` with `GetClusterFileReferences` /
/// `GetAuthInfoFileReferences`: `certificate-authority`, `client-certificate`,
/// `client-key`, `tokenFile` and an exec `command` holding a path separator are made
/// absolute against the directory of the file that holds them (loader_test.go
/// `TestResolveRelativePaths`, where `../` is cleaned away as `filepath.Join` does); a
/// bare command stays a `PATH` lookup; absolute paths stay.
#[test]
fn relative_paths_resolve_against_the_directory_of_their_own_file() {
    let root = tempfile::tempdir().unwrap();
    let dir1 = root.path().join("one");
    let dir2 = root.path().join("two/deeper");
    let file1 = write(
        &dir1,
        "config",
        r#"
current-context: c1
clusters:
  - name: rel
    cluster: {server: https://rel.test, certificate-authority: ../certs/ca.pem}
  - name: abs
    cluster: {server: https://abs.test, certificate-authority: /absolute/ca.pem}
users:
  - name: u1
    user:
      client-certificate: relative/client/cert
      client-key: ./key.pem
      tokenFile: token
  - name: exec-relative
    user:
      exec: {command: ./bin/plugin, apiVersion: client.authentication.k8s.io/v1}
  - name: exec-absolute
    user:
      exec: {command: /usr/local/bin/plugin}
  - name: exec-path
    user:
      exec: {command: aws}
contexts:
  - name: c1
    context: {cluster: rel, user: u1}
"#,
    );
    let file2 = write(
        &dir2,
        "config",
        r#"
clusters:
  - name: rel2
    cluster: {server: https://rel2.test, certificate-authority: ca2.pem}
  - name: rel
    cluster: {server: https://shadowed.test, certificate-authority: shadowed.pem}
users:
  - name: u2
    user: {tokenFile: ../token2}
"#,
    );
    let kc = Kubeconfig::read_files(&[&file1, &file2]).unwrap();
    let ca = |name: &str| {
        kc.cluster(name)
            .unwrap()
            .certificate_authority
            .clone()
            .unwrap()
    };
    assert_eq!(ca("rel"), root.path().join("certs/ca.pem"));
    assert_eq!(ca("abs"), Path::new("/absolute/ca.pem"));
    assert_eq!(ca("rel2"), dir2.join("ca2.pem"));
    let u1 = kc.auth_info("u1").unwrap();
    assert_eq!(
        u1.client_certificate.as_deref(),
        Some(dir1.join("relative/client/cert").as_path())
    );
    assert_eq!(
        u1.client_key.as_deref(),
        Some(dir1.join("key.pem").as_path())
    );
    assert_eq!(u1.token_file.as_deref(), Some(dir1.join("token").as_path()));
    assert_eq!(
        kc.auth_info("u2").unwrap().token_file.as_deref(),
        Some(root.path().join("two/token2").as_path())
    );
    let command = |name: &str| {
        kc.auth_info(name)
            .unwrap()
            .exec
            .as_ref()
            .unwrap()
            .command
            .clone()
    };
    assert_eq!(
        command("exec-relative"),
        dir1.join("bin/plugin").to_str().unwrap()
    );
    assert_eq!(command("exec-absolute"), "/usr/local/bin/plugin");
    assert_eq!(
        command("exec-path"),
        "aws",
        "a bare command is looked up in PATH"
    );

    // the resolved token file is what the client reads
    let c = config(&kc, &Default::default()).unwrap_err();
    assert!(
        matches!(c, ConfigError::Kubeconfig(KubeconfigError::ReadData { field: "certificate-authority", ref path, .. }) if path == &root.path().join("certs/ca.pem")),
        "the CA file is read from the resolved path: {c}"
    );
    write(root.path(), "certs/ca.pem", &cert_pem());
    write(&dir1, "relative/client/cert", "cert");
    write(&dir1, "key.pem", "key");
    let c = config(&kc, &Default::default()).unwrap();
    assert_eq!(c.tls.root_certs.as_ref().map(Vec::len), Some(1));
    assert!(matches!(&c.credentials, Credentials::TokenFile(p) if p == &dir1.join("token")));

    // text has no directory: paths stay as written until resolved against one
    let mut parsed = Kubeconfig::from_yaml(&std::fs::read_to_string(&file1).unwrap()).unwrap();
    assert_eq!(
        parsed.auth_info("u1").unwrap().token_file.as_deref(),
        Some(Path::new("token"))
    );
    parsed.resolve_paths(Path::new("/base/dir"));
    assert_eq!(
        parsed
            .cluster("rel")
            .unwrap()
            .certificate_authority
            .as_deref(),
        Some(Path::new("/base/certs/ca.pem"))
    );
}

// ---------- choosing a context (client_config.go) ----------

const CONTEXTS: &str = r#"
current-context: dev
clusters:
  - name: dev-cluster
    cluster: {server: "https://dev.test:6443"}
  - name: other-cluster
    cluster: {server: "https://other.test"}
  - name: serverless
    cluster: {insecure-skip-tls-verify: true}
users:
  - name: dev-user
    user: {token: dev-token}
  - name: other-user
    user: {token: other-token}
contexts:
  - name: dev
    context: {cluster: dev-cluster, user: dev-user, namespace: dev-ns}
  - name: other
    context: {cluster: other-cluster, user: other-user}
  - name: ghost-cluster
    context: {cluster: nowhere, user: dev-user}
  - name: ghost-user
    context: {cluster: dev-cluster, user: nobody}
  - name: no-cluster
    context: {user: dev-user}
  - name: no-server
    context: {cluster: serverless, user: dev-user}
"#;

/// client_config.go `getContextName`: the chosen context, else `current-context`;
/// `getClusterName` / `getAuthInfoName`: the chosen cluster and user override the
/// context's. validation.go's messages for what is missing.
#[test]
fn current_context_explicit_context_and_overrides() {
    let kc = Kubeconfig::from_yaml(CONTEXTS).unwrap();
    let sel: Selection<'_> = kc.select(&Default::default()).unwrap();
    assert_eq!(sel.context_name, Some("dev"));
    assert_eq!(sel.cluster_name, "dev-cluster");
    assert_eq!(sel.user_name, Some("dev-user"));
    assert_eq!(sel.namespace(), Some("dev-ns"));
    assert_eq!(sel.server(), "https://dev.test:6443");

    let c = config(&kc, &ctx("other")).unwrap();
    assert_eq!(c.cluster_url.host(), Some("other.test"));
    assert_eq!(c.default_namespace, "default", "no namespace: default");
    assert_eq!(token(&c.credentials), "other-token");

    let c = config(
        &kc,
        &KubeConfigOptions {
            context: Some("dev".into()),
            cluster: Some("other-cluster".into()),
            user: Some("other-user".into()),
        },
    )
    .unwrap();
    assert_eq!(c.cluster_url.host(), Some("other.test"));
    assert_eq!(
        c.default_namespace, "dev-ns",
        "the context's namespace stays"
    );
    assert_eq!(token(&c.credentials), "other-token");

    // `--cluster` alone, without any context
    let no_current = Kubeconfig::from_yaml(&CONTEXTS.replace("current-context: dev", "")).unwrap();
    let c = config(
        &no_current,
        &KubeConfigOptions {
            cluster: Some("dev-cluster".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(c.cluster_url.host(), Some("dev.test"));
    assert!(matches!(c.credentials, Credentials::None));
    // empty strings count as unset
    let c = config(
        &kc,
        &KubeConfigOptions {
            context: Some(String::new()),
            cluster: Some(String::new()),
            user: Some(String::new()),
        },
    )
    .unwrap();
    assert_eq!(c.cluster_url.host(), Some("dev.test"));
}

#[test]
fn what_is_missing_is_a_typed_error_naming_it() {
    let kc = Kubeconfig::from_yaml(CONTEXTS).unwrap();
    let err = |o: KubeConfigOptions| kc.select(&o).unwrap_err();

    let e = err(ctx("nope"));
    assert!(matches!(&e, KubeconfigError::ContextNotFound(n) if n == "nope"));
    assert_eq!(e.to_string(), r#"context "nope" not found"#);
    let e = err(ctx("ghost-cluster"));
    assert_eq!(
        e.to_string(),
        r#"cluster "nowhere" was not found for context "ghost-cluster""#
    );
    assert!(matches!(e, KubeconfigError::ContextClusterNotFound { .. }));
    let e = err(ctx("no-cluster"));
    assert_eq!(
        e.to_string(),
        r#"cluster was not specified for context "no-cluster""#
    );
    let e = err(ctx("no-server"));
    assert_eq!(e.to_string(), r#"no server found for cluster "serverless""#);
    let e = err(KubeConfigOptions {
        cluster: Some("nowhere".into()),
        ..Default::default()
    });
    assert!(
        matches!(&e, KubeconfigError::ClusterNotFound(n) if n == "nowhere"),
        "{e}"
    );
    let e = err(KubeConfigOptions {
        user: Some("nobody".into()),
        ..Default::default()
    });
    assert!(
        matches!(&e, KubeconfigError::UserNotFound(n) if n == "nobody"),
        "{e}"
    );
    assert_eq!(e.to_string(), r#"user "nobody" not found"#);

    // a context's user that does not exist: no credentials, as client-go
    let c = config(&kc, &ctx("ghost-user")).unwrap();
    assert!(matches!(c.credentials, Credentials::None));

    let no_current = Kubeconfig::from_yaml(&CONTEXTS.replace("current-context: dev", "")).unwrap();
    assert!(matches!(
        no_current.select(&Default::default()),
        Err(KubeconfigError::NoCurrentContext)
    ));
    for empty in [
        "",
        "# nothing\n",
        "apiVersion: v1\nkind: Config\npreferences: {}\n",
    ] {
        let kc = Kubeconfig::from_yaml(empty).unwrap();
        assert!(matches!(
            kc.select(&Default::default()),
            Err(KubeconfigError::Empty)
        ));
    }

    // through Config, the same error inside ConfigError::Kubeconfig
    let e = config(&kc, &ctx("nope")).unwrap_err();
    assert!(matches!(
        e,
        ConfigError::Kubeconfig(KubeconfigError::ContextNotFound(_))
    ));
    assert_eq!(e.to_string(), r#"kubeconfig: context "nope" not found"#);
}

// ---------- credentials ----------

/// Every credential a kubeconfig user can hold, and which wins when several are set
/// (exec, then token file, then token, then basic auth, then an auth provider's token).
#[tokio::test]
async fn every_kind_of_credential() {
    let dir = tempfile::tempdir().unwrap();
    let ca = cert_pem();
    let crt = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    let key = "-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n";
    write(dir.path(), "client.crt", crt);
    write(dir.path(), "client.key", key);
    let users = format!(
        r#"
users:
  - name: token
    user: {{token: the-token}}
  - name: token-file
    user: {{tokenFile: tok}}
  - name: basic
    user: {{username: admin, password: pa55word}}
  - name: cert-data
    user:
      client-certificate-data: {crt_b64}
      client-key-data: {key_b64}
  - name: cert-files
    user: {{client-certificate: client.crt, client-key: client.key}}
  - name: oidc
    user:
      auth-provider:
        name: oidc
        config: {{client-id: kubectl, id-token: the-id-token, refresh-token: r, access-token: not-this}}
  - name: gcp
    user:
      auth-provider: {{name: gcp, config: {{access-token: the-access-token, expiry: "2030-01-01"}}}}
  - name: exec
    user:
      token: loses-to-exec
      exec: {{command: my-plugin, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}
  - name: file-and-token
    user: {{tokenFile: tok, token: loses-to-the-file}}
  - name: impersonating
    user:
      token: t
      as: jane
      as-groups: [devs, ops]
      as-uid: uid-1234
      as-user-extra: {{scopes: [view, edit], acme.com/project: [p1]}}
  - name: anonymous
    user: {{}}
  - name: empty-strings
    user: {{token: "", username: "", password: ""}}
"#,
        crt_b64 = b64(crt),
        key_b64 = b64(key),
    );
    let mut yaml = format!(
        "clusters:\n  - name: k\n    cluster:\n      server: https://k.test\n      certificate-authority-data: {}\ncontexts:\n",
        b64(&ca)
    );
    for name in [
        "token",
        "token-file",
        "basic",
        "cert-data",
        "cert-files",
        "oidc",
        "gcp",
        "exec",
        "file-and-token",
        "impersonating",
        "anonymous",
        "empty-strings",
    ] {
        yaml.push_str(&format!(
            "  - name: {name}\n    context: {{cluster: k, user: {name}}}\n"
        ));
    }
    yaml.push_str(&users);
    let path = write(dir.path(), "config", &yaml);
    let load = |name: &str| {
        let files = [path.clone()];
        let options = ctx(name);
        async move {
            Config::from_kubeconfig_files(&files, &options)
                .await
                .unwrap()
        }
    };

    let c = load("token").await;
    assert_eq!(token(&c.credentials), "the-token");
    assert_eq!(c.tls.root_certs.as_ref().map(Vec::len), Some(1));
    assert!(
        matches!(load("token-file").await.credentials, Credentials::TokenFile(p) if p == dir.path().join("tok"))
    );
    match load("basic").await.credentials {
        Credentials::Basic { username, password } => {
            assert_eq!(username, "admin");
            assert_eq!(password.expose_secret(), "pa55word");
        }
        other => panic!("{other:?}"),
    }
    for name in ["cert-data", "cert-files"] {
        let c = load(name).await;
        assert_eq!(
            c.tls.client_cert_pem.as_deref(),
            Some(crt.as_bytes()),
            "{name}"
        );
        assert_eq!(
            c.tls.client_key_pem.as_ref().map(|k| k.expose_secret()),
            Some(key),
            "{name}"
        );
        assert!(matches!(c.credentials, Credentials::None));
    }
    assert_eq!(token(&load("oidc").await.credentials), "the-id-token");
    assert_eq!(token(&load("gcp").await.credentials), "the-access-token");
    match load("exec").await.credentials {
        Credentials::Exec(p) => {
            assert_eq!(p.command, "my-plugin");
            assert_eq!(p.api_version, "client.authentication.k8s.io/v1");
            assert!(p.cluster.is_none(), "no provideClusterInfo");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        load("file-and-token").await.credentials,
        Credentials::TokenFile(_)
    ));
    let c = load("impersonating").await;
    assert_eq!(c.impersonate_user.as_deref(), Some("jane"));
    assert_eq!(c.impersonate_groups, ["devs", "ops"]);
    let headers: Vec<(String, String)> = c
        .headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
        .collect();
    let h = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        headers,
        [
            h("impersonate-uid", "uid-1234"),
            h("impersonate-extra-acme.com%2fproject", "p1"),
            h("impersonate-extra-scopes", "view"),
            h("impersonate-extra-scopes", "edit"),
        ]
    );
    for name in ["anonymous", "empty-strings"] {
        let c = load(name).await;
        assert!(matches!(c.credentials, Credentials::None), "{name}");
        assert!(c.impersonate_user.is_none());
        assert!(c.tls.client_cert_pem.is_none());
    }
}

/// `*-data` fields are base64 that YAML may have wrapped: line breaks (a literal block or
/// `base64`'s 76-column output) and spaces (a folded plain scalar) are ignored; invalid
/// base64 is an error naming the field and never quoting it.
#[test]
fn data_fields_ignore_whitespace_and_name_the_field_when_invalid() {
    let ca = cert_pem();
    let encoded = b64(&ca);
    let wrapped: String = encoded
        .as_bytes()
        .chunks(64)
        .map(|c| format!("        {}\n", std::str::from_utf8(c).unwrap()))
        .collect();
    let key = "-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n";
    let key_b64 = b64(key);
    let (k1, k2) = key_b64.split_at(10);
    let yaml = format!(
        "current-context: c\nclusters:\n  - name: literal\n    cluster:\n      server: https://x\n      certificate-authority-data: |\n{wrapped}  - name: plain\n    cluster:\n      server: https://x\n      certificate-authority-data:\n{wrapped}contexts:\n  - name: c\n    context: {{cluster: literal, user: u}}\n  - name: p\n    context: {{cluster: plain, user: u}}\nusers:\n  - name: u\n    user:\n      client-certificate-data: \"{crt}\"\n      client-key-data: \"{k1}  \\n\\t {k2}\"\n",
        crt = b64("cert"),
    );
    let kc = Kubeconfig::from_yaml(&yaml).unwrap();
    for c in ["c", "p"] {
        let cfg = config(&kc, &ctx(c)).unwrap();
        assert_eq!(cfg.tls.root_certs.as_ref().map(Vec::len), Some(1), "{c}");
        assert_eq!(cfg.tls.client_key_pem.unwrap().expose_secret(), key);
    }
    assert_eq!(
        kc.cluster("plain")
            .unwrap()
            .certificate_authority_pem()
            .unwrap()
            .unwrap(),
        ca.as_bytes()
    );

    let bad = Kubeconfig::from_yaml(
        "current-context: c\nclusters: [{name: k, cluster: {server: https://x}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {client-key-data: not*base64*secret}}]\n",
    )
    .unwrap();
    let err = config(&bad, &Default::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Kubeconfig(KubeconfigError::InvalidBase64 {
                field: "client-key-data"
            })
        ),
        "{err}"
    );
    assert!(!format!("{err} {err:?}").contains("secret"), "{err:?}");
}

// ---------- exec plugins ----------

/// client-go's `api/v1/types.go` `ExecConfig`: every field read; `provideClusterInfo`
/// hands the cluster (server, CA, `tls-server-name`, `proxy-url`, and the
/// `client.authentication.k8s.io/exec` extension as `config`) to the plugin, as
/// `rest.ConfigToExecCluster` does; `installHint` is shown when the command is missing.
#[tokio::test]
async fn exec_sections_are_read_whole() {
    let ca = cert_pem();
    let yaml = format!(
        r#"
current-context: c
clusters:
  - name: k
    cluster:
      server: https://k.test:6443
      certificate-authority-data: {ca}
      tls-server-name: api.internal
      proxy-url: http://proxy.test:3128
      extensions:
        - name: client.authentication.k8s.io/exec
          extension: {{audience: kubegen, "n": 3}}
        - name: something-else
          extension: ignored
contexts:
  - name: c
    context: {{cluster: k, user: u}}
  - name: bare
    context: {{cluster: k, user: bare}}
users:
  - name: u
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: /nonexistent/kubegen-test-plugin
        args: [get-token, --secret-arg=s3cr3t-arg]
        env:
          - {{name: PLUGIN_MODE, value: fast}}
          - {{name: API_KEY, value: s3cr3t-env}}
          - {{value: dropped-without-a-name}}
        installHint: "install it with: brew install kubegen-test-plugin"
        provideClusterInfo: true
        interactiveMode: IfAvailable
        someFutureField: ignored
  - name: bare
    user:
      exec: {{command: plugin}}
"#,
        ca = b64(&ca)
    );
    let kc = Kubeconfig::from_yaml(&yaml).unwrap();
    let exec = kc.auth_info("u").unwrap().exec.clone().unwrap();
    assert_eq!(
        exec.interactive_mode,
        Some(ExecInteractiveMode::IfAvailable)
    );
    assert!(exec.provide_cluster_info);
    let debug = format!("{exec:?} {kc:?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");

    let sel = kc.select(&Default::default()).unwrap();
    let plugin = ExecPlugin::from_kubeconfig(&exec, sel.cluster).unwrap();
    assert_eq!(plugin.command, "/nonexistent/kubegen-test-plugin");
    assert_eq!(plugin.args, ["get-token", "--secret-arg=s3cr3t-arg"]);
    assert_eq!(
        plugin.env,
        [
            ("PLUGIN_MODE".to_string(), "fast".to_string()),
            ("API_KEY".to_string(), "s3cr3t-env".to_string())
        ]
    );
    assert_eq!(plugin.api_version, "client.authentication.k8s.io/v1");
    let cluster = serde_json::to_value(plugin.cluster.as_ref().unwrap()).unwrap();
    assert_eq!(
        cluster,
        json!({
            "server": "https://k.test:6443",
            "tls-server-name": "api.internal",
            "certificate-authority-data": b64(&ca),
            "proxy-url": "http://proxy.test:3128",
            "config": {"audience": "kubegen", "n": 3},
        })
    );
    assert!(!format!("{plugin:?}").contains("s3cr3t"));

    // the install hint comes with "not found"
    let auth = Authenticator::new(Credentials::Exec(Box::new(plugin)));
    let err = auth.header().await.unwrap_err().to_string();
    assert!(err.contains("brew install kubegen-test-plugin"), "{err}");

    // defaults: the v1beta1 API, no cluster information
    let bare = ExecPlugin::from_kubeconfig(
        kc.auth_info("bare").unwrap().exec.as_ref().unwrap(),
        sel.cluster,
    )
    .unwrap();
    assert_eq!(bare.api_version, kubegen::client::EXEC_API_VERSION);
    assert!(bare.cluster.is_none());
    assert!(bare.install_hint.is_none());

    // an exec block without a command is refused when it is used
    let no_command = Kubeconfig::from_yaml(
        "current-context: c\nclusters: [{name: k, cluster: {server: https://x}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {exec: {apiVersion: v1}}}]\n",
    )
    .unwrap();
    assert!(matches!(
        config(&no_command, &Default::default()),
        Err(ConfigError::Auth(_))
    ));
    // an unknown interactiveMode is a parse error at its line
    let err = Kubeconfig::from_yaml(
        "users:\n- name: u\n  user:\n    exec:\n      interactiveMode: Sometimes\n",
    )
    .unwrap_err();
    assert!(
        matches!(err, KubeconfigError::Parse { line: 5, .. }),
        "{err}"
    );
}

// ---------- YAML ----------

/// Scalars: a quoted `"true"` or `"123"` stays a string; a field that is a string in
/// client-go's types takes a plain number as written (`0123` stays `0123`); a boolean
/// field does not take a quoted string (neither does client-go) but takes YAML 1.1's
/// `yes`/`no` like the Go YAML library; `null` where a list is expected is an empty list.
#[test]
fn scalars_keep_their_text_and_quoted_scalars_stay_strings() {
    let kc = Kubeconfig::from_yaml(
        r#"
current-context: "true"
clusters:
  - name: "123"
    cluster:
      server: https://x
      insecure-skip-tls-verify: yes
      extensions:
        - name: e
          extension: {quoted: "true", plain: true, hex: 0x1F, quoted-hex: "0x1F", nothing: ~, float: 1.50, text: hello}
contexts:
  - name: "true"
    context: {cluster: "123", user: 0777, namespace: 0123}
users:
  - name: 0777
    user: {token: 12345, password: 0x10, username: 1e3}
extensions: null
preferences:
"#,
    )
    .unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("true"));
    let cluster = kc.cluster("123").unwrap();
    assert!(cluster.insecure_skip_tls_verify);
    assert_eq!(
        cluster.extension("e").unwrap(),
        &json!({"quoted": "true", "plain": true, "hex": 31, "quoted-hex": "0x1F", "nothing": null, "float": 1.5, "text": "hello"})
    );
    let context = kc.context("true").unwrap();
    assert_eq!(context.namespace.as_deref(), Some("0123"));
    assert_eq!(context.user, "0777");
    let user = kc.auth_info("0777").unwrap();
    assert_eq!(user.token.as_ref().unwrap().expose_secret(), "12345");
    assert_eq!(user.password.as_ref().unwrap().expose_secret(), "0x10");
    assert_eq!(user.username.as_deref(), Some("1e3"));
    assert!(kc.extensions.is_empty());
    let c = config(&kc, &Default::default()).unwrap();
    assert_eq!(c.default_namespace, "0123");

    let err = Kubeconfig::from_yaml(
        "clusters:\n- name: k\n  cluster:\n    insecure-skip-tls-verify: \"s3cr3t\"\n",
    )
    .unwrap_err();
    match &err {
        KubeconfigError::Parse {
            line,
            column,
            message,
            ..
        } => {
            assert_eq!((*line, *column), (4, 31), "{err}");
            assert!(message.contains("boolean"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!format!("{err} {err:?}").contains("s3cr3t"));
}

/// Syntax errors carry the file, line and column, and never the text; an empty file is
/// an empty kubeconfig (loader.go `LoadFromFile`); a document that is not a mapping, of
/// another kind, or naming one entry twice is refused (loader_test.go
/// `TestDuplicateClusterName`, `TestDuplicateUserName`, `TestErrorReadingFile`).
#[test]
fn malformed_and_unusual_documents() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad",
        "apiVersion: v1\nusers:\n  - name: u\n    user: {token: s3cr3t-token\ncontexts: []\n",
    );
    let err = Kubeconfig::read_from(&bad).unwrap_err();
    let KubeconfigError::Parse {
        path, line, column, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(path.as_deref(), Some(bad.as_path()));
    assert_eq!((*line, *column), (5, 9), "{err}");
    let shown = format!("{err} {err:?}");
    assert!(shown.contains(&bad.display().to_string()), "{shown}");
    assert!(shown.contains("line 5, column 9"), "{shown}");
    assert!(!shown.contains("s3cr3t"), "{shown}");

    let empty = write(dir.path(), "empty", "");
    let kc = Kubeconfig::read_from(&empty).unwrap();
    assert!(kc.clusters.is_empty() && kc.current_context.is_none());
    let bom = write(dir.path(), "bom", "\u{feff}current-context: x\n");
    assert_eq!(
        Kubeconfig::read_from(&bom)
            .unwrap()
            .current_context
            .as_deref(),
        Some("x")
    );

    let err = Kubeconfig::from_yaml("bogus value").unwrap_err();
    assert!(
        matches!(
            err,
            KubeconfigError::Parse {
                line: 1,
                column: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = Kubeconfig::from_yaml("- a\n- b\n").unwrap_err();
    assert!(matches!(err, KubeconfigError::Parse { .. }), "{err}");
    let err = Kubeconfig::from_yaml("apiVersion: v1\nkind: Pod\n").unwrap_err();
    assert!(
        matches!(err, KubeconfigError::WrongKind { field: "kind", .. }),
        "{err}"
    );
    let err = Kubeconfig::from_yaml("apiVersion: v2\n").unwrap_err();
    assert!(
        matches!(
            err,
            KubeconfigError::WrongKind {
                field: "apiVersion",
                ..
            }
        ),
        "{err}"
    );

    let err = Kubeconfig::from_yaml(
        "users:\n- name: kubeconfig-user\n  user: {tokenFile: a}\n- name: kubeconfig-user\n  user: {tokenFile: b}\n",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"duplicate name "kubeconfig-user" in users"#
    );
    let err = Kubeconfig::from_yaml(
        "clusters:\n- {name: c, cluster: {server: a}}\n- {name: c, cluster: {server: b}}\n",
    )
    .unwrap_err();
    assert!(matches!(
        err,
        KubeconfigError::DuplicateName {
            list: "clusters",
            ..
        }
    ));
    let err = Kubeconfig::from_yaml("clusters:\n- {name: c, cluster: {server: a, server: b}}\n")
        .unwrap_err();
    assert!(err.to_string().contains("duplicate field"), "{err}");

    // unknown fields anywhere are ignored (clusters from old kubectl had `api-version`)
    let kc = Kubeconfig::from_yaml(
        "future: {x: 1}\nclusters:\n- name: c\n  cluster: {api-version: v1, server: https://x, new-field: [1, 2]}\n  extra: 1\nusers:\n- name: u\n  user: {token: t, brand-new: true}\n",
    )
    .unwrap();
    assert_eq!(
        kc.cluster("c").unwrap().server.as_deref(),
        Some("https://x")
    );
}

/// Anchors and aliases copy a node; several documents in one text merge like several
/// files; an alias bomb is an error, not an out-of-memory.
#[test]
fn anchors_aliases_and_several_documents() {
    let kc = Kubeconfig::from_yaml(
        r#"
clusters:
  - name: a
    cluster: &shared {server: https://shared.test, tls-server-name: shared}
  - name: b
    cluster: *shared
users:
  - name: u1
    user:
      exec: &plugin
        command: plugin
        args: [--region, eu]
  - name: u2
    user: {exec: *plugin}
---
current-context: from-second-document
clusters:
  - name: a
    cluster: {server: https://ignored.test}
  - name: c
    cluster: {server: https://c.test}
"#,
    )
    .unwrap();
    assert_eq!(
        kc.cluster("b").unwrap().tls_server_name.as_deref(),
        Some("shared")
    );
    assert_eq!(
        kc.auth_info("u2").unwrap().exec.as_ref().unwrap().args,
        ["--region", "eu"]
    );
    assert_eq!(kc.current_context.as_deref(), Some("from-second-document"));
    assert_eq!(
        kc.cluster("a").unwrap().server.as_deref(),
        Some("https://shared.test")
    );
    assert!(kc.cluster("c").is_some());

    let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (prev, next) in ('a'..='h').zip('b'..='i') {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        bomb.push_str(&format!("{next}: &{next} [{refs}]\n"));
    }
    let err = Kubeconfig::from_yaml(&bomb).unwrap_err();
    assert!(matches!(err, KubeconfigError::Parse { .. }), "{err}");
}

/// Nothing secret in `Debug`: tokens, passwords, key data, auth-provider settings and exec
/// environment values are redacted.
#[test]
fn debug_output_shows_no_secret() {
    let kc = Kubeconfig::from_yaml(
        r#"
users:
  - name: u
    user:
      token: s3cr3t-token
      password: s3cr3t-password
      client-key-data: s3cr3t-key
      auth-provider: {name: oidc, config: {id-token: s3cr3t-id, client-secret: s3cr3t-client}}
      exec:
        command: p
        args: [--token=s3cr3t-arg]
        env: [{name: K, value: s3cr3t-env}]
"#,
    )
    .unwrap();
    let debug = format!("{kc:?} {kc:#?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    assert!(debug.contains("id-token"), "keys are shown: {debug}");
}

// ---------- kubectl ----------

fn kubectl(kubeconfig: &Path, dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("kubectl")
        .args(["config"])
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .current_dir(dir)
        .output()
        .expect("this test needs kubectl on PATH (it checks files kubectl writes)");
    assert!(
        out.status.success(),
        "kubectl config {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A kubeconfig as `kubectl config set-cluster / set-credentials / set-context /
/// use-context` writes it (embedded CA, relative paths kubectl keeps relative to the
/// file, exec plugins) loads as kubectl reads it. Needs kubectl: fails without it.
#[tokio::test]
async fn a_kubeconfig_written_by_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kube/config");
    std::fs::create_dir_all(dir.path().join("kube/pki")).unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert_pem()).unwrap();
    std::fs::write(dir.path().join("kube/pki/second-ca.pem"), cert_pem()).unwrap();
    std::fs::write(dir.path().join("kube/ci-token"), "token-from-file\n").unwrap();
    let k = |args: &[&str]| kubectl(&kc, dir.path(), args);
    k(&[
        "set-cluster",
        "demo",
        "--server=https://demo.test:6443",
        "--certificate-authority",
        ca.to_str().unwrap(),
        "--embed-certs=true",
        "--tls-server-name=kubernetes.demo",
    ]);
    k(&[
        "set-cluster",
        "second",
        "--server=https://second.test",
        "--certificate-authority=kube/pki/second-ca.pem",
        "--proxy-url=http://proxy.test:3128",
    ]);
    k(&["set-credentials", "admin", "--token=kubectl-token"]);
    k(&[
        "set-credentials",
        "basic",
        "--username=alice",
        "--password=wonderland",
    ]);
    k(&[
        "set-credentials",
        "plugin",
        "--exec-command=./bin/get-token",
        "--exec-api-version=client.authentication.k8s.io/v1",
        "--exec-arg=--cluster=demo",
        "--exec-env=MODE=ci",
        "--exec-interactive-mode=Never",
        "--exec-provide-cluster-info=true",
    ]);
    k(&[
        "set-credentials",
        "oidc",
        "--auth-provider=oidc",
        "--auth-provider-arg=id-token=kubectl-id-token",
        "--auth-provider-arg=client-id=kubegen",
    ]);
    k(&["set", "users.ci.tokenFile", "ci-token"]);
    k(&[
        "set-context",
        "demo",
        "--cluster=demo",
        "--user=admin",
        "--namespace=team",
    ]);
    k(&["set-context", "second", "--cluster=second", "--user=basic"]);
    k(&["set-context", "plugin", "--cluster=demo", "--user=plugin"]);
    k(&["set-context", "oidc", "--cluster=demo", "--user=oidc"]);
    k(&["set-context", "ci", "--cluster=second", "--user=ci"]);
    k(&["use-context", "demo"]);
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(text.contains("certificate-authority-data:"), "{text}");

    let files = [kc.clone()];
    let c = Config::from_kubeconfig_files(&files, &Default::default())
        .await
        .unwrap();
    assert_eq!(c.cluster_url.to_string(), "https://demo.test:6443/");
    assert_eq!(c.default_namespace, "team");
    assert_eq!(c.tls.server_name.as_deref(), Some("kubernetes.demo"));
    assert_eq!(c.tls.root_certs.as_ref().map(Vec::len), Some(1));
    assert_eq!(token(&c.credentials), "kubectl-token");

    let c = Config::from_kubeconfig_files(&files, &ctx("second"))
        .await
        .unwrap();
    assert_eq!(c.tls.root_certs.as_ref().map(Vec::len), Some(1), "{text}");
    assert_eq!(c.proxy_url.unwrap().to_string(), "http://proxy.test:3128/");
    assert!(matches!(&c.credentials, Credentials::Basic { username, .. } if username == "alice"));

    let c = Config::from_kubeconfig_files(&files, &ctx("plugin"))
        .await
        .unwrap();
    let Credentials::Exec(p) = &c.credentials else {
        panic!("{:?}", c.credentials)
    };
    assert!(
        Path::new(&p.command).is_absolute() && p.command.ends_with("bin/get-token"),
        "{} in {text}",
        p.command
    );
    assert_eq!(p.args, ["--cluster=demo"]);
    assert_eq!(p.env, [("MODE".to_string(), "ci".to_string())]);
    assert_eq!(p.cluster.as_ref().unwrap().server, "https://demo.test:6443");

    let c = Config::from_kubeconfig_files(&files, &ctx("oidc"))
        .await
        .unwrap();
    assert_eq!(token(&c.credentials), "kubectl-id-token");
    let c = Config::from_kubeconfig_files(&files, &ctx("ci"))
        .await
        .unwrap();
    assert!(
        matches!(&c.credentials, Credentials::TokenFile(p) if p == &dir.path().join("kube/ci-token")),
        "{:?} in {text}",
        c.credentials
    );
}

// ---------- robustness ----------

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any edit of a real kubeconfig parses or fails with a typed error; nothing panics
    /// (the `kubeconfig` fuzz target, `kubegen::fuzz::kubeconfig`, does the same at length).
    #[test]
    fn edited_kubeconfigs_never_panic(
        edits in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut text = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/kubeconfig/kubectl-written"),
        )
        .unwrap();
        for (at, byte, op) in edits {
            let at = at % (text.len() + 1);
            match op {
                0 => text.insert(at, byte),
                1 if at < text.len() => {
                    text.remove(at);
                }
                _ if at < text.len() => text[at] = byte,
                _ => {}
            }
        }
        kubegen::fuzz::kubeconfig(&text);
    }
}
